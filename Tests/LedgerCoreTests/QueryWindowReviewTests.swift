import Foundation
import Testing
import HealthModel
@testable import LedgerCore
import LedgerChecksums
import LedgerKeys
import LedgerLog
import LedgerReporting
import TestSupport

/// The walk in windows, further (from the review of 581075c): correlation members,
/// refused samples, reused readers, samples kept past their window, the writer thread.
struct QueryWindowReviewTests {
    static func plainLine(_ s: PlainQuantityBytes) -> String {
        var bytes: [UInt8] = []
        SampleJSONWriter.append(s, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Lines of `q` through `reader` with a plain writer (windows when the reader has them).
    static func plainLines(_ reader: SampleReader, _ q: SampleQuery, _ visibility: QueryVisibility, after: UUID? = nil,
                           _ state: inout LedgerState) throws -> [String] {
        var got: [String] = []
        let next = try reader.forEach(q, visibility: visibility, after: after, in: &state, plain: { got.append(Self.plainLine($0)) }) {
            got.append(PlainQuantityReadTests.line($0))
        }
        #expect(next == nil)
        return got
    }

    static func decodedLines(_ fs: any LogFileSystem, _ q: SampleQuery, _ visibility: QueryVisibility, after: UUID? = nil,
                             _ state: inout LedgerState) throws -> [String] {
        var out: [String] = []
        try SampleReader(fs, chunkSize: 7, tableBudget: 1 << 20, windowBytes: 0).forEach(q, visibility: visibility, after: after,
                                                                                         in: &state) {
            out.append(PlainQuantityReadTests.line($0))
        }
        return out
    }

    /// A food log: standalone energy samples (fractional, non-ASCII metadata, a device,
    /// equal start dates) and food correlations holding two or three energy members (two
    /// members of one correlation in one window), in shuffled records by two apps, some
    /// deleted (a whole correlation, and a standalone sample).
    static func foodLedger(_ ledger: Ledger, seed: UInt64, records: Int = 10) async throws -> [UUID] {
        let energy = QuantityType.dietaryEnergyConsumed
        try await ledger.grant(appA, share: [.quantity(energy), .quantity(.dietaryProtein)])
        try await ledger.grant(appB, share: [.quantity(energy), .quantity(.dietaryProtein)])
        var rng = SeededGenerator(seed: seed)
        let base = date("2026-02-01T00:00:00Z")
        var all: [UUID] = [], deletable: [UUID] = []
        for r in 0..<records {
            var batch: [Sample] = []
            for i in 0..<40 {
                let start = base.addingTimeInterval(Double(rng.next() % 200) * 600)
                let value = i % 5 == 0 ? Double(rng.next() % 900) + 0.25 : Double(rng.next() % 900)
                var metadata = Metadata()
                if i % 7 == 0 { metadata.append("note", .string("Café ☕ \(i)")) }
                if i % 11 == 0 { metadata.append("HKWasUserEntered", .bool(true)) }
                let s = try QuantitySample(type: energy, quantity: try Quantity(value, unit: "kcal"), start: start,
                                           end: start.addingTimeInterval(60), metadata: metadata,
                                           device: i % 13 == 0 ? Device(name: "Scale") : nil)
                all.append(s.uuid)
                batch.append(.quantity(s))
                if i % 3 == 0 {
                    let t = base.addingTimeInterval(Double(rng.next() % 200) * 600)
                    var members = [
                        try QuantitySample(type: energy, quantity: try Quantity(Double(i) + 0.5, unit: "kcal"), start: t, end: t),
                        try QuantitySample(type: .dietaryProtein, quantity: try Quantity(3, unit: "g"), start: t, end: t),
                        try QuantitySample(type: energy, quantity: try Quantity(Double(i) + 100, unit: "kcal"), start: t, end: t),
                    ]
                    if i % 6 == 0 {
                        members.append(try QuantitySample(type: energy, quantity: try Quantity(7, unit: "kcal"), start: t, end: t))
                    }
                    let c = try Correlation(type: .food, start: t, end: t, objects: members)
                    all.append(contentsOf: members.map(\.uuid))
                    if i % 9 == 0 { deletable.append(c.uuid) }
                    batch.append(.correlation(c))
                }
            }
            try await ledger.append(.save(bundleIdentifier: (r % 3 == 2 ? appB : appA).bundleIdentifier, samples: batch))
        }
        try await ledger.append(.delete(bundleIdentifier: nil, uuids: deletable + stride(from: 1, to: all.count, by: 29).map { all[$0] },
                                        reason: nil))
        return all
    }

    /// Correlation members (two or three of the queried type in one correlation),
    /// fractional values, non-ASCII metadata, devices, deletions, two apps: windows of
    /// every size, sample tables dropped at every record, both directions, predicates,
    /// visibilities and filters — the decoded read's lines.
    @Test func correlationMembersAndRefusedSamplesInWindows() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        let all = try await Self.foodLedger(ledger, seed: 5)
        let b = await ledger.state.registry.ordinal(of: appB.bundleIdentifier)!
        let energy = ObjectType.quantity(.dietaryEnergyConsumed)
        let predicates: [DatePredicate?] = [
            nil,
            DatePredicate(start: date("2026-02-01T06:00:00Z"), end: date("2026-02-01T20:00:00Z"), strictStartDate: true, strictEndDate: true),
        ]
        let filters: [SamplePredicate?] = [nil, .metadata("HKWasUserEntered", .equal, .bool(true)),
                                           .quantity(.greater, try Quantity(100, unit: "kcal"))]
        var compared = 0
        for ascending in [true, false] {
            for predicate in predicates {
                for filter in filters {
                    for visibility in [QueryVisibility.everything, .ownSamplesOnly(b)] {
                        for (windowBytes, tableBudget) in [(1, 1), (1, 1 << 20), (4096, 50), (1 << 20, 1 << 20)] {
                            let q = SampleQuery(type: energy, predicate: predicate, sort: [.init(.startDate, ascending: ascending)],
                                                filter: filter)
                            let (got, expected) = try await ledger.read { state in
                                let reader = try SampleReader(fs, chunkSize: 5, tableBudget: tableBudget, windowBytes: windowBytes)
                                let got = try Self.plainLines(reader, q, visibility, &state)
                                // The whole timeline: windows, but at 1 MiB, where one window
                                // would take it all (the walk in chunks). A filter or predicate
                                // leaving few places may do so at any size.
                                if predicate == nil && filter == nil {
                                    #expect((reader.reads.windowsGathered > 0) == (windowBytes < 1 << 20), "\(windowBytes)")
                                }
                                return (got, try Self.decodedLines(fs, q, visibility, &state))
                            }
                            #expect(got == expected, "\(ascending) \(String(describing: predicate)) \(String(describing: filter)) \(visibility) \(windowBytes) \(tableBudget)")
                            compared += got.count
                        }
                    }
                }
            }
        }
        #expect(compared > 5_000)
        // After a cursor that is a correlation member, in both directions.
        for ascending in [true, false] {
            let q = SampleQuery(type: energy, sort: [.init(.startDate, ascending: ascending)])
            let cursor = all[all.count / 2 + 1]
            let (got, expected) = try await ledger.read { state in
                let got = try Self.plainLines(try SampleReader(fs, chunkSize: 5, tableBudget: 10, windowBytes: 1), q, .everything,
                                              after: cursor, &state)
                return (got, try Self.decodedLines(fs, q, .everything, after: cursor, &state))
            }
            #expect(!got.isEmpty && got == expected)
        }
    }

    /// One reader, several queries: held payloads and sample tables left by an earlier
    /// query (decoded, windowed, paged) are used by the next — every answer the
    /// decoded read's.
    @Test func aReaderReusedAcrossQueriesAnswersAsFreshOnes() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        _ = try await Self.foodLedger(ledger, seed: 9)
        let energy = ObjectType.quantity(.dietaryEnergyConsumed)
        let asc = SampleQuery(type: energy, sort: [.init(.startDate, ascending: true)])
        let desc = SampleQuery(type: energy, sort: [.init(.startDate, ascending: false)])
        for payloadBudget in [0, 3_000, 1 << 30] {
            try await ledger.read { state in
                let expectedAsc = try Self.decodedLines(fs, asc, .everything, &state)
                let expectedDesc = try Self.decodedLines(fs, desc, .everything, &state)
                let reader = try SampleReader(fs, chunkSize: 16, tableBudget: 1 << 20, payloadBudget: payloadBudget, windowBytes: 1)
                // A decoded walk first: holds payloads within the budget.
                var decoded: [String] = []
                try reader.forEach(desc, visibility: .everything, in: &state) { decoded.append(PlainQuantityReadTests.line($0)) }
                #expect(decoded == expectedDesc)
                #expect(try Self.plainLines(reader, asc, .everything, &state) == expectedAsc, "\(payloadBudget)")
                #expect(try Self.plainLines(reader, desc, .everything, &state) == expectedDesc, "\(payloadBudget)")
                // Paged after windows (tables kept, payloads not): the chunk walk.
                var paged: [String] = []
                var after: UUID?
                repeat {
                    var q = asc
                    q.limit = 37
                    after = try reader.forEach(q, visibility: .everything, after: after, in: &state,
                                               plain: { paged.append(Self.plainLine($0)) }) { paged.append(PlainQuantityReadTests.line($0)) }
                } while after != nil
                #expect(paged == expectedAsc, "\(payloadBudget)")
            }
        }
    }

    /// Every sample handed out is kept alive past the walk (as a writer thread lagging
    /// behind would): the window's reset must never write into a chunk a kept sample
    /// still reads. Rendered after the walk, on another thread, the lines are the
    /// decoded read's.
    @Test func samplesKeptPastTheirWindowKeepTheirBytes() async throws {
        let fs = SimulatedFileSystem()
        let (ledger, _) = try await QueryEngineTests.shuffledLedger(fs, records: 30, perRecord: 200, seed: 3)
        let q = SampleQuery(type: QueryEngineTests.steps, sort: [.init(.startDate, ascending: false)])
        let (kept, decodedCount, expected) = try await ledger.read { state -> ([PlainQuantityBytes], Int, [String]) in
            var kept: [PlainQuantityBytes] = []
            var decoded = 0
            let reader = try SampleReader(fs, chunkSize: 64, tableBudget: 1 << 20, windowBytes: 1)
            try reader.forEach(q, visibility: .everything, in: &state, plain: { kept.append($0) }) { _ in decoded += 1 }
            #expect(reader.reads.windowsGathered == 8)
            return (kept, decoded, try Self.decodedLines(fs, q, .everything, &state))
        }
        #expect(decodedCount == 0 && kept.count == expected.count)
        let rendered = await Task.detached { kept.map(Self.plainLine) }.value
        #expect(rendered == expected)
    }

    /// Through the CLI's writer thread: lines written while the next windows are
    /// gathered are the decoded read's.
    @Test func linesWrittenOnTheWriterThreadMatchTheDecodedRead() async throws {
        let fs = SimulatedFileSystem()
        let (ledger, _) = try await QueryEngineTests.shuffledLedger(fs, records: 40, perRecord: 250, seed: 8)
        let q = SampleQuery(type: QueryEngineTests.steps, sort: [.init(.startDate, ascending: true)])
        let out = Locked<[UInt8]>([])
        let writer = PlainSampleWriter(write: { s, bytes in
            SampleJSONWriter.append(s, to: &bytes)
            bytes.append(0x0A)
        }, emit: { bytes in out.withLock { $0.append(contentsOf: bytes) } })
        let expected = try await ledger.read { state -> [String] in
            let reader = try SampleReader(fs, chunkSize: 64, tableBudget: 1 << 20, windowBytes: 1)
            try reader.forEach(q, visibility: .everything, in: &state, plain: { writer.append($0) }) { _ in Issue.record("decoded") }
            writer.drain()
            return try Self.decodedLines(fs, q, .everything, &state)
        }
        writer.finish()
        let lines = String(decoding: out.withLock { $0 }, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines == expected)
    }
}

/// Sealed (encrypted) ledgers: a record's bytes in the file are ciphertext, so the walk
/// in windows must read a sealed record whole (and open it) every time it is not held,
/// never a span of it — whatever tables an earlier window or query left.
struct QueryWindowSealedTests {
    @Test func sealedRecordsAreReadWholeInEveryWindow() async throws {
        let folder = try ErasureTests.Folder()
        let ledger = try folder.create()
        _ = try await QueryWindowReviewTests.foodLedger(ledger, seed: 21, records: 12)
        try await ledger.close()
        let fs = try folder.fs()
        var state = try StateLoader.load(fs, reader: try LogReader(fs)).state
        let energy = ObjectType.quantity(.dietaryEnergyConsumed)
        for ascending in [true, false] {
            let q = SampleQuery(type: energy, sort: [.init(.startDate, ascending: ascending)])
            let expected = try QueryWindowReviewTests.decodedLines(fs, q, .everything, &state)
            #expect(expected.count > 400)
            for (tableBudget, payloadBudget) in [(1, 0), (1 << 20, 0), (1 << 20, 1 << 30), (200, 5_000)] {
                let reader = try SampleReader(fs, chunkSize: 9, tableBudget: tableBudget, payloadBudget: payloadBudget, windowBytes: 1)
                // Twice on one reader: the second walk meets the tables the first left.
                #expect(try QueryWindowReviewTests.plainLines(reader, q, .everything, &state) == expected, "\(tableBudget) \(payloadBudget)")
                #expect(try QueryWindowReviewTests.plainLines(reader, q, .everything, &state) == expected, "\(tableBudget) \(payloadBudget)")
                // A decoded walk (holding what the budget allows), then windows again.
                _ = try QueryWindowReviewTests.decodedLines(fs, q, .everything, &state)
                var decoded: [String] = []
                try reader.forEach(q, visibility: .everything, in: &state) { decoded.append(PlainQuantityReadTests.line($0)) }
                #expect(decoded == expected)
                #expect(try QueryWindowReviewTests.plainLines(reader, q, .everything, &state) == expected, "\(tableBudget) \(payloadBudget)")
            }
        }
    }
}

/// Hostile input to the walk in windows: a mapped snapshot whose slot column is forged
/// with valid checksums, a damaged log. The walk fails with an error — never traps,
/// never prints a line the log does not hold there — as the walk in chunks does.
struct QueryWindowHostileTests {
    /// Three saves (5 steps; 300 steps; 4 steps and a blood pressure), a deletion, a
    /// snapshot on the real file system. Returns the snapshot's name and the slots
    /// (read whole).
    static func ledger(_ dir: TemporaryDirectory) async throws -> (String, [SampleIndex.Slot]) {
        let ledger = try Ledger.create(dir.fs, options: LedgerOptions(log: testOptions))
        try await ledger.grant(appA, share: [QueryEngineTests.steps, .quantity(.bloodPressureSystolic), .quantity(.bloodPressureDiastolic)])
        var rng = SeededGenerator(seed: 77)
        func steps(_ n: Int) throws -> [Sample] {
            try (0..<n).map { _ in
                try quantitySample(.stepCount, Double(rng.next() % 900), "count",
                                   at: String(format: "2026-01-01T%02d:%02d:00Z", Int(rng.next() % 24), Int(rng.next() % 60)))
            }
        }
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: try steps(5)))
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: try steps(300)))
        let t = date("2026-01-01T12:00:00Z")
        let sys = try QuantitySample(type: .bloodPressureSystolic, quantity: try Quantity(120, unit: "mmHg"), start: t, end: t)
        let dia = try QuantitySample(type: .bloodPressureDiastolic, quantity: try Quantity(80, unit: "mmHg"), start: t, end: t)
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier,
                                      samples: try steps(4) + [.correlation(try Correlation(type: .bloodPressure, start: t, end: t, objects: [sys, dia]))]))
        let state = await ledger.state
        try await ledger.append(.delete(bundleIdentifier: nil, uuids: [try state.samples.uuid(7)], reason: nil))
        let name = try await ledger.snapshot()
        try await ledger.close()
        let read = try MappedSnapshotTests.load(dir, mapped: false)
        return (name, Array(read.samples.slots))
    }

    /// The lines a plain walk prints (windows or chunks), or its error.
    static func walk(_ dir: TemporaryDirectory, windowBytes: Int, type: ObjectType = QueryEngineTests.steps,
                     ascending: Bool = true, state loaded: LedgerState? = nil) -> (lines: [String], error: (any Error)?) {
        var lines: [String] = []
        do {
            var state = try loaded ?? MappedSnapshotTests.load(dir, mapped: true)
            let reader = try SampleReader(dir.fs, chunkSize: 16, tableBudget: 1 << 20, windowBytes: windowBytes)
            try reader.forEach(SampleQuery(type: type, sort: [.init(.startDate, ascending: ascending)]), visibility: .everything,
                               in: &state, plain: { lines.append(QueryWindowReviewTests.plainLine($0)) }) {
                lines.append(PlainQuantityReadTests.line($0))
            }
            return (lines, nil)
        } catch {
            return (lines, error)
        }
    }

    static func setWord(_ bytes: inout [UInt8], _ slots: MappedSnapshotTests.Place, slot: Int, _ change: (UInt64) -> UInt64) {
        bytes.withUnsafeMutableBytes { raw in
            let at = slots.array + 24 * slot + 16
            raw.storeBytes(of: change(raw.loadUnaligned(fromByteOffset: at, as: UInt64.self)), toByteOffset: at, as: UInt64.self)
        }
    }

    @Test func forgedSlotOffsetsFailTheWalkInWindows() async throws {
        let dir = TemporaryDirectory()
        let (name, slots) = try await Self.ledger(dir)
        let path = dir.path + "/" + name
        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let place = try #require(MappedSnapshotTests.place(of: 10, in: original))
        let small = slots[0].recordOffset, big = slots[5].recordOffset, last = slots[305].recordOffset
        #expect(small < big && big < last)
        let mask: UInt64 = SampleIndex.Slot.offsetLimit - 1
        func offset(_ o: UInt64) -> (UInt64) -> UInt64 { { $0 & ~mask | o } }
        let cases: [(String, (inout [UInt8]) -> Void)] = [
            ("position past the small record's samples", { Self.setWord(&$0, place, slot: 100, offset(small)) }),
            ("offset past the log's end", { Self.setWord(&$0, place, slot: 100, offset(mask)) }),
            ("offset 0 (the log header)", { Self.setWord(&$0, place, slot: 100, offset(0)) }),
            ("offset inside a record", { Self.setWord(&$0, place, slot: 100, offset(big + 8)) }),
            ("offsets not ascending (swapped)", {
                Self.setWord(&$0, place, slot: 2, offset(big))
                Self.setWord(&$0, place, slot: 200, offset(small))
            }),
            ("a correlation member's offset to the plain record", { Self.setWord(&$0, place, slot: 310, offset(big)) }),
            ("app overflow without an entry (no failure: no source)", { Self.setWord(&$0, place, slot: 50) { $0 | 0x7FF << 53 } }),
            ("every offset the last record's", { b in for s in 0..<305 { Self.setWord(&b, place, slot: s, offset(last)) } }),
        ]
        for (what, change) in cases {
            var bytes = original
            change(&bytes)
            MappedSnapshotTests.resign(&bytes, section: 10)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            for type in [QueryEngineTests.steps, .quantity(.bloodPressureSystolic)] {
                for ascending in [true, false] {
                    let windows = Self.walk(dir, windowBytes: 1, type: type, ascending: ascending)
                    let chunks = Self.walk(dir, windowBytes: 0, type: type, ascending: ascending)
                    #expect((windows.error == nil) == (chunks.error == nil), "\(what) \(type) \(ascending): windows \(String(describing: windows.error)), chunks \(String(describing: chunks.error))")
                    if windows.error == nil { #expect(windows.lines == chunks.lines, "\(what)") }
                    let touched = what.hasPrefix("a correlation member") ? ObjectType.quantity(.bloodPressureSystolic) : QueryEngineTests.steps
                    if type == touched && !what.hasPrefix("app overflow") { #expect(windows.error != nil, "\(what) \(ascending)") }
                }
            }
        }
    }

    /// A flipped byte in a save's payload, and a log cut inside the last save: the walk
    /// in windows fails with the log's error.
    @Test func aDamagedLogFailsTheWalkInWindows() async throws {
        for cut in [false, true] {
            let dir = TemporaryDirectory()
            let (_, slots) = try await Self.ledger(dir)
            let state = try MappedSnapshotTests.load(dir, mapped: true)  // loaded first: the damage comes after
            let log = dir.path + "/" + LogWriter.logFileName
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: log)))
            let at = Int(slots[5].recordOffset) + LogFormat.recordHeaderLength + 400
            if cut { bytes.removeSubrange((Int(slots[305].recordOffset) + 40)...) } else { bytes[at] ^= 0x10 }
            try Data(bytes).write(to: URL(fileURLWithPath: log))
            let windows = Self.walk(dir, windowBytes: 1, state: state)
            let chunks = Self.walk(dir, windowBytes: 0, state: state)
            #expect(windows.error != nil && chunks.error != nil, "\(cut): \(String(describing: windows.error)) \(String(describing: chunks.error))")
        }
    }
}

/// A snapshot's block size is the file's word: a slot column rebuilt, every CRC right,
/// in blocks smaller than a slot (an element would span three or more blocks, and a
/// reader checks two) or not on a slot's alignment is refused at load (S3), and the
/// state comes from the log; in blocks of 48 bytes (most slots straddle two) it is
/// mapped and walked, in windows and in chunks, to the intact snapshot's lines.
struct ColumnBlockSizeTests {
    /// Section 10 rebuilt in blocks of `blockSize` bytes, every CRC right.
    static func reblock(_ bytes: [UInt8], blockSize: Int, section: UInt32 = 10) throws -> [UInt8] {
        let p = try #require(MappedSnapshotTests.place(of: section, in: bytes))
        let oldLength = Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: p.header + 8, as: UInt64.self) })
        let data = Array(bytes[p.array..<p.array + p.arrayLength])
        let crcs = stride(from: 0, to: data.count, by: blockSize).map { CRC32C.checksum(Array(data[$0..<min(data.count, $0 + blockSize)])) }
        var prefix: [UInt8] = []
        withUnsafeBytes(of: UInt32(blockSize).littleEndian) { prefix += $0 }
        withUnsafeBytes(of: UInt32(crcs.count).littleEndian) { prefix += $0 }
        for c in crcs { withUnsafeBytes(of: c.littleEndian) { prefix += $0 } }
        while prefix.count % 8 != 0 { prefix.append(0) }
        let payload = prefix + data
        var header = Array(bytes[p.header..<p.header + 24])
        header.withUnsafeMutableBytes {
            $0.storeBytes(of: UInt64(payload.count).littleEndian, toByteOffset: 8, as: UInt64.self)
            $0.storeBytes(of: CRC32C.checksum(prefix).littleEndian, toByteOffset: 16, as: UInt32.self)
        }
        var section = header + payload
        while section.count % 8 != 0 { section.append(0) }
        let oldEnd = p.payload + oldLength + (8 - oldLength % 8) % 8
        return Array(bytes[0..<p.header]) + section + Array(bytes[oldEnd...])
    }

    @Test func s3BlocksSmallerThanASlotOrOffItsAlignmentAreRefused() async throws {
        let dir = TemporaryDirectory()
        let (name, _) = try await QueryWindowHostileTests.ledger(dir)
        let expected = QueryWindowHostileTests.walk(dir, windowBytes: 0)
        #expect(expected.error == nil && expected.lines.count > 300)
        let path = dir.path + "/" + name
        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        for blockSize in [8, 16, 44, 48] {
            try Data(try Self.reblock(original, blockSize: blockSize)).write(to: URL(fileURLWithPath: path))
            let loaded = try StateLoader.load(dir.fs, reader: try LogReader(dir.fs), mapped: true)
            if blockSize == 48 {
                #expect(loaded.snapshot != nil && loaded.state.samples.slots.mappedSpan?.bytes.blockSize == 48)
            } else {
                #expect(loaded.snapshot == nil, "\(blockSize)")
                #expect(loaded.warnings.first?.hasPrefix("snapshot \(name) is damaged") == true && loaded.warnings.first?.contains("[S3]") == true,
                        "\(blockSize): \(loaded.warnings)")
            }
            for windowBytes in [0, 1] {
                let walked = QueryWindowHostileTests.walk(dir, windowBytes: windowBytes, state: loaded.state)
                #expect(walked.error == nil && walked.lines == expected.lines, "\(blockSize) \(windowBytes): \(String(describing: walked.error))")
            }
        }
    }
}
