import Foundation
import HealthModel
import LedgerChecksums
import LedgerLog

/// A raw array written as a snapshot section in blocks, each with its own CRC32C,
/// so that loading reads and checks the blocks on every core at once.
///
/// Section payload: blockSize u32 · blockCount u32 · blockCRC u32 × blockCount ·
/// zero padding to a multiple of 8 · the array's bytes. The section header's CRC
/// covers everything before the array's bytes.
struct ColumnSource: @unchecked Sendable {
    // @unchecked: holds an immutable array (Sendable elements) only to keep its bytes alive.
    private let storage: Any
    private let bytes: UnsafeRawBufferPointer

    static let blockSize = 4 << 20

    init<T: Sendable>(_ array: [T]) {
        storage = array
        // The array is immutable and kept alive by `storage`: its buffer stays put.
        bytes = array.withUnsafeBytes { $0 }
    }

    private static func prefixLength(blocks: Int) -> Int { (8 + 4 * blocks + 7) / 8 * 8 }

    /// Writes the section (header and payload) at `offset`; returns the offset after it.
    func write(id: UInt32, to file: any LogFile, at start: UInt64) throws -> UInt64 {
        let blocks = (bytes.count + Self.blockSize - 1) / Self.blockSize
        var crcs = [UInt32](repeating: 0, count: blocks)
        let source = DisjointWrites(UnsafeMutableRawBufferPointer(mutating: bytes))
        crcs.withUnsafeMutableBytes { out in
            let target = DisjointWrites(out)
            DispatchQueue.concurrentPerform(iterations: blocks) { i in
                let lower = i * Self.blockSize, upper = min(source.buffer.count, lower + Self.blockSize)
                let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: source.buffer[lower..<upper]))
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

    /// Reads a column section's array (payload at `offset`, `length` bytes), checking
    /// the prefix against `crc` and every block against its own CRC, blocks in
    /// parallel. Nil when a checksum fails.
    static func read<T>(_: T.Type, from file: any LogFile, at offset: UInt64, length: Int, crc: UInt32) throws -> [T]? {
        var head = [UInt8](repeating: 0, count: 8)
        guard length >= 8, try head.withUnsafeMutableBytes({ try file.read(into: $0, at: offset) }) == 8 else { return nil }
        let (blockSize, blocks) = head.withUnsafeBytes {
            (Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 0, as: UInt32.self))),
             Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 4, as: UInt32.self))))
        }
        let prefixLength = Self.prefixLength(blocks: blocks)
        guard blockSize > 0, prefixLength <= length else { return nil }
        var prefix = [UInt8](repeating: 0, count: prefixLength)
        guard try prefix.withUnsafeMutableBytes({ try file.read(into: $0, at: offset) }) == prefixLength,
              CRC32C.checksum(prefix) == crc else { return nil }
        let dataLength = length - prefixLength
        guard dataLength % MemoryLayout<T>.stride == 0, blocks == (dataLength + blockSize - 1) / blockSize else { return nil }
        let crcs = prefix.withUnsafeBytes { p in (0..<blocks).map { UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 8 + 4 * $0, as: UInt32.self)) } }
        let count = dataLength / MemoryLayout<T>.stride
        let dataOffset = offset + UInt64(prefixLength)
        let failures = Mutex4Core(0)
        let array = [T](unsafeUninitializedCapacity: count) { buffer, initialized in
            HugePages.advise(UnsafeMutableRawBufferPointer(buffer))
            let raw = DisjointWrites(UnsafeMutableRawBufferPointer(buffer))
            DispatchQueue.concurrentPerform(iterations: blocks) { i in
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
        return failures.withLock { $0 } == 0 ? array : nil
    }
}

/// A buffer that parallel workers write in disjoint ranges (one block each), so
/// sharing it across threads is safe.
struct DisjointWrites: @unchecked Sendable {
    let buffer: UnsafeMutableRawBufferPointer
    init(_ buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }
}

/// A lock-protected counter for the parallel loader.
final class Mutex4Core: @unchecked Sendable {
    // @unchecked: `value` is guarded by `lock`.
    private let lock = NSLock()
    private var value: Int
    init(_ value: Int) { self.value = value }
    func withLock<R>(_ body: (inout Int) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

/// A checkpoint of every projection at a batch boundary of the log, so that opening
/// a large ledger does not replay from zero. Derived data: deleting one changes
/// nothing but open time; a damaged or foreign one is detected and ignored.
///
/// File `snapshots/snapshot-<lastSequence, 20 digits>.bin` (events/FORMAT.md, Part 3):
/// ```
/// header (128 bytes): magic "HLSNAP01" · version u32 (1) · headerLength u32 (128)
///   · ledgerId[16] · lastSequence u64 · logOffset u64 · link[32] · digest[32]
///   · lastRecordedAt i64 · sectionCount u32 · headerCRC u32 (CRC32C of bytes 0..<124)
/// sections: id u32 · reserved u32 · length u64 · crc u32 · reserved u32, then
///   `length` bytes, then zero padding to a multiple of 8
/// ```
/// Columns of the sample index are stored as raw little-endian arrays, so loading is
/// a read per column.
public struct SnapshotHeader: Sendable, Equatable {
    public let ledgerId: UUID
    public let lastSequence: UInt64
    /// The log position the snapshot stands at (a batch boundary).
    package let position: LogReader.Position
    /// The projection digest of the state it holds.
    public let digest: SHA256Digest
    public let lastRecordedAt: Int64
}

/// Why a snapshot was not used.
public enum SnapshotProblem: Error, Equatable, Sendable, CustomStringConvertible {
    case unreadable(file: String, reason: String)
    case foreign(file: String)
    case notInLog(file: String)

    public var description: String {
        switch self {
        case .unreadable(let f, let r): "snapshot \(f) is damaged: \(r)"
        case .foreign(let f): "snapshot \(f) belongs to another ledger"
        case .notInLog(let f): "snapshot \(f) does not match this log at its position"
        }
    }
}

public enum SnapshotFile {
    static let magic = Array("HLSNAP01".utf8)
    static let folder = "snapshots"
    static let headerLength = 128

    enum Section: UInt32, CaseIterable {
        case registry = 1, authorization, characteristics, counts
        /// Written only when the ledger has imports / activity summaries.
        case imports = 5, activitySummaries = 6
        /// Written only when the owner's time zone is set.
        case ownerTimeZone = 7
        case slots = 10, buckets, timelineSlots
        case timelines = 20, latest, tombstones, sync
    }

    /// The file name of a snapshot at `sequence`.
    public static func name(for sequence: UInt64) -> String {
        let digits = String(sequence)
        return folder + "/snapshot-" + String(repeating: "0", count: max(0, 20 - digits.count)) + digits + ".bin"
    }

    /// Snapshot files of a ledger, newest first.
    public static func list(_ fs: any LogFileSystem) -> [String] {
        fs.list(folder).filter { $0.hasPrefix("snapshot-") && $0.hasSuffix(".bin") }.sorted(by: >).map { folder + "/" + $0 }
    }

    // MARK: Writing

    /// Writes `state` as a snapshot at `position` (temporary file, synced, renamed).
    /// Returns the file name.
    @discardableResult
    package static func write(_ state: LedgerState, at position: LogReader.Position, ledgerId: UUID,
                             to fs: any LogFileSystem) throws -> String {
        precondition(position.nextSequence == state.lastSequence + 1, "a snapshot stands where its state ends")
        // Timelines are stored sorted: sorting once here (the writer's close) spares every
        // later open the sort its first query would pay (2M shuffled samples: half of
        // `latest`'s time). Only the timeline arrays are copied; the slots are shared.
        var state = state
        state.samples.prepareForQueries()
        var sections: [(Section, [UInt8])] = []
        var columnSections: [(Section, ColumnSource)] = []
        func small(_ id: Section, _ body: (inout ByteWriter) -> Void) {
            var w = ByteWriter(capacity: 256)
            body(&w)
            sections.append((id, w.bytes))
        }
        func raw<T: Sendable>(_ id: Section, _ array: [T]) {
            columnSections.append((id, ColumnSource(array)))
        }
        small(.registry) { w in
            w.varint(state.registry.apps.count)
            for a in state.registry.apps {
                w.string(a.bundleIdentifier)
                w.string(a.name)
                SampleCodec.optionalString(a.readPurpose, into: &w)
                SampleCodec.optionalString(a.sharePurpose, into: &w)
                w.u8(a.imported ? 1 : 0)
            }
        }
        small(.authorization) { w in
            let apps = state.authorization.permissions.keys.sorted()
            w.varint(apps.count)
            for app in apps {
                let types = state.authorization.permissions[app]!.keys.sorted()
                w.varint(UInt64(app))
                w.varint(types.count)
                for code in types {
                    let p = state.authorization.permissions[app]![code]!
                    w.u16(code)
                    w.u8(UInt8(p.share.rawValue))
                    w.u8(p.read.map { $0 ? 1 : 2 } ?? 0)
                    w.u8((p.requestedShare ? 1 : 0) | (p.requestedRead ? 2 : 0))
                    w.u8(p.basis.rawValue)
                }
            }
        }
        small(.characteristics) { w in
            let types = state.characteristics.keys.sorted { $0.rawValue < $1.rawValue }
            w.varint(types.count)
            for t in types {
                w.bytes.append(contentsOf: EventCodec.payload(.characteristicSet(state.characteristics[t]!)))
            }
        }
        small(.counts) { w in
            w.varint(state.lastSequence)
            w.zigzag(state.lastRecordedAt)
            let kinds = state.eventCounts.keys.sorted()
            w.varint(kinds.count)
            for k in kinds {
                w.u16(k)
                w.varint(state.eventCounts[k]!)
            }
        }
        if let zone = state.ownerTimeZone {
            small(.ownerTimeZone) { w in w.string(zone) }
        }
        if !state.imports.isEmpty {
            small(.imports) { w in
                w.varint(state.imports.count)
                for entry in state.imports {
                    w.lengthPrefixed { $0.bytes.append(contentsOf: EventCodec.payload(.importStarted(entry.start))) }
                    w.varint(entry.startedAt)
                    w.varint(entry.finishedAt ?? 0)
                    w.lengthPrefixed {
                        $0.bytes.append(contentsOf: EventCodec.payload(.importFinished(
                            ExportImportFinish(importId: entry.start.importId, counts: entry.counts))))
                    }
                }
            }
        }
        if !state.activitySummaries.isEmpty {
            small(.activitySummaries) { w in
                let days = state.activitySummaries.keys.sorted()
                w.varint(days.count)
                for day in days {
                    w.lengthPrefixed {
                        $0.bytes.append(contentsOf: EventCodec.payload(.activitySummariesRecorded([state.activitySummaries[day]!])))
                    }
                }
            }
        }
        let c = state.samples.columns
        raw(.slots, c.slots)
        raw(.buckets, c.buckets)
        let timelineCodes = c.timelines.keys.sorted()
        small(.timelines) { w in
            w.varint(c.tableCount)
            w.varint(timelineCodes.count)
            for code in timelineCodes {
                let t = c.timelines[code]!
                w.u16(code)
                w.u8(t.sorted ? 1 : 0)
                w.varint(t.slots.count)
            }
        }
        raw(.timelineSlots, timelineCodes.flatMap { c.timelines[$0]!.slots })
        small(.latest) { w in
            let codes = c.latest.keys.sorted()
            w.varint(codes.count)
            for code in codes {
                w.u16(code)
                w.varint(UInt64(c.latest[code]!))
            }
        }
        small(.tombstones) { w in
            w.varint(c.tombstones.count)
            for t in c.tombstones {
                w.varint(UInt64(t.slot))
                w.varint(t.sequence)
                w.varint(t.actor.encoded)
                w.varint(t.replacedBy.map { UInt64($0) + 1 } ?? 0)
            }
        }
        small(.sync) { w in
            let slots = c.syncOfSlot.keys.sorted()
            w.varint(slots.count)
            for slot in slots {
                w.varint(UInt64(slot))
                w.string(c.syncOfSlot[slot]!.identifier)
                w.zigzag(c.syncOfSlot[slot]!.version)
            }
        }

        var header = [UInt8](repeating: 0, count: headerLength)
        header.withUnsafeMutableBytes { b in
            for (i, m) in magic.enumerated() { b[i] = m }
            b.storeBytes(of: UInt32(1).littleEndian, toByteOffset: 8, as: UInt32.self)
            b.storeBytes(of: UInt32(headerLength).littleEndian, toByteOffset: 12, as: UInt32.self)
            withUnsafeBytes(of: ledgerId.uuid) { (b.baseAddress! + 16).copyMemory(from: $0.baseAddress!, byteCount: 16) }
            b.storeBytes(of: state.lastSequence.littleEndian, toByteOffset: 32, as: UInt64.self)
            b.storeBytes(of: position.offset.littleEndian, toByteOffset: 40, as: UInt64.self)
            withUnsafeBytes(of: position.link.bytes) { (b.baseAddress! + 48).copyMemory(from: $0.baseAddress!, byteCount: 32) }
            withUnsafeBytes(of: state.digest().bytes) { (b.baseAddress! + 80).copyMemory(from: $0.baseAddress!, byteCount: 32) }
            b.storeBytes(of: state.lastRecordedAt.littleEndian, toByteOffset: 112, as: Int64.self)
            b.storeBytes(of: UInt32(sections.count + columnSections.count).littleEndian, toByteOffset: 120, as: UInt32.self)
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[0..<124]))
            b.storeBytes(of: crc.littleEndian, toByteOffset: 124, as: UInt32.self)
        }
        try fs.createSubfolder(folder)
        let name = Self.name(for: state.lastSequence)
        let temporary = name + ".tmp"
        let file = try fs.open(temporary, .replace)
        var offset: UInt64 = 0
        try header.withUnsafeBytes { try file.write($0, at: offset) }
        offset += UInt64(header.count)
        for (id, bytes) in sections {
            var sectionHeader = [UInt8](repeating: 0, count: 24)
            sectionHeader.withUnsafeMutableBytes { b in
                b.storeBytes(of: id.rawValue.littleEndian, toByteOffset: 0, as: UInt32.self)
                b.storeBytes(of: UInt64(bytes.count).littleEndian, toByteOffset: 8, as: UInt64.self)
                b.storeBytes(of: CRC32C.checksum(bytes).littleEndian, toByteOffset: 16, as: UInt32.self)
            }
            try sectionHeader.withUnsafeBytes { try file.write($0, at: offset) }
            offset += 24
            try bytes.withUnsafeBytes { try file.write($0, at: offset) }
            offset += UInt64(bytes.count)
            let padding = (8 - bytes.count % 8) % 8
            if padding > 0 {
                try [UInt8](repeating: 0, count: padding).withUnsafeBytes { try file.write($0, at: offset) }
                offset += UInt64(padding)
            }
        }
        for (id, column) in columnSections {
            offset = try column.write(id: id.rawValue, to: file, at: offset)
        }
        try file.sync()
        file.close()
        try fs.rename(temporary, to: name)
        try fs.syncFolder(folder)
        return name
    }

    // MARK: Reading

    /// Reads a snapshot's header only.
    public static func header(_ fs: any LogFileSystem, _ name: String) throws(SnapshotProblem) -> SnapshotHeader {
        do {
            let file = try fs.open(name, .readOnly)
            defer { file.close() }
            return try readHeader(file, name: name)
        } catch let problem as SnapshotProblem {
            throw problem
        } catch {
            throw .unreadable(file: name, reason: "\(error)")
        }
    }

    private static func readHeader(_ file: any LogFile, name: String) throws -> SnapshotHeader {
        var header = [UInt8](repeating: 0, count: headerLength)
        let got = try header.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        guard got == headerLength, Array(header[0..<8]) == magic else { throw SnapshotProblem.unreadable(file: name, reason: "not a snapshot") }
        return try header.withUnsafeBytes { b in
            guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[0..<124]))
                    == UInt32(littleEndian: b.loadUnaligned(fromByteOffset: 124, as: UInt32.self)) else {
                throw SnapshotProblem.unreadable(file: name, reason: "header checksum")
            }
            guard UInt32(littleEndian: b.loadUnaligned(fromByteOffset: 8, as: UInt32.self)) == 1 else {
                throw SnapshotProblem.unreadable(file: name, reason: "unknown snapshot version")
            }
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: b[16..<32])) }
            let last = UInt64(littleEndian: b.loadUnaligned(fromByteOffset: 32, as: UInt64.self))
            guard last < UInt64.max else { throw SnapshotProblem.unreadable(file: name, reason: "last sequence out of range") }
            return SnapshotHeader(
                ledgerId: UUID(uuid: uuid), lastSequence: last,
                position: LogReader.Position(offset: UInt64(littleEndian: b.loadUnaligned(fromByteOffset: 40, as: UInt64.self)),
                                             nextSequence: last + 1,
                                             link: SHA256Digest(UnsafeRawBufferPointer(rebasing: b[48..<80]))),
                digest: SHA256Digest(UnsafeRawBufferPointer(rebasing: b[80..<112])),
                lastRecordedAt: Int64(littleEndian: b.loadUnaligned(fromByteOffset: 112, as: Int64.self)))
        }
    }

    /// Loads a snapshot, checking that it belongs to this ledger and stands on this
    /// log (the link stored in the log at its position equals its own), and every
    /// section's checksum.
    package static func load(_ fs: any LogFileSystem, _ name: String, reader: LogReader) throws(SnapshotProblem) -> (SnapshotHeader, LedgerState) {
        do {
            let file = try fs.open(name, .readOnly)
            defer { file.close() }
            let header = try readHeader(file, name: name)
            guard header.ledgerId == reader.header.ledgerId else { throw SnapshotProblem.foreign(file: name) }
            guard header.position.offset <= (try reader.size()),
                  (try? reader.link(endingAt: header.position.offset)) == header.position.link else {
                throw SnapshotProblem.notInLog(file: name)
            }
            let state = try readState(file, name: name, header: header)
            return (header, state)
        } catch let problem as SnapshotProblem {
            throw problem
        } catch {
            throw .unreadable(file: name, reason: "\(error)")
        }
    }

    private static func readState(_ file: any LogFile, name: String, header: SnapshotHeader) throws -> LedgerState {
        let size = try file.size()
        var offset = UInt64(headerLength)
        var small: [Section: [UInt8]] = [:]
        var timelineSlots: [UInt32] = []
        var columns = SampleIndex.Columns(slots: [], buckets: [], tableCount: 0, timelines: [:], latest: [:],
                                          tombstones: [], syncOfSlot: [:])
        func fail(_ reason: String) -> SnapshotProblem { .unreadable(file: name, reason: reason) }
        func column<T>(_ length: Int, _: T.Type, crc: UInt32) throws -> [T] {
            guard let column = try ColumnSource.read(T.self, from: file, at: offset, length: length, crc: crc) else {
                throw fail("checksum of a column")
            }
            return column
        }
        while offset < size {
            var sectionHeader = [UInt8](repeating: 0, count: 24)
            guard try sectionHeader.withUnsafeMutableBytes({ try file.read(into: $0, at: offset) }) == 24 else { throw fail("short section header") }
            let (id, storedLength, crc) = sectionHeader.withUnsafeBytes {
                (UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 0, as: UInt32.self)),
                 UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
                 UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 16, as: UInt32.self)))
            }
            offset += 24
            // The length is untrusted: compare it with the bytes left before making it an Int.
            guard offset <= size, storedLength <= size - offset, let section = Section(rawValue: id) else {
                throw fail("section \(id) of \(storedLength) bytes at byte \(offset - 24) does not fit the file")
            }
            let length = Int(storedLength)
            switch section {
            case .slots: columns.slots = try column(length, SampleIndex.Slot.self, crc: crc)
            case .buckets: columns.buckets = try column(length, UInt64.self, crc: crc)
            case .timelineSlots: timelineSlots = try column(length, UInt32.self, crc: crc)
            default:
                var bytes = [UInt8](repeating: 0, count: length)
                guard try bytes.withUnsafeMutableBytes({ try file.read(into: $0, at: offset) }) == length,
                      CRC32C.checksum(bytes) == crc else { throw fail("checksum of section \(id)") }
                small[section] = bytes
            }
            offset += UInt64(length + (8 - length % 8) % 8)
        }
        var state = LedgerState()
        do {
            try decodeSmall(small, into: &state, columns: &columns, timelineSlots: timelineSlots)
        } catch let error as EventDecodingError {
            throw fail("section contents: \(error)")
        }
        let n = columns.slots.count
        guard columns.buckets.count.nonzeroBitCount == 1, columns.tableCount == n,
              columns.slots.allSatisfy({ Int($0.typeCode) < SampleIndex.typeCodeLimit }),
              columns.timelines.values.allSatisfy({ $0.slots.allSatisfy { Int($0) < n } }),
              columns.timelines.keys.allSatisfy({ Int($0) < SampleIndex.typeCodeLimit }),
              columns.latest.keys.allSatisfy({ Int($0) < SampleIndex.typeCodeLimit }),
              columns.latest.values.allSatisfy({ Int($0) < n }),
              columns.tombstones.allSatisfy({ Int($0.slot) < n && ($0.replacedBy.map { Int($0) < n } ?? true) }),
              columns.syncOfSlot.keys.allSatisfy({ Int($0) < n }),
              state.lastSequence == header.lastSequence else { throw fail("inconsistent columns") }
        state.samples = SampleIndex(columns: columns)
        return state
    }

    private static func decodeSmall(_ small: [Section: [UInt8]], into state: inout LedgerState,
                                    columns: inout SampleIndex.Columns, timelineSlots: [UInt32]) throws {
        func read(_ section: Section, _ body: (inout ByteReader) throws -> Void) throws {
            guard let bytes = small[section] else { throw EventDecodingError.truncated(offset: 0) }
            try bytes.withUnsafeBytes { raw in
                var r = ByteReader(raw)
                try body(&r)
                try r.finish()
            }
        }
        var events: [Event] = []
        try read(.registry) { r in
            for i in 0..<(try r.count()) {
                events.append(.appRegistered(app: AppOrdinal(i + 1), AppRegistration(
                    bundleIdentifier: try r.string(), name: try r.string(), readPurpose: try SampleCodec.optionalString(&r),
                    sharePurpose: try SampleCodec.optionalString(&r), imported: try EventCodec.bool(&r))))
            }
        }
        var permissions: [(AppOrdinal, UInt16, TypePermission)] = []
        try read(.authorization) { r in
            for _ in 0..<(try r.count()) {
                let app = AppOrdinal(try r.count(limit: Int(UInt32.max)))
                for _ in 0..<(try r.count()) {
                    let code = try r.u16()
                    var p = TypePermission()
                    guard let share = SharingStatus(rawValue: Int(try r.u8())) else { throw r.malformed("share") }
                    p.share = share
                    switch try r.u8() { case 1: p.read = true; case 2: p.read = false; default: p.read = nil }
                    let requested = try r.u8()
                    p.requestedShare = requested & 1 != 0
                    p.requestedRead = requested & 2 != 0
                    guard let basis = DecisionBasis(rawValue: try r.u8()) else { throw r.malformed("basis") }
                    p.basis = basis
                    permissions.append((app, code, p))
                }
            }
        }
        try read(.characteristics) { r in
            for _ in 0..<(try r.count()) {
                _ = try r.varint()  // actor (owner)
                events.append(.characteristicSet(try EventCodec.characteristic(&r)))
            }
        }
        var counts: (UInt64, Int64, [UInt16: UInt64]) = (0, 0, [:])
        try read(.counts) { r in
            counts.0 = try r.varint()
            counts.1 = try r.zigzag()
            for _ in 0..<(try r.count()) { counts.2[try r.u16()] = try r.varint() }
        }
        try read(.timelines) { r in
            columns.tableCount = try r.count(limit: Int(UInt32.max))
            var start = 0
            for _ in 0..<(try r.count()) {
                let code = try r.u16()
                let sorted = try r.u8() == 1
                let n = try r.count(limit: timelineSlots.count - start)
                columns.timelines[code] = SampleIndex.Timeline(slots: Array(timelineSlots[start..<start + n]), sorted: sorted)
                start += n
            }
            guard start == timelineSlots.count else { throw r.malformed("timeline slots") }
        }
        try read(.latest) { r in
            for _ in 0..<(try r.count()) { columns.latest[try r.u16()] = UInt32(try r.count(limit: Int(UInt32.max))) }
        }
        try read(.tombstones) { r in
            for _ in 0..<(try r.count()) {
                let slot = UInt32(try r.count(limit: Int(UInt32.max)))
                let sequence = try r.varint()
                let actor = ActorID(encoded: try r.varint())
                let replaced = try r.varint()
                guard replaced <= UInt64(UInt32.max) else { throw r.malformed("tombstone replacement slot") }
                columns.tombstones.append(SampleIndex.Tombstone(slot: slot, sequence: sequence, actor: actor,
                                                                replacedBy: replaced == 0 ? nil : UInt32(replaced - 1)))
            }
        }
        try read(.sync) { r in
            for _ in 0..<(try r.count()) {
                let slot = UInt32(try r.count(limit: Int(UInt32.max)))
                columns.syncOfSlot[slot] = SampleIndex.SyncValue(identifier: try r.string(), version: try r.zigzag())
            }
        }
        func event(_ r: inout ByteReader, _ kind: EventKind) throws -> Event {
            let sub = try r.lengthPrefixed()
            return try EventCodec.decode(kind: kind.rawValue, version: kind.currentVersion, payload: sub.bytes)
        }
        var imports: [ImportEntry] = []
        if small[.imports] != nil {
            try read(.imports) { r in
                for _ in 0..<(try r.count()) {
                    guard case .importStarted(let start) = try event(&r, .importStarted) else { throw r.malformed("import") }
                    let startedAt = try r.varint(), finishedAt = try r.varint()
                    guard case .importFinished(let finish) = try event(&r, .importFinished) else { throw r.malformed("import") }
                    imports.append(ImportEntry(start: start, startedAt: startedAt, finishedAt: finishedAt == 0 ? nil : finishedAt,
                                               counts: finish.counts))
                }
            }
        }
        if small[.ownerTimeZone] != nil {
            try read(.ownerTimeZone) { r in events.append(.ownerTimeZoneSet(try r.string())) }
        }
        if small[.activitySummaries] != nil {
            try read(.activitySummaries) { r in
                for _ in 0..<(try r.count()) { events.append(try event(&r, .activitySummariesRecorded)) }
            }
        }
        state.restore(events: events, permissions: permissions, lastSequence: counts.0, lastRecordedAt: counts.1,
                      eventCounts: counts.2, imports: imports)
    }
}
