import Foundation
import Testing
import HealthModel
@testable import LedgerCore
import LedgerLog
import TestSupport

/// Rule E11 (an import is a transaction) and S7 (no snapshot inside one), on the
/// ledger's own API and on logs written past the rules.
struct ImportTransactionTests {
    static let source = AppRegistration(bundleIdentifier: "export:Watch", name: "Watch", readPurpose: nil, sharePurpose: nil,
                                        imported: true)

    static func start(_ n: Int) -> ExportImportStart {
        ExportImportStart(importId: fixedUUID(n), exportDate: "2019-06-17 21:07:11 -0400", locale: "en_US", exportVersion: "11",
                          sourcePath: "export.zip", me: [])
    }

    static func finish(_ n: Int) -> ExportImportFinish {
        ExportImportFinish(importId: fixedUUID(n), counts: [ImportCount("records", 1)], contentSHA256: [UInt8](repeating: 1, count: 32))
    }

    /// The commands an import appends: its source, the grant, one step count.
    static func body(uuid: Int) throws -> [LedgerCommand] {
        [.registerApp(source),
         .decideAuthorization(bundleIdentifier: source.bundleIdentifier, decisions: [(.quantity(.stepCount), .granted, nil)],
                              basis: .imported),
         .save(bundleIdentifier: source.bundleIdentifier,
               samples: [try quantitySample(.stepCount, 12, "count", at: "2019-06-01T08:00:00Z", uuid: fixedUUID(uuid))])]
    }

    static func replay(_ fs: any LogFileSystem, limit: ReplayLimit = .end) throws -> StateLoader.Loaded {
        try StateLoader.load(fs, reader: try LogReader(fs), limit: limit, useSnapshots: false)
    }

    /// E11: nothing of an open transaction is seen — not by another reader of the log
    /// (it stops before the transaction's batch), not by a read of the store (it waits
    /// for the close) — and all of it once it commits, in the store and in a replay.
    @Test func e11AnOpenTransactionIsSeenByNoReaderUntilItCommits() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        try await ledger.grant(appA, share: [.quantity(.bodyMass)])
        let before = await ledger.state
        let t = try await ledger.beginImport(Self.start(40))
        _ = try await ledger.appendBestEffort(try Self.body(uuid: 41), in: t)
        try await ledger.sync()
        let outside = try Self.replay(fs)
        #expect(outside.openImport == OpenImport(importId: fixedUUID(40), startedAt: t.startedAt, position: outside.position!))
        #expect(StateDifference.first(outside.state, before) == nil)
        // The change feed of another reader: nothing of the open import.
        var outsideState = outside.state
        let none = try ChangeFeed.changes(of: [.quantity(.stepCount)], predicate: nil, anchor: nil, limit: 0, app: nil,
                                          ledgerId: fixedLedgerId, fs: fs, in: &outsideState)
        #expect(none.changes.isEmpty)
        // A read through the store waits for the commit.
        let reader = Task { try await ledger.read(as: .owner) { view in try view.samples(SampleQuery(type: .quantity(.stepCount))).samples.count } }
        try await Task.sleep(nanoseconds: 50_000_000)
        try await ledger.commitImport(t, absence: nil, finish: Self.finish(40))
        #expect(try await reader.value == 1)
        let inside = try Self.replay(fs)
        #expect(inside.openImport == nil)
        var insideState = inside.state
        let added = try ChangeFeed.changes(of: [.quantity(.stepCount)], predicate: nil, anchor: none.newAnchor, limit: 0, app: nil,
                                           ledgerId: fixedLedgerId, fs: fs, in: &insideState)
        #expect(added.changes.map { (change: Change) -> UUID? in if case .added(let s) = change { s.uuid } else { nil } } == [fixedUUID(41)])
        #expect(StateDifference.first(inside.state, await ledger.state) == nil)
        #expect(inside.state.imports.map(\.finishedAt) == [await ledger.lastSequence])
        // As of an event inside the import, the import is not yet visible.
        let asOf = try Self.replay(fs, limit: .sequence(t.startedAt + 1))
        #expect(asOf.openImport?.importId == fixedUUID(40))
        #expect(asOf.state.samples.count == 0)
        try await ledger.close()
        #expect(try LedgerVerifier.verify(fs).isIntact)
    }

    /// E11: no other caller's write lands inside a transaction, even one that reaches
    /// the ledger while the transaction's start is being appended (the transaction is
    /// open from its start's fold, before `beginImport` first suspends; it was opened
    /// only after the start's wait, and a write let in meanwhile became the import's).
    @Test func e11NoWriteLandsInsideATransactionWhileItBegins() async throws {
        for round in 0..<20 {
            let fs = SimulatedFileSystem()
            let ledger = try makeLedger(fs)
            let zones = ["Europe/Paris", "America/New_York", "Asia/Tokyo", "Africa/Cairo", "Pacific/Honolulu",
                         "Europe/Oslo", "America/Lima", "Asia/Kolkata"]
            try await withThrowingTaskGroup(of: ImportTransaction?.self) { group in
                group.addTask { try await ledger.beginImport(Self.start(40)) }
                for zone in zones {
                    group.addTask {
                        try await ledger.append(.setOwnerTimeZone(zone))
                        return nil
                    }
                }
                var committed = false
                for try await result in group {
                    guard let t = result else { continue }
                    // The writes still waiting are let in by the commit.
                    try await ledger.commitImport(t, absence: nil, finish: Self.finish(40))
                    committed = true
                }
                #expect(committed)
            }
            try await ledger.close()
            let kinds = try LogReader(fs).records(1...UInt64(10)).map(\.kind)
            let start = try #require(kinds.firstIndex(of: EventKind.importStarted.rawValue))
            let finish = try #require(kinds.firstIndex(of: EventKind.importFinished.rawValue))
            #expect(finish == start + 1, "round \(round): events \(kinds[start...finish]) inside the import")
            #expect(kinds.count == 10)
        }
    }

    /// E11 when the disk fails at the commit: the ledger fails (every write refused),
    /// and its readers still see nothing of the import — the projections are rebuilt
    /// from the log file, which holds no finished import — not the events the import
    /// folded before the failure.
    @Test func e11AFailedCommitShowsReadersNothingOfTheImport() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        try await ledger.grant(appA, share: [.quantity(.bodyMass)])
        let before = await ledger.state
        let t = try await ledger.beginImport(Self.start(40))
        _ = try await ledger.appendBestEffort(try Self.body(uuid: 41), in: t)
        #expect(try await ledger.read(in: t) { $0.samples.count } == 1)  // inside: the import's own sample
        fs.fault = .failWrite(number: fs.writeCount + 1, errno: ENOSPC)
        await #expect {
            try await ledger.commitImport(t, absence: nil, finish: Self.finish(40))
        } throws: { error in
            if case LogError.noSpace = error { true } else { false }
        }
        await #expect(throws: LedgerError.self) { try await ledger.abortImport(t, reason: "the disk is full") }
        let after = await ledger.read { $0 }
        #expect(after.samples.count == 0)
        #expect(after.openTransaction == nil)
        #expect(after.imports.isEmpty)
        #expect(after.eventCounts == before.eventCounts)
        await #expect(throws: LedgerError.self) { try await ledger.append(.setOwnerTimeZone("Europe/Paris")) }
    }

    /// E11: an aborted transaction leaves every projection as a log without it would
    /// (but the position), in the store, in a replay, and in verify.
    @Test func e11AnAbortedTransactionAppliesNothing() async throws {
        let fs = SimulatedFileSystem(), reference = SimulatedFileSystem()
        for (target, abort) in [(fs, true), (reference, false)] {
            let ledger = try makeLedger(target)
            try await ledger.grant(appA, share: [.quantity(.bodyMass)])
            if abort {
                let t = try await ledger.beginImport(Self.start(40))
                _ = try await ledger.appendBestEffort(try Self.body(uuid: 41), in: t)
                try await ledger.abortImport(t, reason: "malformedXML: line 3")
                #expect(await ledger.state.eventsNotApplied == 5)  // start, 3 commands' events, abort
            }
            try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier,
                                           samples: [try quantitySample(.bodyMass, 70, "kg", at: "2026-02-01T08:00:00Z", uuid: fixedUUID(2))]))
            try await ledger.close()
        }
        let aborted = try Self.replay(fs).state, plain = try Self.replay(reference).state
        #expect(StateDifference.first(aborted, plain, ignoringPosition: true) == nil)
        #expect(aborted.lastSequence == plain.lastSequence + 5)
        #expect(aborted.imports.isEmpty && aborted.registry.apps.count == 1)
        let report = try LedgerVerifier.verify(fs)
        #expect(report.isIntact)
        #expect(report.digest == aborted.digest())
        // The store after reopening: the same.
        let reopened = try Ledger.open(fs)
        #expect(StateDifference.first(await reopened.state, aborted) == nil)
        try await reopened.close()
    }

    /// E11: the next writer aborts a transaction its process left open, before
    /// anything else; the importId can then start again.
    @Test func e11TheNextWriterAbortsADanglingTransaction() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        let t = try await ledger.beginImport(Self.start(40))
        _ = try await ledger.appendBestEffort(try Self.body(uuid: 41), in: t)
        try await ledger.sync()
        ledger.abandon()  // the importing process died
        // verify: valid history, the open import's events decoded but not applied.
        let report = try LedgerVerifier.verify(fs)
        #expect(report.isIntact)
        #expect(report.events == 0 && report.openImport?.startedAt == 1 && report.eventsOfOpenImport == 4)
        let reopened = try Ledger.open(fs)
        #expect(await reopened.state.eventsNotApplied == 5)
        #expect(await reopened.state.samples.count == 0)
        try await reopened.close()
        let records = try LogReader(fs).records(1...5)
        #expect(records.map(\.kind) == [9, 1, 3, 6, 20])
        guard case .importAborted(let abort) = try EventCodec.decode(records[4]) else {
            Issue.record("no importAborted")
            return
        }
        #expect(abort.importId == fixedUUID(40))
        #expect(abort.reason == "the import stopped before it finished; found open when the ledger was opened for writing")
        #expect(try LedgerVerifier.verify(fs).isIntact)
    }

    /// E11 refusals: an abort naming no open transaction, a transaction starting inside
    /// another, a transaction's start that does not begin its batch — each named by
    /// verify with its rule.
    @Test func e11LogsWrittenPastTheRulesAreNamed() async throws {
        func problem(_ batches: [[Event]]) async throws -> ReplayError? {
            let fs = SimulatedFileSystem()
            let writer = try LogWriter.create(fs, ledgerId: fixedLedgerId, options: testOptions)
            for events in batches {
                var batch = RecordBatch()
                for event in events { EventCodec.append(event, to: &batch) }
                try await writer.append(batch)
            }
            try await writer.close()
            return try LedgerVerifier.verify(fs).eventProblem
        }
        let stray = try await problem([[.importAborted(ExportImportAbort(importId: fixedUUID(7), reason: "x"))]])
        #expect(stray == .ruleViolation(sequence: 1, offset: 64 + 40,
                                        .importMismatch(fixedUUID(7), "is not an open import transaction", rule: "E11")))
        #expect(stray.map { "\($0)".hasSuffix("[E11]") } == true)
        let nested = try await problem([[.importStarted(Self.start(40))], [.importStarted(Self.start(41))],
                                        [.importFinished(Self.finish(41))], [.importFinished(Self.finish(40))]])
        #expect(nested.map { "\($0)" }?.contains("starts while import \(fixedUUID(40).uuidString) is open [E11]") == true)
        let inside = try await problem([[.appRegistered(app: 1, appA), .importStarted(Self.start(40))], [.importFinished(Self.finish(40))]])
        #expect(inside.map { "\($0)" }?.contains("starts inside a batch: a transaction begins its batch [E11]") == true)
    }

    /// E11, "inside a transaction no other transaction starts", also when a legacy
    /// (version 1) import started inside it: the rules looked only at the last import
    /// started, so a second transaction was folded and the state held two open ones
    /// (found by `LedgerState.Invariant.oneOpenTransaction` after the fold).
    @Test func e11NoTransactionStartsInsideAnotherBehindALegacyImport() async throws {
        let legacy = ExportImportStart(importId: fixedUUID(50), contentSHA256: [UInt8](repeating: 7, count: 32), exportDate: nil,
                                       locale: nil, exportVersion: nil, sourcePath: "old.zip", again: false, me: [])
        let fs = SimulatedFileSystem()
        let writer = try LogWriter.create(fs, ledgerId: fixedLedgerId, options: testOptions)
        for events: [Event] in [[.importStarted(Self.start(40))], [.importStarted(legacy)], [.importStarted(Self.start(41))],
                                [.importFinished(Self.finish(41))], [.importFinished(Self.finish(40))]] {
            var batch = RecordBatch()
            for event in events { EventCodec.append(event, to: &batch) }
            try await writer.append(batch)
        }
        try await writer.close()
        let problem = try LedgerVerifier.verify(fs).eventProblem
        #expect(problem.map { "\($0)" }?.contains("starts while import \(fixedUUID(40).uuidString) is open [E11]") == true)
        #expect(problem?.sequence == 3)
    }

    /// S7: a snapshot asked for while a transaction is open waits for its close, so
    /// that it stands outside it.
    @Test func s7NoSnapshotInsideATransaction() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        let t = try await ledger.beginImport(Self.start(40))
        _ = try await ledger.appendBestEffort(try Self.body(uuid: 41), in: t)
        let snapshot = Task { try await ledger.snapshot() }
        try await Task.sleep(nanoseconds: 50_000_000)
        #expect(SnapshotFile.list(fs).isEmpty)
        let stored = try await ledger.commitImport(t, absence: nil, finish: Self.finish(40))
        let name = try await snapshot.value
        #expect(try SnapshotFile.header(fs, name).lastSequence == stored.last!.sequence)
        try await ledger.close()
        #expect(try LedgerVerifier.verify(fs).isIntact)
    }
}
