import Foundation
import HealthModel
import LedgerCore

/// The 64-bit fingerprints of Records (exact repeats, logical repeats, correlation
/// members): one pass of a mixing hash over each value's bytes.
extension ExportMapper {

    @inline(__always)
    static func mix(_ h: UInt64) -> UInt64 {
        var x = h
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        return x ^ (x >> 31)
    }

    @inline(__always)
    static func hash(_ v: Span<UInt8>, seed: UInt64) -> UInt64 {
        v.withUnsafeBufferPointer { hash($0, seed: seed) }
    }

    @inline(__always)
    static func hash(_ v: UnsafeBufferPointer<UInt8>, seed: UInt64) -> UInt64 {
        var h = seed ^ UInt64(v.count) &* 0x9E37_79B9_7F4A_7C15
        guard let p = v.baseAddress else { return mix(h) }
        var i = 0
        while i + 8 <= v.count {
            h = mix(h ^ UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self))
            i += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while i < v.count {
            tail |= UInt64(p[i]) << shift
            shift += 8
            i += 1
        }
        return mix(h ^ tail ^ 0xFF)
    }

    func hashString(_ s: String, seed: UInt64) -> UInt64 {
        var s = s
        return s.withUTF8 { Self.hash($0, seed: seed) }
    }
}
