/// A canonical Huffman code as a two-level lookup table (RFC 1951 §3.2.2), for
/// `DeflateDecoder`.
///
/// DEFLATE sends codes most-significant bit first inside a stream read least
/// significant bit first, so the table is indexed by the *bit-reversed* code: the
/// next `primaryBits` bits of the stream pick a primary entry; codes longer than that
/// continue in a subtable picked by the following bits.
///
/// Entry layout (UInt32): bits 0–4 the bits to consume, 5–7 the `EntryKind`, 8–11
/// extra bits (for a length or distance; for a subtable pointer, its index bits),
/// 12–31 the value (literal byte, base length or distance, or subtable offset).
struct HuffmanTable {
    enum EntryKind: UInt32 {
        case literal = 0, length = 1, endOfBlock = 2, subtable = 3, distance = 4, invalid = 5
    }

    /// What a symbol decodes to, before its entry is placed in the table.
    struct Symbol {
        var kind: EntryKind
        var extraBits: UInt32
        var value: UInt32
    }

    static func entry(kind: EntryKind, bits: UInt32, extra: UInt32, value: UInt32) -> UInt32 {
        bits | kind.rawValue << 5 | extra << 8 | value << 12
    }

    static let invalidEntry = entry(kind: .invalid, bits: 0, extra: 0, value: 0)

    /// Builds the table for code lengths `lengths` (0 = symbol unused) into `table`,
    /// which must hold `capacity` entries. Throws for an over-subscribed code, or an
    /// incomplete one with more than one code (zlib's rules; a single code of any
    /// length and an empty code are allowed, and decoding an unused code fails).
    static func build(lengths: UnsafeBufferPointer<UInt8>, primaryBits: Int, into table: UnsafeMutablePointer<UInt32>,
                      capacity: Int, symbol: (Int) -> Symbol) throws(ArchiveError) {
        var count = [Int](repeating: 0, count: 16)
        for l in lengths { count[Int(l)] += 1 }
        count[0] = 0
        var maxLength = 15
        while maxLength > 0 && count[maxLength] == 0 { maxLength -= 1 }
        let primarySize = 1 << primaryBits
        precondition(capacity >= primarySize)
        for i in 0..<primarySize { table[i] = invalidEntry }
        if maxLength == 0 { return }  // no codes: every lookup is invalid

        var left = 1
        for length in 1...15 {
            left <<= 1
            left -= count[length]
            if left < 0 { throw ArchiveError.corruptDeflate(reason: "over-subscribed Huffman code") }
        }
        let used = count[1...].reduce(0, +)
        if left > 0 && used != 1 { throw ArchiveError.corruptDeflate(reason: "incomplete Huffman code") }

        // Canonical codes: the first code of each length, then symbols in order.
        var nextCode = [Int](repeating: 0, count: 16)
        var code = 0
        for length in 1...15 {
            code = (code + count[length - 1]) << 1
            nextCode[length] = code
        }
        // Symbols sorted by (length, symbol): canonical order.
        var offsets = [Int](repeating: 0, count: 16)
        for length in 1..<15 { offsets[length + 1] = offsets[length] + count[length] }
        var sorted = [Int](repeating: 0, count: used)
        for (s, l) in lengths.enumerated() where l > 0 {
            sorted[offsets[Int(l)]] = s
            offsets[Int(l)] += 1
        }

        var remaining = count
        let primaryMask = primarySize - 1
        var next = primarySize           // where the next subtable goes
        var currentPrefix = -1
        var subOffset = 0, subBits = 0
        for s in sorted {
            let length = Int(lengths[s])
            let c = nextCode[length]
            nextCode[length] += 1
            let reversed = reverse(c, length)
            let sym = symbol(s)
            if length <= primaryBits {
                let e = entry(kind: sym.kind, bits: UInt32(length), extra: sym.extraBits, value: sym.value)
                var i = reversed
                while i < primarySize { table[i] = e; i += 1 << length }
            } else {
                let prefix = reversed & primaryMask
                if prefix != currentPrefix {
                    // How many index bits this subtable needs to hold every remaining
                    // code with this prefix (zlib's look-ahead over remaining counts).
                    var bits = length - primaryBits
                    var room = 1 << bits
                    while bits + primaryBits < maxLength {
                        room -= remaining[bits + primaryBits]
                        if room <= 0 { break }
                        bits += 1
                        room <<= 1
                    }
                    guard next + (1 << bits) <= capacity else {
                        throw ArchiveError.corruptDeflate(reason: "Huffman table too large")
                    }
                    subOffset = next
                    subBits = bits
                    next += 1 << bits
                    for i in subOffset..<next { table[i] = invalidEntry }
                    table[prefix] = entry(kind: .subtable, bits: UInt32(primaryBits), extra: UInt32(bits), value: UInt32(subOffset))
                    currentPrefix = prefix
                }
                let e = entry(kind: sym.kind, bits: UInt32(length - primaryBits), extra: sym.extraBits, value: sym.value)
                var i = reversed >> primaryBits
                while i < 1 << subBits { table[subOffset + i] = e; i += 1 << (length - primaryBits) }
            }
            remaining[length] -= 1
        }
    }

    @inline(__always)
    static func reverse(_ code: Int, _ length: Int) -> Int {
        var c = code, r = 0
        for _ in 0..<length {
            r = (r << 1) | (c & 1)
            c >>= 1
        }
        return r
    }
}
