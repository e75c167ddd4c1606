import Foundation
import Testing
@testable import LedgerCore
import TestSupport

/// The decoder's fast paths give exactly what the general code they replace gives
/// (events/FORMAT.md V4: one definition of a valid event).
struct DecodeFastPathTests {
    /// `ByteReader.utf8String` against the standard library's validating initializer,
    /// over every string of one and two bytes, edge cases of three and four, and
    /// random bytes mixed with ASCII.
    @Test func utf8StringAcceptsExactlyWhatTheStandardLibraryValidates() {
        func check(_ bytes: [UInt8]) {
            let expected = String(validating: bytes, as: UTF8.self)
            let found = bytes.withUnsafeBytes { ByteReader.utf8String($0) }
            #expect(found == expected, "\(bytes)")
            if let found { #expect(Array(found.utf8) == bytes) }
        }
        check([])
        for a in 0...255 {
            check([UInt8(a)])
            for b in 0...255 { check([UInt8(a), UInt8(b)]) }
        }
        let edges: [[UInt8]] = [
            [0xE0, 0x80, 0x80], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xED, 0xA0, 0x80], [0xEF, 0xBF, 0xBF],
            [0xF0, 0x8F, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80],
            [0xF5, 0x80, 0x80, 0x80], [0xC0, 0xAF], [0xE2, 0x82], [0xE2, 0x82, 0xAC], Array("café ☕️ 𝄞".utf8),
            Array("0123456789abcdef".utf8) + [0x80], Array("0123456789abcdef".utf8) + [0xC3, 0xA9],
        ]
        for e in edges { check(e) }
        var rng = SeededRandom(seed: 0x5EED)
        for _ in 0..<20_000 {
            let n = Int(rng.next() % 40)
            check((0..<n).map { _ in
                let r = rng.next()
                return r & 3 == 0 ? UInt8(truncatingIfNeeded: r >> 8) : UInt8(truncatingIfNeeded: r >> 8) & 0x7F
            })
        }
    }

    /// A string field that is not UTF-8 is refused with its exact error.
    @Test func aStringThatIsNotUTF8IsMalformedAtItsFirstByte() {
        let bytes: [UInt8] = [0x01, 0x41, 0x03, 0x61, 0xC3, 0x28]
        let (first, second) = bytes.withUnsafeBytes { raw -> (String?, EventDecodingError?) in
            var r = ByteReader(raw)
            let first = try? r.string()
            do throws(EventDecodingError) {
                _ = try r.string()
                return (first, nil)
            } catch {
                return (first, error)
            }
        }
        #expect(first == "A")
        #expect(second == .malformed(offset: 3, reason: "string is not UTF-8"))
    }
}
