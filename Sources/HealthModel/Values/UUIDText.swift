import Foundation

/// A UUID's text as `UUID.uuidString` writes it — 8-4-4-4-12 hexadecimal digits,
/// either case — read byte by byte. Foundation's `UUID(uuidString:)` on Linux
/// parses each pair of digits with `sscanf` (a tenth of `ingest`'s time) and so
/// also takes a sign, a space or `0x` inside a group (`+0000007-…` is accepted
/// there); this reader takes hexadecimal digits and the four hyphens only. Every UUID
/// the project reads from text (lines, arguments, requests, predicates) goes through it.
package enum UUIDText {
    /// The UUID `text` spells, or nil when it is not exactly 36 characters of
    /// hexadecimal digits with hyphens at 8, 13, 18 and 23.
    package static func parse(_ text: String) -> UUID? {
        var text = text
        return text.withUTF8 { unsafe parse(utf8: $0) }
    }

    /// `parse(_:)` of a text given as its UTF-8 bytes (ingest's flat lines give their
    /// UUIDs in place, no `String` made).
    package static func parse(utf8 bytes: ArraySlice<UInt8>) -> UUID? {
        unsafe bytes.withUnsafeBufferPointer { unsafe parse(utf8: $0) }
    }

    /// The one reading of a UUID's bytes.
    private static func parse(utf8: UnsafeBufferPointer<UInt8>) -> UUID? {
        // unsafe: the caller's bytes, read in place during the call, at offsets below 36.
        let halves = { () -> (UInt64, UInt64)? in
            guard utf8.count == 36 else { return nil }
            var high: UInt64 = 0, low: UInt64 = 0
            var at = 0
            for n in 0..<16 {
                if at == 8 || at == 13 || at == 18 || at == 23 {
                    guard unsafe utf8[at] == UInt8(ascii: "-") else { return nil }
                    at += 1
                }
                guard let a = digit(unsafe utf8[at]), let b = digit(unsafe utf8[at + 1]) else { return nil }
                let byte = UInt64(a << 4 | b)
                if n < 8 { high = high << 8 | byte } else { low = low << 8 | byte }
                at += 2
            }
            return (high, low)
        }()
        guard let (h, l) = halves else { return nil }
        func byte(_ v: UInt64, _ i: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: v >> (56 - 8 * i)) }
        return UUID(uuid: (byte(h, 0), byte(h, 1), byte(h, 2), byte(h, 3), byte(h, 4), byte(h, 5), byte(h, 6), byte(h, 7),
                           byte(l, 0), byte(l, 1), byte(l, 2), byte(l, 3), byte(l, 4), byte(l, 5), byte(l, 6), byte(l, 7)))
    }

    @inline(__always)
    private static func digit(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
