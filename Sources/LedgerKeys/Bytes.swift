/// Little-endian integers appended to a byte array.
enum ByteWriter {
    static func append(_ value: UInt16, to out: inout [UInt8]) {
        out.append(UInt8(truncatingIfNeeded: value))
        out.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    static func append(_ value: UInt32, to out: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    static func append(_ value: UInt64, to out: inout [UInt8]) {
        for shift in stride(from: 0, to: 64, by: 8) { out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}

/// Reads little-endian integers from untrusted bytes, front to back.
///
/// Invariant: `offset <= bytes.count`. Every read checks that its bytes are there first
/// and returns nil when they are not: nothing here traps on short input.
struct ByteCursor {
    let bytes: [UInt8]
    private(set) var offset: Int

    init(_ bytes: [UInt8], offset: Int = 0) {
        precondition(offset >= 0 && offset <= bytes.count)
        self.bytes = bytes
        self.offset = offset
    }

    var remaining: Int { bytes.count - offset }

    mutating func u8() -> UInt8? {
        guard remaining >= 1 else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u16() -> UInt16? {
        guard remaining >= 2 else { return nil }
        defer { offset += 2 }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    mutating func u32() -> UInt32? {
        guard remaining >= 4 else { return nil }
        var value: UInt32 = 0
        for i in 0..<4 { value |= UInt32(bytes[offset + i]) << UInt32(8 * i) }
        offset += 4
        return value
    }

    mutating func u64() -> UInt64? {
        guard remaining >= 8 else { return nil }
        defer { offset += 8 }
        return Self.word64(bytes, at: offset)
    }

    mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, remaining >= count else { return nil }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    /// Bytes `offset..<offset+8` as a little-endian word; the caller has checked them.
    static func word64(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<8 { value |= UInt64(bytes[offset + i]) << UInt64(8 * i) }
        return value
    }
}

/// Overwrites an array's bytes with zeros before it is released: a best effort to keep
/// key bytes from lingering in freed memory (Swift promises nothing about copies made
/// on the way, so this narrows the window; it is not an erasure guarantee).
func wipe(_ bytes: inout [UInt8]) {
    for i in bytes.indices { bytes[i] = 0 }
}
