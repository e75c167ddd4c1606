/// A streaming DEFLATE decoder (RFC 1951), written here: zip entries are inflated
/// with it, so no `unzip` or zlib is needed on the user's machine.
///
/// Memory is bounded: 256 KiB of input, a 1 MiB output window (plus the 32 KiB of
/// history DEFLATE may refer back to), and the Huffman tables. `read(into:)` hands
/// out decoded bytes as they come.
///
/// Invariants: `0 ≤ inPos ≤ inEnd ≤ inputCapacity`; `historyStart ≤ outRead ≤
/// outPos ≤ windowCapacity`; every back-reference lies within the bytes already
/// produced (checked, a corrupt stream cannot read outside the window).
public final class DeflateDecoder: ByteStream {
    private let source: ByteStream
    /// Names the stream in errors (a zip entry's name).
    private let name: String

    private static let inputCapacity = 256 << 10
    private let input: UnsafeMutablePointer<UInt8>
    private var inPos = 0, inEnd = 0
    private var sourceDone = false
    /// Zero bytes fed to the bit buffer after the source ended; if any of their bits
    /// are consumed, the stream was truncated.
    private var phantomBytes = 0

    private var bitBuffer: UInt64 = 0
    private var bitCount = 0

    private static let history = 32 << 10
    private static let windowCapacity = (1 << 20) + history
    /// Room kept free at the end of the window: the longest match plus the 8-byte
    /// over-copy of the fast copy loop.
    private static let windowMargin = 258 + 16
    private let window: UnsafeMutablePointer<UInt8>
    private var outPos = 0
    private var outRead = 0
    /// Bytes produced in total (for distance checks before the window slides).
    public private(set) var totalOut: UInt64 = 0

    private enum State { case blockHeader, stored(remaining: Int), huffman, done }
    private var state = State.blockHeader
    private var finalBlock = false

    private static let literalBits = 10, distanceBits = 8
    private static let literalCapacity = 2048, distanceCapacity = 1024
    private let literalTable: UnsafeMutablePointer<UInt32>
    private let distanceTable: UnsafeMutablePointer<UInt32>

    public init(source: ByteStream, name: String = "deflate stream") {
        self.source = source
        self.name = name
        input = .allocate(capacity: Self.inputCapacity + 8)
        window = .allocate(capacity: Self.windowCapacity + 16)
        literalTable = .allocate(capacity: Self.literalCapacity)
        distanceTable = .allocate(capacity: Self.distanceCapacity)
    }

    deinit {
        input.deallocate()
        window.deallocate()
        literalTable.deallocate()
        distanceTable.deallocate()
    }

    /// True once the final block has been decoded and every byte handed out.
    public var isFinished: Bool {
        if case .done = state { return outRead == outPos }
        return false
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while outRead == outPos {
            if case .done = state { return 0 }
            try decodeMore()
        }
        let n = min(buffer.count, outPos - outRead)
        buffer.baseAddress!.copyMemory(from: window + outRead, byteCount: n)
        outRead += n
        return n
    }

    /// Decodes until the window is nearly full or the stream ends.
    private func decodeMore() throws {
        if outPos > Self.windowCapacity - Self.windowMargin - (64 << 10) {
            // Slide: keep the last 32 KiB as history.
            let keep = min(outPos, Self.history)
            (window).update(from: window + outPos - keep, count: keep)
            outPos = keep
            outRead = keep
        }
        let limit = Self.windowCapacity - Self.windowMargin
        let before = outPos
        loop: while outPos < limit {
            switch state {
            case .done:
                break loop
            case .blockHeader:
                try readBlockHeader()
            case .stored(let remaining):
                try copyStored(remaining, limit: limit)
            case .huffman:
                try decodeHuffman(limit: limit)
            }
        }
        if phantomBytes * 8 > bitCount { throw ArchiveError.truncated(entry: name) }
        totalOut += UInt64(outPos - before)
    }

    // MARK: Bits

    @inline(__always)
    private func refill() throws {
        if inEnd - inPos >= 8 {
            let word = UInt64(littleEndian: UnsafeRawPointer(input + inPos).loadUnaligned(as: UInt64.self))
            bitBuffer |= word &<< UInt64(bitCount)
            inPos += (63 - bitCount) >> 3
            bitCount |= 56
        } else {
            try refillSlowly()
        }
    }

    private func refillSlowly() throws {
        while bitCount <= 56 {
            if inPos < inEnd {
                bitBuffer |= UInt64(input[inPos]) &<< UInt64(bitCount)
                inPos += 1
                bitCount += 8
            } else if !sourceDone {
                try fillInput()
                if inEnd - inPos >= 8 { return try refill() }
            } else {
                phantomBytes += 1
                bitCount += 8
                if phantomBytes > 16 { throw ArchiveError.truncated(entry: name) }
            }
        }
    }

    private func fillInput() throws {
        let left = inEnd - inPos
        if left > 0 { input.update(from: input + inPos, count: left) }
        inPos = 0
        inEnd = left
        while inEnd < Self.inputCapacity {
            let n = try source.read(into: UnsafeMutableRawBufferPointer(start: input + inEnd, count: Self.inputCapacity - inEnd))
            if n == 0 { sourceDone = true; break }
            inEnd += n
        }
    }

    @inline(__always)
    private func bits(_ n: Int) -> UInt32 {
        UInt32(truncatingIfNeeded: bitBuffer & ((1 &<< UInt64(n)) &- 1))
    }

    @inline(__always)
    private func consume(_ n: Int) {
        bitBuffer &>>= UInt64(n)
        bitCount -= n
    }

    private func take(_ n: Int) throws -> UInt32 {
        if bitCount < n { try refill() }
        let v = bits(n)
        consume(n)
        return v
    }

    // MARK: Blocks

    private func readBlockHeader() throws {
        finalBlock = try take(1) == 1
        switch try take(2) {
        case 0:
            consume(bitCount & 7)  // to a byte boundary
            let length = Int(try take(16))
            let complement = Int(try take(16))
            guard length ^ 0xFFFF == complement else {
                throw ArchiveError.corruptDeflate(reason: "stored block length \(length) does not match its complement")
            }
            state = .stored(remaining: length)
        case 1:
            try buildFixedTables()
            state = .huffman
        case 2:
            try buildDynamicTables()
            state = .huffman
        default:
            throw ArchiveError.corruptDeflate(reason: "reserved block type 3")
        }
        if case .stored(0) = state { state = finalBlock ? .done : .blockHeader }
    }

    private func copyStored(_ remaining: Int, limit: Int) throws {
        var left = remaining
        // Whole bytes still in the bit buffer come first.
        while left > 0 && bitCount >= 8 && outPos < limit {
            window[outPos] = UInt8(truncatingIfNeeded: bitBuffer)
            outPos += 1
            consume(8)
            left -= 1
        }
        if left > 0 && bitCount == 0 {
            // Drop garbage look-ahead bits: the buffer is empty.
            bitBuffer = 0
            while left > 0 && outPos < limit {
                if inPos == inEnd {
                    if sourceDone { throw ArchiveError.truncated(entry: name) }
                    try fillInput()
                    if inPos == inEnd { throw ArchiveError.truncated(entry: name) }
                }
                let n = min(left, inEnd - inPos, limit - outPos)
                (window + outPos).update(from: input + inPos, count: n)
                outPos += n
                inPos += n
                left -= n
            }
        }
        state = left > 0 ? .stored(remaining: left) : (finalBlock ? .done : .blockHeader)
    }

    private static let lengthBase: [UInt32] = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59,
                                               67, 83, 99, 115, 131, 163, 195, 227, 258]
    private static let lengthExtra: [UInt32] = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4,
                                                5, 5, 5, 5, 0]
    private static let distanceBase: [UInt32] = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385,
                                                 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577]
    private static let distanceExtra: [UInt32] = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9,
                                                  10, 10, 11, 11, 12, 12, 13, 13]

    private static func literalSymbol(_ s: Int) -> HuffmanTable.Symbol {
        switch s {
        case 0..<256: HuffmanTable.Symbol(kind: .literal, extraBits: 0, value: UInt32(s))
        case 256: HuffmanTable.Symbol(kind: .endOfBlock, extraBits: 0, value: 0)
        case 257...285: HuffmanTable.Symbol(kind: .length, extraBits: lengthExtra[s - 257], value: lengthBase[s - 257])
        default: HuffmanTable.Symbol(kind: .invalid, extraBits: 0, value: 0)
        }
    }

    private static func distanceSymbol(_ s: Int) -> HuffmanTable.Symbol {
        s < 30 ? HuffmanTable.Symbol(kind: .distance, extraBits: distanceExtra[s], value: distanceBase[s])
               : HuffmanTable.Symbol(kind: .invalid, extraBits: 0, value: 0)
    }

    private func buildTables(_ lengths: [UInt8], literals: Int, distances: Int) throws {
        try lengths.withUnsafeBufferPointer { all throws in
            try HuffmanTable.build(lengths: UnsafeBufferPointer(rebasing: all[0..<literals]), primaryBits: Self.literalBits,
                                   into: literalTable, capacity: Self.literalCapacity, symbol: Self.literalSymbol)
            try HuffmanTable.build(lengths: UnsafeBufferPointer(rebasing: all[literals..<(literals + distances)]),
                                   primaryBits: Self.distanceBits, into: distanceTable, capacity: Self.distanceCapacity,
                                   symbol: Self.distanceSymbol)
        }
    }

    private func buildFixedTables() throws {
        var lengths = [UInt8](repeating: 8, count: 288 + 32)
        for i in 144..<256 { lengths[i] = 9 }
        for i in 256..<280 { lengths[i] = 7 }
        for i in 288..<320 { lengths[i] = 5 }
        try buildTables(lengths, literals: 288, distances: 32)
    }

    private static let codeLengthOrder = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

    private func buildDynamicTables() throws {
        let literals = Int(try take(5)) + 257
        let distances = Int(try take(5)) + 1
        let codeLengthCodes = Int(try take(4)) + 4
        guard literals <= 286, distances <= 30 else {
            throw ArchiveError.corruptDeflate(reason: "\(literals) literal/length or \(distances) distance codes")
        }
        var codeLengthLengths = [UInt8](repeating: 0, count: 19)
        for i in 0..<codeLengthCodes { codeLengthLengths[Self.codeLengthOrder[i]] = UInt8(try take(3)) }
        var codeLengthTable = [UInt32](repeating: 0, count: 128)
        try codeLengthLengths.withUnsafeBufferPointer { lens throws in
            try codeLengthTable.withUnsafeMutableBufferPointer { t throws in
                try HuffmanTable.build(lengths: lens, primaryBits: 7, into: t.baseAddress!, capacity: 128) { s in
                    HuffmanTable.Symbol(kind: .literal, extraBits: 0, value: UInt32(s))
                }
            }
        }
        var lengths = [UInt8](repeating: 0, count: literals + distances)
        var i = 0
        while i < lengths.count {
            if bitCount < 16 { try refill() }
            let e = codeLengthTable[Int(bits(7))]
            guard (e >> 5) & 7 == HuffmanTable.EntryKind.literal.rawValue else {
                throw ArchiveError.corruptDeflate(reason: "invalid code-length code")
            }
            consume(Int(e & 31))
            let symbol = Int(e >> 12)
            switch symbol {
            case 0...15:
                lengths[i] = UInt8(symbol)
                i += 1
            case 16:
                guard i > 0 else { throw ArchiveError.corruptDeflate(reason: "repeat with no previous length") }
                let n = 3 + Int(try take(2))
                guard i + n <= lengths.count else { throw ArchiveError.corruptDeflate(reason: "code lengths overflow") }
                for _ in 0..<n { lengths[i] = lengths[i - 1]; i += 1 }
            default:
                let n = symbol == 17 ? 3 + Int(try take(3)) : 11 + Int(try take(7))
                guard i + n <= lengths.count else { throw ArchiveError.corruptDeflate(reason: "code lengths overflow") }
                i += n  // already zero
            }
        }
        guard lengths[256] != 0 else { throw ArchiveError.corruptDeflate(reason: "no end-of-block code") }
        try buildTables(lengths, literals: literals, distances: distances)
    }

    // MARK: The hot loop

    private func decodeHuffman(limit: Int) throws {
        let lit = literalTable, dist = distanceTable
        let litMask = UInt64((1 << Self.literalBits) - 1), distMask = UInt64((1 << Self.distanceBits) - 1)
        let out = window
        var pos = outPos
        defer { outPos = pos }
        while pos < limit {
            try refill()  // ≥ 56 bits: enough for a length, its extra bits, a distance and its extra bits
            var e = lit[Int(bitBuffer & litMask)]
            if (e >> 5) & 7 == HuffmanTable.EntryKind.subtable.rawValue {
                consume(Self.literalBits)
                e = lit[Int(e >> 12) + Int(bits(Int((e >> 8) & 15)))]
            }
            consume(Int(e & 31))
            switch (e >> 5) & 7 {
            case HuffmanTable.EntryKind.literal.rawValue:
                out[pos] = UInt8(truncatingIfNeeded: e >> 12)
                pos += 1
            case HuffmanTable.EntryKind.length.rawValue:
                let extra = Int((e >> 8) & 15)
                let length = Int(e >> 12) + Int(bits(extra))
                consume(extra)
                var d = dist[Int(bitBuffer & distMask)]
                if (d >> 5) & 7 == HuffmanTable.EntryKind.subtable.rawValue {
                    consume(Self.distanceBits)
                    d = dist[Int(d >> 12) + Int(bits(Int((d >> 8) & 15)))]
                }
                guard (d >> 5) & 7 == HuffmanTable.EntryKind.distance.rawValue else {
                    throw ArchiveError.corruptDeflate(reason: "invalid distance code")
                }
                consume(Int(d & 31))
                let dExtra = Int((d >> 8) & 15)
                let distance = Int(d >> 12) + Int(bits(dExtra))
                consume(dExtra)
                guard distance <= pos else {
                    throw ArchiveError.corruptDeflate(reason: "distance \(distance) reaches before the start of the data")
                }
                Self.copyMatch(out + pos, distance: distance, length: length)
                pos += length
            case HuffmanTable.EntryKind.endOfBlock.rawValue:
                state = finalBlock ? .done : .blockHeader
                return
            default:
                throw ArchiveError.corruptDeflate(reason: "invalid literal/length code")
            }
        }
    }

    /// Copies `length` bytes from `distance` back; overlapping copies repeat the
    /// pattern, as DEFLATE requires. May write up to 7 bytes past the end (the window
    /// keeps a margin for that).
    @inline(__always)
    private static func copyMatch(_ dst: UnsafeMutablePointer<UInt8>, distance: Int, length: Int) {
        let src = dst - distance
        if distance >= 8 {
            var i = 0
            while i < length {
                (UnsafeMutableRawPointer(dst + i)).storeBytes(of: UnsafeRawPointer(src + i).loadUnaligned(as: UInt64.self),
                                                              as: UInt64.self)
                i += 8
            }
        } else if distance == 1 {
            dst.update(repeating: src[0], count: length)
        } else {
            for i in 0..<length { dst[i] = src[i] }
        }
    }
}
