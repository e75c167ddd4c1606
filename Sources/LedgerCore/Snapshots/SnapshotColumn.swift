import Foundation
import HealthModel
import LedgerLog
import LedgerChecksums

/// A column written as a snapshot section in blocks, each with its own CRC32C, so
/// that a loader checks the blocks on every core at once — or, mapping the column,
/// each block the first time it is read (rule S8).
///
/// Section payload: blockSize u32 · blockCount u32 · blockCRC u32 × blockCount ·
/// zero padding to a multiple of 8 · the array's bytes. The section header's CRC
/// covers everything before the array's bytes.
struct ColumnSource: Sendable {
    /// Lends the column's bytes to `body` (never beyond it).
    private let lend: @Sendable ((UnsafeRawBufferPointer) throws -> Void) throws -> Void

    static let blockSize = 4 << 20

    init<T: BitwiseCopyable & Sendable>(_ column: Column<T>) {
        lend = { body in try column.withUnsafeBufferPointer { try body(UnsafeRawBufferPointer($0)) } }
    }

    init<T: BitwiseCopyable & Sendable>(_ array: [T]) { self.init(Column(array)) }

    static func prefixLength(blocks: Int) -> Int { (8 + 4 * blocks + 7) / 8 * 8 }

    /// Writes the section (header and payload) at `offset`; returns the offset after it.
    func write(id: UInt32, to file: any LogFile, at start: UInt64) throws -> UInt64 {
        var end = start
        try lend { bytes in end = try Self.write(bytes, id: id, to: file, at: start) }
        return end
    }

    private static func write(_ bytes: UnsafeRawBufferPointer, id: UInt32, to file: any LogFile, at start: UInt64) throws -> UInt64 {
        let blocks = (bytes.count + Self.blockSize - 1) / Self.blockSize
        var crcs = [UInt32](repeating: 0, count: blocks)
        let source = SharedBytes(bytes)
        crcs.withUnsafeMutableBytes { out in
            let target = DisjointWrites(out)
            DispatchQueue.concurrentPerform(iterations: blocks) { i in
                let lower = i * Self.blockSize, upper = min(source.bytes.count, lower + Self.blockSize)
                let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: source.bytes[lower..<upper]))
                target.buffer.storeBytes(of: crc, toByteOffset: 4 * i, as: UInt32.self)
            }
        }
        var prefix = [UInt8](repeating: 0, count: Self.prefixLength(blocks: blocks))
        prefix.withUnsafeMutableBytes { p in
            p.storeBytes(of: UInt32(Self.blockSize).littleEndian, toByteOffset: 0, as: UInt32.self)
            p.storeBytes(of: UInt32(blocks).littleEndian, toByteOffset: 4, as: UInt32.self)
            for (i, crc) in crcs.enumerated() { p.storeBytes(of: crc.littleEndian, toByteOffset: 8 + 4 * i, as: UInt32.self) }
        }
        let length = prefix.count + bytes.count
        var header = [UInt8](repeating: 0, count: 24)
        header.withUnsafeMutableBytes { b in
            b.storeBytes(of: id.littleEndian, toByteOffset: 0, as: UInt32.self)
            b.storeBytes(of: UInt64(length).littleEndian, toByteOffset: 8, as: UInt64.self)
            b.storeBytes(of: CRC32C.checksum(prefix).littleEndian, toByteOffset: 16, as: UInt32.self)
        }
        var offset = start
        try header.withUnsafeBytes { try file.write($0, at: offset) }
        offset += 24
        try prefix.withUnsafeBytes { try file.write($0, at: offset) }
        offset += UInt64(prefix.count)
        if bytes.count > 0 { try file.write(bytes, at: offset) }
        offset += UInt64(bytes.count)
        let padding = (8 - length % 8) % 8
        if padding > 0 {
            try [UInt8](repeating: 0, count: padding).withUnsafeBytes { try file.write($0, at: offset) }
            offset += UInt64(padding)
        }
        return offset
    }

    /// A column section's prefix, read and checked against `crc`: the block size, the
    /// blocks' CRCs and where the array's bytes are. Nil when it does not hold.
    struct Layout {
        let blockSize: Int
        let crcs: [UInt32]
        let dataOffset: UInt64
        let dataLength: Int
    }

    static func layout<T>(_: T.Type, of file: any LogFile, at offset: UInt64, length: Int, crc: UInt32) throws -> Layout? {
        var head = [UInt8](repeating: 0, count: 8)
        guard length >= 8, try head.withUnsafeMutableBytes({ try file.read(into: $0, at: offset) }) == 8 else { return nil }
        let (blockSize, blocks) = head.withUnsafeBytes {
            (Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 0, as: UInt32.self))),
             Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 4, as: UInt32.self))))
        }
        let prefixLength = Self.prefixLength(blocks: blocks)
        // A block holds an element at least, and its blocks start on elements' alignment
        // (4 MiB as written): an element then spans at most two blocks, which is all a
        // reader checks (`MappedColumnBytes.element`, `ColumnBlockReader`), and a
        // timeline's slot numbers never straddle two (the value check sees each whole).
        guard blockSize >= MemoryLayout<T>.stride, blockSize % MemoryLayout<T>.alignment == 0, prefixLength <= length else { return nil }
        var prefix = [UInt8](repeating: 0, count: prefixLength)
        guard try prefix.withUnsafeMutableBytes({ try file.read(into: $0, at: offset) }) == prefixLength,
              CRC32C.checksum(prefix) == crc else { return nil }
        let dataLength = length - prefixLength
        guard dataLength % MemoryLayout<T>.stride == 0, blocks == (dataLength + blockSize - 1) / blockSize else { return nil }
        let crcs = prefix.withUnsafeBytes { p in (0..<blocks).map { UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 8 + 4 * $0, as: UInt32.self)) } }
        return Layout(blockSize: blockSize, crcs: crcs, dataOffset: offset + UInt64(prefixLength), dataLength: dataLength)
    }

    /// Reads a column section's array (payload at `offset`, `length` bytes), checking
    /// the prefix against `crc` and every block against its own CRC, blocks in
    /// parallel. Nil when a checksum fails. `spare`: extra capacity to reserve past the
    /// elements read (virtual memory until used), so that a ledger opened to write
    /// appends without first copying the whole column into a larger buffer.
    static func read<T: BitwiseCopyable & Sendable>(_: T.Type, from file: any LogFile, at offset: UInt64, length: Int, crc: UInt32,
                                                   spare: (Int) -> Int = { _ in 0 }) throws -> Column<T>? {
        guard let layout = try layout(T.self, of: file, at: offset, length: length, crc: crc) else { return nil }
        let blockSize = layout.blockSize, dataLength = layout.dataLength, dataOffset = layout.dataOffset, crcs = layout.crcs
        let count = dataLength / MemoryLayout<T>.stride
        let failures = Locked(0)
        // At least one element of capacity: an empty Array(unsafeUninitializedCapacity:)
        // writes its count into the standard library's shared empty-array storage, which
        // ThreadSanitizer reports as a race with every other empty array read at the time.
        let array = [T](unsafeUninitializedCapacity: max(1, count + spare(count))) { buffer, initialized in
            HugePages.advise(UnsafeMutableRawBufferPointer(buffer))
            let raw = DisjointWrites(UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[0..<count * MemoryLayout<T>.stride]))
            DispatchQueue.concurrentPerform(iterations: crcs.count) { i in
                let lower = i * blockSize, upper = min(dataLength, lower + blockSize)
                let block = UnsafeMutableRawBufferPointer(rebasing: raw.buffer[lower..<upper])
                let got = (try? file.read(into: block, at: dataOffset + UInt64(lower))) ?? -1
                if got != block.count || CRC32C.checksum(UnsafeRawBufferPointer(block)) != crcs[i] {
                    failures.withLock { $0 += 1 }
                }
            }
            // Bytes of a trivial type: every element is initialized by the reads (or the
            // array is dropped below when a read failed).
            initialized = count
        }
        return failures.withLock { $0 } == 0 ? Column(array) : nil
    }

    /// A column section mapped, every block read and checked now as `read` checks it
    /// (into the column's private copy, on every core, against its CRC): nil exactly
    /// when `read` gives nil (the values are checked by the caller, as after `read`).
    static func mapCheckingWhole<T: BitwiseCopyable & Sendable>(_: T.Type, from file: any LogFile, at offset: UInt64,
                                                               length: Int, crc: UInt32, section: UInt32) throws -> Column<T>? {
        guard let layout = try layout(T.self, of: file, at: offset, length: length, crc: crc) else { return nil }
        let bytes = try MappedColumnBytes(file: file, offset: layout.dataOffset, byteCount: layout.dataLength,
                                          blockSize: layout.blockSize, crcs: layout.crcs, section: section,
                                          damage: SnapshotDamage(file: ""))
        guard bytes.settle(bytes: 0, layout.dataLength) else { return nil }
        return Column(mapped: bytes, count: layout.dataLength / MemoryLayout<T>.stride)
    }

    /// A column section mapped, not read (rule S8): its prefix is checked now, each
    /// block of its array copied and checked when first read (`valid`: the checks
    /// beyond the CRC a block's values need). Nil when the prefix does not hold.
    static func map<T: BitwiseCopyable & Sendable>(_: T.Type, from file: any LogFile, at offset: UInt64,
                                                  length: Int, crc: UInt32, section: UInt32, damage: SnapshotDamage,
                                                  valid: (@Sendable (UnsafeRawBufferPointer) -> Bool)? = nil) throws -> Column<T>? {
        guard let layout = try layout(T.self, of: file, at: offset, length: length, crc: crc) else { return nil }
        let bytes = try MappedColumnBytes(file: file, offset: layout.dataOffset, byteCount: layout.dataLength,
                                          blockSize: layout.blockSize, crcs: layout.crcs, section: section, damage: damage,
                                          valid: valid)
        return Column(mapped: bytes, count: layout.dataLength / MemoryLayout<T>.stride)
    }
}

/// Read-only bytes shared by parallel workers while their owner lends them.
struct SharedBytes: @unchecked Sendable {
    // @unchecked: only read, and only inside the lending closure.
    let bytes: UnsafeRawBufferPointer
    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }
}

/// A buffer that parallel workers write in disjoint ranges (one block each), so
/// sharing it across threads is safe.
struct DisjointWrites: @unchecked Sendable {
    let buffer: UnsafeMutableRawBufferPointer
    init(_ buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }
}
