/// Test vectors as the RFC prints them: hex digits, with spaces, colons and line
/// breaks between them ignored.
struct HexError: Error, CustomStringConvertible {
    let description: String
}

/// The bytes of `text`'s hex digits, two to a byte.
/// - Throws: on any other character, or an odd number of digits.
func hex(_ text: String) throws -> [UInt8] {
    var out: [UInt8] = []
    var high: UInt8?
    for c in text.utf8 {
        let digit: UInt8
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c - UInt8(ascii: "A") + 10
        case UInt8(ascii: " "), UInt8(ascii: ":"), UInt8(ascii: "\n"): continue
        default: throw HexError(description: "not a hex digit: \(Unicode.Scalar(c))")
        }
        if let h = high {
            out.append(h << 4 | digit)
            high = nil
        } else {
            high = digit
        }
    }
    guard high == nil else { throw HexError(description: "an odd number of hex digits") }
    return out
}

/// 32-bit words written as the RFC prints a ChaCha state: hex numbers between spaces
/// and line breaks.
func words(_ text: String) throws -> [UInt32] {
    try text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map { word in
        guard word.count == 8, let value = UInt32(word, radix: 16) else { throw HexError(description: "not a word: \(word)") }
        return value
    }
}

/// `bytes` in lower-case hex, for messages.
func hexString(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
}

/// A small seeded generator (SplitMix64), so that a failing case can be run again.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }
}
