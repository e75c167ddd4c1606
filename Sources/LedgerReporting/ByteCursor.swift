import Foundation
import HealthModel

/// Writes text forward from a pointer into a buffer its owner sized: one definition of
/// each field's text for the sample writers (a line of `PlainSampleLine`, and the
/// UUIDs, whole numbers and dates `SampleJSONWriter` writes alone).
@unsafe struct ByteCursor {
    var at: UnsafeMutablePointer<UInt8>

    init(_ at: UnsafeMutablePointer<UInt8>) { unsafe self.at = at }

    @inline(__always)
    mutating func byte(_ b: UInt8) {
        unsafe at.pointee = b
        unsafe at += 1
    }

    /// Copies `bytes`: up to 32 of them with two (overlapping) loads and stores of
    /// the widest size that fits, not a call to `memmove` — a line is a dozen copies
    /// of 4 to 30 bytes, and the calls were a sixth of the writing thread.
    @inline(__always)
    mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        let n = bytes.count
        let from = unsafe UnsafeRawPointer(base), to = unsafe UnsafeMutableRawPointer(at)
        if n >= 16 && n <= 32 {
            unsafe to.storeBytes(of: from.loadUnaligned(as: SIMD16<UInt8>.self), as: SIMD16<UInt8>.self)
            unsafe (to + (n - 16)).storeBytes(of: (from + (n - 16)).loadUnaligned(as: SIMD16<UInt8>.self),
                                              as: SIMD16<UInt8>.self)
        } else if n >= 8 && n < 16 {
            unsafe to.storeBytes(of: from.loadUnaligned(as: UInt64.self), as: UInt64.self)
            unsafe (to + (n - 8)).storeBytes(of: (from + (n - 8)).loadUnaligned(as: UInt64.self), as: UInt64.self)
        } else if n >= 4 && n < 8 {
            unsafe to.storeBytes(of: from.loadUnaligned(as: UInt32.self), as: UInt32.self)
            unsafe (to + (n - 4)).storeBytes(of: (from + (n - 4)).loadUnaligned(as: UInt32.self), as: UInt32.self)
        } else if n < 4 {
            for i in 0..<n { unsafe at[i] = base[i] }
        } else {
            unsafe at.update(from: base, count: n)
        }
        unsafe at += n
    }

    @inline(__always)
    mutating func put(_ text: StaticString) {
        text.withUTF8Buffer { unsafe put($0) }
    }

    @inline(__always)
    mutating func put(_ bytes: [UInt8]) {
        unsafe bytes.withUnsafeBufferPointer { unsafe put($0) }
    }

    /// `String(v)`'s digits.
    mutating func integer(_ v: Int64) {
        if v < 0 { unsafe byte(UInt8(ascii: "-")) }
        let m = v.magnitude
        var width = 1
        var scale: UInt64 = 10
        while width < 20, m >= scale {
            width += 1
            scale = scale &* 10
        }
        unsafe digits(m, width)
    }

    /// The UUID's 36 upper-case characters, as `UUID.uuidString`.
    mutating func uuid(_ u: UUID) {
        unsafe withUnsafeBytes(of: u.uuid) { b in
            for i in 0..<16 {
                if i == 4 || i == 6 || i == 8 || i == 10 { unsafe byte(UInt8(ascii: "-")) }
                let v = unsafe b[i]
                unsafe byte(Self.hex(v >> 4))
                unsafe byte(Self.hex(v & 15))
            }
        }
    }

    @inline(__always)
    private static func hex(_ v: UInt8) -> UInt8 {
        v < 10 ? UInt8(ascii: "0") + v : UInt8(ascii: "A") - 10 + v
    }

    /// `"YYYY-MM-DDTHH:MM:SSZ"` with its quotes, for whole seconds since 1970 in
    /// years 1…9999.
    mutating func date(_ total: Int64) {
        let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
        let second = Int(total - days * 86_400)
        let civil = CivilDate.fromDaysSinceEpoch(Int(days))
        unsafe byte(UInt8(ascii: "\""))
        unsafe digits(UInt64(civil.year), 4)
        unsafe byte(UInt8(ascii: "-"))
        unsafe digits(UInt64(civil.month), 2)
        unsafe byte(UInt8(ascii: "-"))
        unsafe digits(UInt64(civil.day), 2)
        unsafe byte(UInt8(ascii: "T"))
        unsafe digits(UInt64(second / 3600), 2)
        unsafe byte(UInt8(ascii: ":"))
        unsafe digits(UInt64(second / 60 % 60), 2)
        unsafe byte(UInt8(ascii: ":"))
        unsafe digits(UInt64(second % 60), 2)
        unsafe byte(UInt8(ascii: "Z"))
        unsafe byte(UInt8(ascii: "\""))
    }

    /// `value` (below 10^width) as `width` decimal digits.
    @inline(__always)
    private mutating func digits(_ value: UInt64, _ width: Int) {
        var v = value
        var i = width - 1
        while i >= 0 {
            unsafe at[i] = UInt8(ascii: "0") + UInt8(v % 10)
            v /= 10
            i -= 1
        }
        unsafe at += width
    }
}
