import Foundation
import HealthModel
import LedgerChecksums
import LedgerLog

/// A checkpoint of every projection at a batch boundary of the log, so that opening
/// a large ledger does not replay from zero. Derived data: deleting one changes
/// nothing but open time; a damaged or foreign one is detected and ignored.
///
/// File `snapshots/snapshot-<lastSequence, 20 digits>.bin` (events/FORMAT.md, Part 3):
/// ```
/// header (128 bytes): magic "HLSNAP01" · version u32 (3) · headerLength u32 (128)
///   · ledgerId[16] · lastSequence u64 · logOffset u64 · link[32] · digest[32]
///   · lastRecordedAt i64 · sectionCount u32 · headerCRC u32 (CRC32C of bytes 0..<124)
/// sections: id u32 · reserved u32 · length u64 · crc u32 · reserved u32, then
///   `length` bytes, then zero padding to a multiple of 8
/// ```
/// Columns of the sample index are stored as raw little-endian arrays, so loading is
/// a read per column.
package struct SnapshotHeader: Sendable, Equatable {
    package let ledgerId: UUID
    package let lastSequence: UInt64
    /// The log position the snapshot stands at (a batch boundary).
    package let position: LogReader.Position
    /// The projection digest of the state it holds.
    package let digest: SHA256Digest
    package let lastRecordedAt: Int64
}

/// Why a snapshot was not used. The description ends with the FORMAT.md rule the
/// file breaks (S1 header and position, S2 small sections, S3 columns, S5 lengths
/// and slot numbers, S6 the statistics columns); a snapshot that could not be read
/// at all (an I/O error) names none.
package enum SnapshotProblem: Error, Equatable, Sendable, CustomStringConvertible {
    case unreadable(file: String, reason: String, rule: String? = nil)
    /// A snapshot an earlier release wrote, in a format this one does not read (S1):
    /// not damage — derived data the projections are rebuilt without.
    case olderFormat(file: String, version: UInt32, what: String)
    case foreign(file: String)
    case notInLog(file: String)

    package var ruleID: String? {
        switch self {
        case .unreadable(_, _, let rule): rule
        case .foreign, .notInLog, .olderFormat: "S1"
        }
    }

    package var description: String {
        let text = switch self {
        case .unreadable(let f, let r, _): "snapshot \(f) is damaged: \(r)"
        case .olderFormat(let f, let v, let what): "snapshot \(f) is of format version \(v) (\(what)), which this release does not read"
        case .foreign(let f): "snapshot \(f) belongs to another ledger"
        case .notInLog(let f): "snapshot \(f) does not match this log at its position"
        }
        return ruleID.map { "\(text) [\($0)]" } ?? text
    }
}

package enum SnapshotFile {
    static let magic = Array("HLSNAP01".utf8)
    static let folder = "snapshots"
    static let headerLength = 128
    /// 2: 40-byte slots with the record-start and app-overflow sections.
    /// 3: 24-byte slots (no UUID: the log holds it), the UUID table compact (a bitmap,
    /// a rank directory and the entries, sections 11, 14 and 15; homes from fingerprints).
    static let version: UInt32 = 3

    enum Section: UInt32, CaseIterable {
        case registry = 1, authorization, characteristics, counts
        /// Written only when the ledger has imports / activity summaries.
        case imports = 5, activitySummaries = 6
        /// Written only when the owner's time zone is set.
        case ownerTimeZone = 7
        /// The statistics projection (`Snapshot+Statistics.swift`); 33 the daily sums
        /// (`SnapshotFile+DailySums.swift`), written only when some cumulative type has samples.
        case sourcePriorities = 8, statisticsValues = 30, statisticsUserEntered = 31, dailySums = 33
        /// Written only when the owner chose a preferred unit (Snapshot+Preferences).
        case preferredUnits = 40
        /// Written only when a workout has associated samples (Snapshot+Preferences).
        case associations = 41
        /// Written only when a workout has activities (SnapshotFile+WorkoutActivities);
        /// its number, 32, lies in the statistics range for history's sake.
        case workoutActivities = 32
        /// Import transactions: the imports with their events' versions (replaces 5,
        /// which only older snapshots hold), and the count of events not applied.
        case importTransactions = 50, eventsNotApplied = 51
        /// Written only when credentials were issued (SnapshotFile+Credentials).
        case credentials = 60
        /// Since version 3, 11 is the UUID table's bitmap (in 2, its buckets), with its
        /// rank directory (14) and entries (15).
        case slots = 10, tableBitmap, timelineSlots, tableRanks = 14, tableEntries = 15
        /// Since snapshot version 2 (40-byte slots): bit i set when slot i begins its
        /// record (a column), and the apps that do not fit a slot's word (small).
        case recordStarts = 13, appOverflows = 24
        case timelines = 20, latest, tombstones, sync
        // Reserved: 8 and 30–39 statistics, 40–49 HealthKit fidelity, 50–59 import v2,
        // 60–69 the store's door (credentials).
        // A small section is a `SnapshotSectionCodec` in its own file, listed in
        // `smallSections`; a column is a raw array (`ColumnSource`).
    }

    /// The file name of a snapshot at `sequence`.
    package static func name(for sequence: UInt64) -> String {
        let digits = String(sequence)
        return folder + "/snapshot-" + String(repeating: "0", count: max(0, 20 - digits.count)) + digits + ".bin"
    }

    /// Sets a damaged snapshot aside (renamed `….bin.damaged`, no longer listed), so
    /// that later opens rebuild from the log instead; nothing is lost — it is derived.
    package static func setAside(_ fs: any LogFileSystem, _ name: String) {
        try? fs.rename(name, to: name + ".damaged")
    }

    /// Snapshot files of a ledger, newest first.
    package static func list(_ fs: any LogFileSystem) -> [String] {
        fs.list(folder).filter { $0.hasPrefix("snapshot-") && $0.hasSuffix(".bin") }.sorted(by: >).map { folder + "/" + $0 }
    }

    // MARK: Writing

    /// Writes `state` as a snapshot at `position` (temporary file, synced, renamed).
    /// Returns the file name.
    @discardableResult
    package static func write(_ state: LedgerState, at position: LogReader.Position, ledgerId: UUID,
                             to fs: any LogFileSystem) throws -> String {
        precondition(position.nextSequence == state.lastSequence + 1, "a snapshot stands where its state ends")
        let fs = try SealedSnapshotFileSystem.wrapping(fs)  // an encrypted ledger's are sealed (S9)
        // Timelines are stored sorted: sorting once here (the writer's close) spares every
        // later open the sort its first query would pay (2M shuffled samples: half of
        // `latest`'s time). Only the timeline arrays are copied; the slots are shared.
        var state = state
        state.samples.prepareForQueries()
        let c = state.samples.columns
        let table = c.table.compactForm
        let source = SnapshotSource(state: state, columns: c, timelineCodes: c.timelines.keys.sorted())
        var sections: [(Section, [UInt8])] = []
        for codec in smallSections {
            var w = ByteWriter(capacity: 256)
            if codec.encode(source, &w) { sections.append((codec.section, w.bytes)) }
        }
        let statistics = statisticsSections(state.statistics)
        sections.append((.sourcePriorities, statistics.small))
        let columnSections: [(Section, ColumnSource)] = [
            (.slots, ColumnSource(c.slots)), (.recordStarts, ColumnSource(c.recordStarts)), (.tableBitmap, ColumnSource(table.bitmap)),
            (.tableRanks, ColumnSource(table.ranks)), (.tableEntries, ColumnSource(table.entries)),
            (.timelineSlots, ColumnSource(source.timelineCodes.flatMap { c.timelines[$0]!.slots })),
            (.statisticsValues, statistics.values), (.statisticsUserEntered, statistics.flags),
        ]

        // The digest (a pass over every slot) is computed on another thread while the
        // sections are written after the header's place; the header goes in last.
        let digest = Locked<SHA256Digest?>(nil)
        let digested = DispatchSemaphore(value: 0)
        // A thread of its own: the caller may be one of the concurrency pool's, blocked here.
        Thread { [state] in
            digest.withLock { $0 = state.digest() }
            digested.signal()
        }.start()
        // The computed sections (the daily sums: a sweep over every cumulative type's
        // samples) likewise, while the small sections and columns are written.
        let computed = Locked<[(Section, [UInt8])]>([])
        let computedDone = DispatchSemaphore(value: 0)
        Thread { [source] in
            var out: [(Section, [UInt8])] = []
            for codec in computedSections {
                var w = ByteWriter(capacity: 256)
                if codec.encode(source, &w) { out.append((codec.section, w.bytes)) }
            }
            computed.withLock { $0 = out }
            computedDone.signal()
        }.start()
        var sectionsWritten = false
        defer {
            if !sectionsWritten {  // never return (or throw) with them running
                digested.wait()
                computedDone.wait()
            }
        }

        try fs.createSubfolder(folder)
        let name = Self.name(for: state.lastSequence)
        let temporary = name + ".tmp"
        let file = try fs.open(temporary, .replace)
        var offset = UInt64(headerLength)
        func writeSmall(_ id: Section, _ bytes: [UInt8]) throws {
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
        for (id, bytes) in sections { try writeSmall(id, bytes) }
        // Each column's pages are handed to the disk as soon as written (not waited for):
        // the closing sync then finds most of the file already written back.
        for (id, column) in columnSections {
            let start = offset
            offset = try column.write(id: id.rawValue, to: file, at: offset)
            file.beginWriteback(offset: start, length: offset - start)
        }
        computedDone.wait()
        let computedWritten = computed.withLock { $0 }
        for (id, bytes) in computedWritten { try writeSmall(id, bytes) }
        digested.wait()
        sectionsWritten = true
        guard let stateDigest = digest.withLock({ $0 }) else { preconditionFailure("the digest was computed") }

        var header = [UInt8](repeating: 0, count: headerLength)
        header.withUnsafeMutableBytes { b in
            for (i, m) in magic.enumerated() { b[i] = m }
            b.storeBytes(of: version.littleEndian, toByteOffset: 8, as: UInt32.self)
            b.storeBytes(of: UInt32(headerLength).littleEndian, toByteOffset: 12, as: UInt32.self)
            withUnsafeBytes(of: ledgerId.uuid) { (b.baseAddress! + 16).copyMemory(from: $0.baseAddress!, byteCount: 16) }
            b.storeBytes(of: state.lastSequence.littleEndian, toByteOffset: 32, as: UInt64.self)
            b.storeBytes(of: position.offset.littleEndian, toByteOffset: 40, as: UInt64.self)
            withUnsafeBytes(of: position.link.bytes) { (b.baseAddress! + 48).copyMemory(from: $0.baseAddress!, byteCount: 32) }
            withUnsafeBytes(of: stateDigest.bytes) { (b.baseAddress! + 80).copyMemory(from: $0.baseAddress!, byteCount: 32) }
            b.storeBytes(of: state.lastRecordedAt.littleEndian, toByteOffset: 112, as: Int64.self)
            b.storeBytes(of: UInt32(sections.count + columnSections.count + computedWritten.count).littleEndian,
                         toByteOffset: 120, as: UInt32.self)
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[0..<124]))
            b.storeBytes(of: crc.littleEndian, toByteOffset: 124, as: UInt32.self)
        }
        try header.withUnsafeBytes { try file.write($0, at: 0) }
        try file.sync()
        file.close()
        try fs.rename(temporary, to: name)
        try fs.syncFolder(folder)
        return name
    }

    // MARK: Reading

    /// Reads a snapshot's header only.
    package static func header(_ fs: any LogFileSystem, _ name: String) throws(SnapshotProblem) -> SnapshotHeader {
        do {
            let wrapped = try SealedSnapshotFileSystem.wrapping(fs)
            // An encrypted ledger's: only the header's bytes are deciphered (choosing a
            // snapshot; `load` then checks the whole file's tag before using it).
            let file = try (wrapped as? SealedSnapshotFileSystem)?.openHeader(name) ?? wrapped.open(name, .readOnly)
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
        guard got == headerLength, Array(header[0..<8]) == magic else { throw SnapshotProblem.unreadable(file: name, reason: "not a snapshot", rule: "S1") }
        return try header.withUnsafeBytes { b in
            guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[0..<124]))
                    == UInt32(littleEndian: b.loadUnaligned(fromByteOffset: 124, as: UInt32.self)) else {
                throw SnapshotProblem.unreadable(file: name, reason: "header checksum", rule: "S1")
            }
            let found = UInt32(littleEndian: b.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
            guard found == version else {
                switch found {
                case 1: throw SnapshotProblem.olderFormat(file: name, version: 1, what: "56-byte slots")
                case 2: throw SnapshotProblem.olderFormat(file: name, version: 2, what: "40-byte slots, with UUIDs")
                default: throw SnapshotProblem.unreadable(file: name, reason: "unknown snapshot version \(found)", rule: "S1")
                }
            }
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: b[16..<32])) }
            let last = UInt64(littleEndian: b.loadUnaligned(fromByteOffset: 32, as: UInt64.self))
            guard last < UInt64.max else { throw SnapshotProblem.unreadable(file: name, reason: "last sequence out of range", rule: "S5") }
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
    /// section's checksum — or, `mapped` (rule S8: readers), mapping the file's columns
    /// rather than reading them: their prefixes are checked now, each block copied from
    /// the file into private memory and checked the first time it is read (the file
    /// stays open for that, held by the columns), and what fails is recorded in the
    /// state's `snapshotDamage`. A file system whose files are not read on demand
    /// (simulated, PostgreSQL) reads instead.
    ///
    /// `checkingWhole` with `mapped` (verify: it compares every value anyway): the
    /// columns are mapped but every block and value is checked now, as a read checks
    /// them, so the load fails or succeeds exactly as a read does, with the same
    /// problem.
    package static func load(_ fs: any LogFileSystem, _ name: String, reader: LogReader, mapped: Bool = false,
                             checkingWhole: Bool = false) throws(SnapshotProblem) -> (SnapshotHeader, LedgerState) {
        do {
            let fs = try SealedSnapshotFileSystem.wrapping(fs)  // an encrypted ledger's, sealed
            let file = try fs.open(name, .readOnly)
            // Mapped, the columns keep the file and read it later: it closes when they go.
            let onDemand = mapped && file.readsOnDemand
            defer { if !onDemand { file.close() } }
            let header = try readHeader(file, name: name)
            guard header.ledgerId == reader.header.ledgerId else { throw SnapshotProblem.foreign(file: name) }
            guard header.position.offset <= (try reader.size()),
                  (try? reader.link(endingAt: header.position.offset)) == header.position.link else {
                throw SnapshotProblem.notInLog(file: name)
            }
            var state = try readState(file, name: name, header: header, onDemand: onDemand, checkingWhole: checkingWhole)
            // The restored slots' UUIDs are in the log, not the snapshot (version 3).
            state.samples.logUUIDs = LogSampleUUIDs(reader: reader, damage: state.snapshotDamage)
            return (header, state)
        } catch let problem as SnapshotProblem {
            throw problem
        } catch {
            throw .unreadable(file: name, reason: "\(error)")
        }
    }

    /// Where a column section's payload is, found while walking the file.
    private struct ColumnPlace {
        let offset: UInt64
        let length: Int
        let crc: UInt32
    }

    private static func readState(_ file: any LogFile, name: String, header: SnapshotHeader, onDemand: Bool,
                                  checkingWhole: Bool) throws -> LedgerState {
        // Checked when first read (S8), or now, every block and value (a read, or a
        // mapping checked whole).
        let lazy = onDemand && !checkingWhole
        let size = try file.size()
        var offset = UInt64(headerLength)
        var small: [Section: [UInt8]] = [:]
        var places: [Section: ColumnPlace] = [:]
        var contents = SnapshotContents()
        let damage = SnapshotDamage(file: name)
        func fail(_ reason: String, _ rule: String) -> SnapshotProblem { .unreadable(file: name, reason: reason, rule: rule) }
        while offset < size {
            var sectionHeader = [UInt8](repeating: 0, count: 24)
            guard try sectionHeader.withUnsafeMutableBytes({ try file.read(into: $0, at: offset) }) == 24 else { throw fail("short section header", "S5") }
            let (id, storedLength, crc) = sectionHeader.withUnsafeBytes {
                (UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 0, as: UInt32.self)),
                 UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
                 UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 16, as: UInt32.self)))
            }
            offset += 24
            // The length is untrusted: compare it with the bytes left before making it an Int.
            guard offset <= size, storedLength <= size - offset, let section = Section(rawValue: id) else {
                throw fail("section \(id) of \(storedLength) bytes at byte \(offset - 24) does not fit the file", "S5")
            }
            let length = Int(storedLength)
            switch section {
            case .slots, .tableBitmap, .tableRanks, .tableEntries, .timelineSlots, .recordStarts, .statisticsValues,
                 .statisticsUserEntered:
                places[section] = ColumnPlace(offset: offset, length: length, crc: crc)
            default:
                var bytes = [UInt8](repeating: 0, count: length)
                guard try bytes.withUnsafeMutableBytes({ try file.read(into: $0, at: offset) }) == length,
                      CRC32C.checksum(bytes) == crc else { throw fail("checksum of section \(id)", "S2") }
                small[section] = bytes
            }
            offset += UInt64(length + (8 - length % 8) % 8)
        }
        // The columns: read (every block checked, in parallel) or mapped (each block
        // checked when first read; a timeline's values also checked to be slots).
        func column<T: BitwiseCopyable & Sendable>(_ section: Section, _: T.Type, spare: @escaping (Int) -> Int = { _ in 0 },
                                                   valid: (@Sendable (UnsafeRawBufferPointer) -> Bool)? = nil) throws -> Column<T>? {
            guard let place = places[section] else { return nil }
            let loaded: Column<T>?
            if lazy {
                loaded = try ColumnSource.map(T.self, from: file, at: place.offset, length: place.length,
                                              crc: place.crc, section: section.rawValue, damage: damage, valid: valid)
            } else if onDemand {
                loaded = try ColumnSource.mapCheckingWhole(T.self, from: file, at: place.offset, length: place.length,
                                                           crc: place.crc, section: section.rawValue)
            } else {
                loaded = try ColumnSource.read(T.self, from: file, at: place.offset, length: place.length, crc: place.crc, spare: spare)
            }
            guard let loaded else { throw fail("checksum of a column", "S3") }
            return loaded
        }
        // A quarter more slots than loaded: a merge of a newer export appends without
        // copying every slot first (a copy of 30 MB at 741k samples).
        contents.columns.slots = try column(.slots, SampleIndex.Slot.self, spare: { $0 / 4 + 4096 }) ?? []
        let n = contents.columns.slots.count
        contents.columns.recordStarts = try column(.recordStarts, UInt64.self, spare: { $0 / 4 + 64 }) ?? []
        let tableBitmap = try column(.tableBitmap, UInt64.self) ?? []
        let tableRanks = try column(.tableRanks, UInt32.self) ?? []
        let tableEntries = try column(.tableEntries, UInt64.self) ?? []
        let slotCount = UInt32(n)
        contents.timelineSlots = try column(.timelineSlots, UInt32.self, valid: { block in
            block.withMemoryRebound(to: UInt32.self) { $0.allSatisfy { $0 < slotCount } }
        }) ?? []
        let statisticsValues = try column(.statisticsValues, Double.self)
        let statisticsFlags = try column(.statisticsUserEntered, UInt8.self)
        do {
            for codec in smallSections + computedSections {
                guard let bytes = small[codec.section] else {
                    if codec.required { throw EventDecodingError.truncated(offset: 0) }
                    continue
                }
                try bytes.withUnsafeBytes { raw in
                    var r = ByteReader(raw)
                    try codec.decode(&r, &contents)
                    try r.finish()
                }
            }
        } catch let error as EventDecodingError {
            throw fail("section contents: \(error)", "S2")
        }
        var state = LedgerState()
        state.restore(events: contents.events, permissions: contents.permissions, lastSequence: contents.lastSequence,
                      lastRecordedAt: contents.lastRecordedAt, eventCounts: contents.eventCounts, imports: contents.imports,
                      eventsNotApplied: contents.eventsNotApplied, credentials: contents.credentials)
        guard let table = CompactUUIDTable(bucketCount: contents.tableBuckets, bitmap: tableBitmap, ranks: tableRanks,
                                           entries: tableEntries) else {
            throw fail("the UUID table's sections do not fit \(contents.tableBuckets) buckets", "S5")
        }
        contents.columns.table = UUIDTable(compact: table)
        let columns = contents.columns
        // Checks that cost no more than the small sections (S5): counts agree, and every
        // slot number the small sections hold is a slot; slot 0 begins a record
        // (positions count from a record's first slot).
        guard columns.recordStarts.count == (n + 63) / 64, n == 0 || columns.recordStarts[0] & 1 == 1,
              contents.tableCount == n, columns.table.count == n, columns.table.count * 10 <= columns.table.bucketCount * 8,
              columns.appOverflows.allSatisfy({ Int($0.key) < n && $0.value >= SampleIndex.Slot.appOverflow }),
              columns.timelines.keys.allSatisfy({ Int($0) < SampleIndex.typeCodeLimit }),
              columns.latest.keys.allSatisfy({ Int($0) < SampleIndex.typeCodeLimit }),
              columns.latest.values.allSatisfy({ Int($0) < n }),
              columns.tombstones.allSatisfy({ Int($0.slot) < n && ($0.replacedBy.map { Int($0) < n } ?? true) }),
              columns.syncOfSlot.keys.allSatisfy({ Int($0) < n }),
              state.lastSequence == header.lastSequence else { throw fail("inconsistent columns", "S5") }
        if !lazy {
            // Read whole: every value is checked now (mapped, each block's when first read;
            // a slot's 11-bit type field indexes tables of 2,048 whatever it holds, and an
            // app said to overflow without an entry names no app): every type field in
            // range, exactly the slots marked as overflowing with an entry, every
            // timeline value a slot. (Over buffers: the same values as the subscripts.)
            let slotsHold = columns.slots.withUnsafeBufferPointer { slots in
                var overflowing = 0
                for (i, slot) in slots.enumerated() {
                    guard Int(slot.typeCode) < SampleIndex.typeCodeLimit else { return false }
                    if slot.appField == SampleIndex.Slot.appOverflow {
                        guard columns.appOverflows[UInt32(i)] != nil else { return false }
                        overflowing += 1
                    }
                }
                return overflowing == columns.appOverflows.count
            }
            // The table: its rank directory counts its bitmap's bits (a probe trusts it), no
            // bit lies past its buckets, and its entries name every slot exactly once (a
            // writer grows and probes them: an entry naming no slot would stop it).
            var bits = 0
            let ranksHold = (0..<table.bitmap.count).allSatisfy { w in
                defer { bits += table.bitmap[w].nonzeroBitCount }
                return w % CompactUUIDTable.wordsPerRank != 0 || Int(table.ranks[w / CompactUUIDTable.wordsPerRank]) == bits
            } && bits == n && (table.bucketCount >= 64 || table.bitmap[0] >> UInt64(table.bucketCount) == 0)
            var named = [UInt64](repeating: 0, count: n / 64 + 1)
            let entriesHold = table.entries.withUnsafeBufferPointer { entries in
                entries.allSatisfy { e in
                    let slot = Int(UInt32(truncatingIfNeeded: e)) - 1
                    guard slot >= 0, slot < n, named[slot >> 6] & (1 << UInt64(slot & 63)) == 0 else { return false }
                    named[slot >> 6] |= 1 << UInt64(slot & 63)
                    return true
                }
            }
            guard slotsHold, ranksHold, entriesHold,
                  columns.timelines.values.allSatisfy({ $0.slots.withUnsafeBufferPointer { $0.allSatisfy { Int($0) < n } } }) else {
                throw fail("inconsistent columns", "S5")
            }
        }
        state.samples = SampleIndex(columns: columns)
        state.snapshotDamage = lazy ? damage : nil
        if let tables = contents.dailySums { state.dailySums.sums = DailySums(lastSequence: header.lastSequence, tables: tables) }
        do {
            state.statistics = try readStatistics(small[.sourcePriorities], values: statisticsValues, flags: statisticsFlags,
                                                  slotCount: n, checkFlags: !lazy)
        } catch {
            throw fail("statistics: \(error)", "S6")
        }
        return state
    }
}
