import Foundation
import Testing
import HealthModel
@testable import LedgerCore
import LedgerChecksums
import LedgerLog
import LedgerReporting
import TestSupport

/// A walk over a whole quantity type for a writer of lines goes in windows
/// (`SampleReader`, `RecordReads.gather`): it prints exactly the lines of the decoded
/// read, whatever the windows' size, and a mapped snapshot's slot blocks are read into
/// the walk's own buffers, never kept in the state's shared copy (rule S8 still: a
/// damaged block fails the walk).
struct QueryWindowTests {
    /// The lines `q` prints through the plain path with `windowBytes` (0: no windows),
    /// the lines of the decoded read, and the windows the plain walk gathered.
    static func lines(_ state: inout LedgerState, _ fs: any LogFileSystem, _ q: SampleQuery, visibility: QueryVisibility,
                      after: UUID? = nil, windowBytes: Int, tableBudget: Int = 120) throws -> (got: [String], expected: [String], windows: Int) {
        var got: [String] = [], expected: [String] = []
        let reader = try SampleReader(fs, chunkSize: 5, tableBudget: tableBudget, windowBytes: windowBytes)
        let next = try reader.forEach(q, visibility: visibility, after: after, in: &state, plain: { s in
            var bytes: [UInt8] = []
            SampleJSONWriter.append(s, to: &bytes)
            got.append(String(decoding: bytes, as: UTF8.self))
        }) { got.append(PlainQuantityReadTests.line($0)) }
        #expect(next == nil)
        try SampleReader(fs, chunkSize: 5, tableBudget: tableBudget, windowBytes: 0).forEach(q, visibility: visibility, after: after,
                                                                                             in: &state) {
            expected.append(PlainQuantityReadTests.line($0))
        }
        return (got, expected, reader.reads.windowsGathered)
    }

    /// Shuffled samples in records of 50, correlations, another app's records, deletions:
    /// every timeline order, date predicate and visibility, from the start and after a
    /// cursor, in eight windows (the most a walk takes) with sample tables dropped
    /// mid-walk, and in one window — the decoded read's lines, in its order.
    @Test func windowsPrintWhatTheDecodedReadPrints() async throws {
        let fs = SimulatedFileSystem()
        let (ledger, all) = try await QueryEngineTests.shuffledLedger(fs, records: 12, perRecord: 50, seed: 29)
        let b = await ledger.state.registry.ordinal(of: appB.bundleIdentifier)!
        let predicates: [DatePredicate?] = [
            nil,
            DatePredicate(start: date("2026-01-02T00:00:00Z"), end: date("2026-01-03T00:00:00Z"), strictStartDate: true),
            DatePredicate(start: nil, end: date("2026-01-02T12:00:00Z"), strictEndDate: true),
        ]
        var compared = 0
        for type in [QueryEngineTests.steps, .quantity(.bloodPressureSystolic)] {
            for ascending in [true, false] {
                for predicate in predicates {
                    for visibility in [QueryVisibility.everything, .ownSamplesOnly(b)] {
                        for (windowBytes, tableBudget) in [(1, 120), (1 << 20, 1 << 20)] {
                            let q = SampleQuery(type: type, predicate: predicate, sort: [.init(.startDate, ascending: ascending)])
                            let (got, expected, windows) = try await ledger.read { state in
                                try Self.lines(&state, fs, q, visibility: visibility, windowBytes: windowBytes, tableBudget: tableBudget)
                            }
                            #expect(got == expected, "\(type) \(ascending) \(String(describing: predicate)) \(visibility) \(windowBytes)")
                            compared += got.count
                            // A walk over the whole step timeline (600 slots): eight windows
                            // of 75; or, when one window would take it all, the walk in chunks.
                            if type == QueryEngineTests.steps && predicate == nil {
                                #expect(windows == (windowBytes == 1 ? 8 : 0), "\(windowBytes)")
                            }
                        }
                    }
                }
            }
        }
        #expect(compared > 3000)
        // After a cursor, in both directions: the rest of the decoded read.
        for ascending in [true, false] {
            let q = SampleQuery(type: QueryEngineTests.steps, sort: [.init(.startDate, ascending: ascending)])
            let (got, expected, windows) = try await ledger.read { state in
                try Self.lines(&state, fs, q, visibility: .everything, after: all[300], windowBytes: 1)
            }
            #expect(got == expected, "\(ascending): \(got.count) vs \(expected.count)")
            #expect(!got.isEmpty && got.count < 600, "\(ascending): \(got.count)")
            #expect(windows >= 7 && windows <= 8, "\(windows)")
        }
        // With no windows, none is gathered; a walk with a limit pages in chunks.
        let (_, _, none) = try await ledger.read { state in
            try Self.lines(&state, fs, SampleQuery(type: QueryEngineTests.steps), visibility: .everything, windowBytes: 0)
        }
        #expect(none == 0)
    }

    /// Filters decided on the bytes or on the decoded sample, the user-entered flag
    /// ruling out slots before a window takes them, samples the plain path leaves to
    /// the decoder (a device), two apps: in windows, the decoded read's lines.
    @Test func filteredWindowsPrintWhatTheDecodedReadPrints() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        try await ledger.grant(appA, share: [QueryEngineTests.steps])
        try await ledger.grant(appB, share: [QueryEngineTests.steps])
        let base = date("2026-01-01T00:00:00Z")
        var rng = SeededGenerator(seed: 31)
        let metadatas: [Metadata] = [Metadata(), ["HKWasUserEntered": .bool(true)], ["note": .string("Lunch"), "n": .integer(5)]]
        for r in 0..<8 {
            let samples: [Sample] = try (0..<60).map { i in
                let start = base.addingTimeInterval(Double(rng.next() % 700) * 60)
                return .quantity(try QuantitySample(type: .stepCount, quantity: try Quantity(Double(rng.next() % 900), unit: "count"),
                                                    start: start, end: start.addingTimeInterval(30), uuid: UUID(),
                                                    metadata: metadatas[Int(rng.next() % UInt64(metadatas.count))],
                                                    device: i % 13 == 0 ? Device(name: "Watch") : nil))
            }
            try await ledger.append(.save(bundleIdentifier: (r % 3 == 0 ? appB : appA).bundleIdentifier, samples: samples))
        }
        let filters: [SamplePredicate?] = [
            nil,
            .metadata("HKWasUserEntered", .equal, .bool(true)),
            .or([.metadata("note", .equal, .string("Lunch")), .quantity(.greater, try Quantity(800, unit: "count"))]),
            .device(.name, "Watch"),
        ]
        for filter in filters {
            for ascending in [true, false] {
                let q = SampleQuery(type: QueryEngineTests.steps, sort: [.init(.startDate, ascending: ascending)], filter: filter)
                let (got, expected, windows) = try await ledger.read { state in
                    try Self.lines(&state, fs, q, visibility: .everything, windowBytes: 1)
                }
                #expect(got == expected, "\(String(describing: filter)) \(ascending)")
                // Windows of 60 places (480 slots, at most eight windows); the flag rules
                // out slots before they take a place: fewer windows then.
                #expect(!got.isEmpty && windows >= (filter == nil ? 8 : 2), "\(String(describing: filter)): \(got.count) lines, \(windows) windows")
            }
        }
    }

    /// Samples saved in about the query's order lie in a short run of slots: the walk
    /// keeps to small windows (each reads its records once); saved shuffled, a small
    /// window's slots lie far apart, and it grows to the budget's size — here all of
    /// the walk, which then goes in chunks. Both print the decoded read's lines.
    @Test func closeSlotsKeepWindowsSmall() async throws {
        for inOrder in [true, false] {
            let fs = SimulatedFileSystem()
            let ledger = try await HeldPayloadReleaseTests.ledger(fs, inOrder: inOrder)
            for ascending in [true, false] {
                let q = SampleQuery(type: QueryEngineTests.steps, sort: [.init(.startDate, ascending: ascending)])
                let (got, expected, windows) = try await ledger.read { state throws -> ([String], [String], Int) in
                    var got: [String] = [], expected: [String] = []
                    let reader = try SampleReader(fs, chunkSize: 5, tableBudget: 1 << 20, windowBytes: 1 << 20, localPlaces: 16)
                    try reader.forEach(q, visibility: .everything, in: &state, plain: { s in
                        var bytes: [UInt8] = []
                        SampleJSONWriter.append(s, to: &bytes)
                        got.append(String(decoding: bytes, as: UTF8.self))
                    }) { got.append(PlainQuantityReadTests.line($0)) }
                    try SampleReader(fs, chunkSize: 5, tableBudget: 1 << 20, windowBytes: 0).forEach(q, visibility: .everything,
                                                                                                      in: &state) {
                        expected.append(PlainQuantityReadTests.line($0))
                    }
                    // Close slots keep no sample table; far ones keep every record's.
                    #expect(reader.reads.tables.count == (inOrder ? 0 : 12), "in order \(inOrder)")
                    return (got, expected, reader.reads.windowsGathered)
                }
                #expect(got.count == 600 && got == expected, "in order \(inOrder), ascending \(ascending)")
                // 600 samples: windows of 16 places; shuffled, one window would take them
                // all: the walk in chunks.
                #expect(windows == (inOrder ? 38 : 0), "in order \(inOrder), ascending \(ascending): \(windows)")
            }
        }
    }

    /// On a mapped snapshot whose slot column is two blocks (180,000 slots of 24 bytes;
    /// a block is 4 MiB): the walk in windows answers as the decoded read, and leaves the
    /// slot column's shared copy as it found it — its blocks went through the walk's own
    /// buffers — where the walk in chunks fills it.
    @Test func s8AWalkInWindowsKeepsNoSlotBlock() async throws {
        let dir = TemporaryDirectory()
        let ledger = try Ledger.create(dir.fs, options: LedgerOptions(log: testOptions))
        try await ledger.grant(appA, share: [QueryEngineTests.steps])
        var rng = SeededGenerator(seed: 41)
        let base = date("2026-01-01T00:00:00Z")
        for _ in 0..<90 {
            let samples: [Sample] = try (0..<2_000).map { _ in
                let start = base.addingTimeInterval(Double(rng.next() % 1_000_000))
                return .quantity(try QuantitySample(type: .stepCount, quantity: try Quantity(Double(rng.next() % 900), unit: "count"),
                                                    start: start, end: start.addingTimeInterval(60), uuid: UUID()))
            }
            try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: samples))
        }
        _ = try await ledger.snapshot()
        try await ledger.close()
        var state = try MappedSnapshotTests.load(dir, mapped: true)
        let slots = try #require(state.samples.slots.mappedSpan?.bytes)
        #expect(slots.crcs.count == 2)
        let before = slots.checkedBlockCount
        #expect(before < 2)  // a block the walk needs is unread
        let q = SampleQuery(type: QueryEngineTests.steps, sort: [.init(.startDate, ascending: false)])
        var got: [String] = []
        let reader = try SampleReader(dir.fs, chunkSize: 4096, tableBudget: 1 << 20, windowBytes: 1 << 20)
        try reader.forEach(q, visibility: .everything, in: &state, plain: { s in
            var bytes: [UInt8] = []
            SampleJSONWriter.append(s, to: &bytes)
            got.append(String(decoding: bytes, as: UTF8.self))
        }) { got.append(PlainQuantityReadTests.line($0)) }
        #expect(reader.reads.windowsGathered == 8)  // of 13,250 places
        #expect(slots.checkedBlockCount == before)
        var expected: [String] = []
        try SampleReader(dir.fs, chunkSize: 4096, tableBudget: 1 << 20).forEach(q, visibility: .everything, in: &state) {
            expected.append(PlainQuantityReadTests.line($0))
        }
        #expect(got.count == 180_000 && got == expected)
        #expect(slots.checkedBlockCount == 2)  // the walk in chunks kept both blocks
        #expect(try state.checkIntact() == ())
    }

    /// A flipped byte in the slot column: the walk in windows fails with S8 before it
    /// prints anything — no line from the damaged block, no trap.
    @Test func s8ADamagedSlotBlockFailsTheWalkInWindows() async throws {
        let dir = TemporaryDirectory()
        let name = try await MappedSnapshotTests.ledgerWithSnapshot(dir)
        let path = dir.path + "/" + name
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let place = try #require(MappedSnapshotTests.place(of: 10, in: bytes))
        bytes[place.array + 40 * 7 + 3] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        var state = try MappedSnapshotTests.load(dir, mapped: true)
        var printed = 0
        let reader = try SampleReader(dir.fs, chunkSize: 64, tableBudget: 1 << 20)
        #expect(throws: SnapshotProblem.unreadable(file: name, reason: "section 10 block 0 fails its check", rule: "S8")) {
            try reader.forEach(SampleQuery(type: QueryEngineTests.steps), visibility: .everything, in: &state,
                               plain: { _ in printed += 1 }) { _ in printed += 1 }
        }
        #expect(printed == 0)
    }
}

/// `ColumnBlockReader` over a mapped column of 24-byte slots in 64-byte blocks (some
/// slots straddle two): every order reads what the column holds, each block once in
/// order, the shared copy untouched; a damaged or cut block reads as zeros and is
/// recorded (S8).
struct ColumnBlockReaderTests {
    static let count = 100, blockSize = 64

    static func slots() -> [SampleIndex.Slot] {
        (0..<count).map { (i: Int) -> SampleIndex.Slot in
            let start = Double(i) * 60
            return SampleIndex.Slot(start: start, end: start + 30, recordOffset: UInt64(i) * 100,
                                    typeCode: 7, state: UInt8(i % 3), appField: UInt32(i % 5))
        }
    }

    /// A column section in a file of its own: the slots' bytes, a CRC32C per block;
    /// `damage` changes the file's bytes after the CRCs are taken.
    static func mapped(_ dir: TemporaryDirectory, damage: (inout [UInt8]) -> Void = { _ in })
        throws -> (Column<SampleIndex.Slot>, MappedColumnBytes) {
        var bytes = slots().withUnsafeBytes { [UInt8]($0) }
        let crcs = stride(from: 0, to: bytes.count, by: blockSize).map {
            CRC32C.checksum(Array(bytes[$0..<min(bytes.count, $0 + blockSize)]))
        }
        let byteCount = bytes.count
        damage(&bytes)
        try dir.fs.createFolder()
        let file = try dir.fs.open("column", .createNew)
        try bytes.withUnsafeBytes { try file.write($0, at: 0) }
        let mapped = try MappedColumnBytes(file: file, offset: 0, byteCount: byteCount, blockSize: blockSize, crcs: crcs, section: 10,
                                           damage: SnapshotDamage(file: "column"))
        return (Column(mapped: mapped, count: count), mapped)
    }

    @Test func everyOrderReadsTheColumnAndKeepsNoSharedBlock() throws {
        let dir = TemporaryDirectory()
        let (column, bytes) = try Self.mapped(dir)
        let expected = Self.slots()
        let blocks = (Self.count * 24 + Self.blockSize - 1) / Self.blockSize
        let ascending = ColumnBlockReader(column)
        #expect((0..<Self.count).map { ascending[$0] } == expected)
        #expect(ascending.blocksRead == blocks)
        let descending = ColumnBlockReader(column)
        #expect((0..<Self.count).reversed().map { descending[$0] } == Array(expected.reversed()))
        #expect(descending.blocksRead == blocks)
        var rng = SeededGenerator(seed: 3)
        let order = (0..<Self.count).shuffled(using: &rng)
        let random = ColumnBlockReader(column)
        #expect(order.map { random[$0] } == order.map { expected[$0] })
        #expect(bytes.checkedBlockCount == 0)
        #expect(bytes.damage.problem == nil)
        // A block the shared copy has checked is read there, not from the file again.
        #expect(column[0] == expected[0])
        #expect(bytes.checkedBlockCount == 1)
        let shared = ColumnBlockReader(column)
        #expect(shared[0] == expected[0])
        #expect(shared.blocksRead == 0)
    }

    @Test func s8ADamagedOrCutBlockReadsAsZerosAndIsRecorded() throws {
        let zero = SampleIndex.Slot(start: 0, end: 0,
                                    recordOffset: 0, typeCode: 0, state: 0, appField: 0)
        let expected = Self.slots()
        // Block 3 (bytes 192..<256: slots 8 and 9 wholly, slot 10's start).
        let dir = TemporaryDirectory()
        let (column, bytes) = try Self.mapped(dir) { $0[200] ^= 1 }
        let reader = ColumnBlockReader(column)
        let read = (0..<Self.count).map { reader[$0] }
        for i in 0..<Self.count {
            #expect(read[i] == ((8...10).contains(i) ? zero : expected[i]), "slot \(i)")
        }
        #expect(bytes.damage.problem == .unreadable(file: "column", reason: "section 10 block 3 fails its check", rule: "S8"))
        // Cut inside block 2: 150 of the file's bytes (block 2 has 22 of its 64).
        let cutDir = TemporaryDirectory()
        let (cut, cutBytes) = try Self.mapped(cutDir) { $0.removeSubrange(150...) }
        let cutReader = ColumnBlockReader(cut)
        #expect(cutReader[1] == expected[1])
        #expect(cutReader[4] == expected[4])  // bytes 96..<120: in block 1
        #expect(cutReader[5] == zero)  // bytes 120..<144: in blocks 1 and 2
        #expect(cutBytes.damage.problem == .unreadable(file: "column", reason: "section 10 block 2 is cut short: 22 of its 64 bytes are in the file",
                                                       rule: "S8"))
    }
}

/// `RadixSort.sortByUpperHalf` sorts by the upper 32 bits, stably, in one pass or two.
struct RadixSortTests {
    @Test func sortsByTheUpperHalfStably() {
        var rng = SeededGenerator(seed: 17)
        for (count, upperLimit) in [(0, 1), (1, 1), (1_000, 1 << 8), (50_000, 1 << 16), (50_000, 1 << 32)] as [(Int, UInt64)] {
            var keys = (0..<count).map { _ in (rng.next() % upperLimit) << 32 | (rng.next() & 0xFFFF_FFFF) }
            let expected = keys.enumerated().sorted { ($0.element >> 32, $0.offset) < ($1.element >> 32, $1.offset) }.map(\.element)
            var scratch: [UInt64] = [7]
            RadixSort.sortByUpperHalf(&keys, scratch: &scratch)
            #expect(keys == expected, "\(count) keys below \(upperLimit)")
        }
    }
}
