import Foundation
import HealthLedger
import HealthModel
import LedgerCore
import LedgerLog
import Testing
import TestSupport

/// Why a81fdf2 was reverted: the ledger folds an event into its
/// projections when the event is enqueued, before the writer has written its record.
/// In-process readers (anchored queries, the change stream, the observer, sample
/// queries) must only ever be told of events whose records are in the log file, or
/// they read bytes that are not there and report damage in durable bytes.
struct FollowerRaceTests {
    let mass: Set<ObjectType> = [.quantity(.bodyMass)]

    func additions(_ set: ChangeSet) -> [UUID] {
        set.changes.compactMap { if case .added(let s) = $0 { s.uuid } else { nil } }
    }

    /// A deferred save is folded at once but its record stays in the writer's queue
    /// (no sync, far below the write-behind mark). A read right after it waits until
    /// the record is written — not synced — and finds it; before, the read looked
    /// for the record in the file and reported damage.
    @Test func aReadRightAfterADeferredSaveFindsItsRecordWrittenNotSynced() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        let app = try await HealthStore(ledger: ledger, app: tracker)
        try await app.requestAuthorization(toShare: [.quantity(.bodyMass)], read: [.quantity(.bodyMass)])
        let owner = OwnerStore(ledger: ledger)
        try await owner.grantRequested(app: tracker.bundleIdentifier)
        let written = ledger.logLength
        let syncs = fs.syncCount
        let sample = try weight(70, at: "2026-03-01T08:00:00Z")
        try await ledger.append(.save(bundleIdentifier: tracker.bundleIdentifier, samples: [sample]), durability: .deferred)
        // Enqueued and folded, not yet in the file: the ledger's length says so.
        #expect(ledger.logLength == written)
        let changes = try await owner.anchoredObjects(of: mass, anchor: nil)
        #expect(additions(changes) == [sample.uuid])
        #expect(ledger.logLength > written)
        #expect(fs.syncCount == syncs, "a read waits for the write, not for durability")
        #expect(try await app.samples(SampleQuery(type: .quantity(.bodyMass))).samples.map(\.uuid) == [sample.uuid])
        let next = try weight(71, at: "2026-03-02T08:00:00Z")
        try await ledger.append(.save(bundleIdentifier: tracker.bundleIdentifier, samples: [next]), durability: .deferred)
        #expect(try await owner.mostRecentSample(for: .quantity(.bodyMass))?.uuid == next.uuid)
        try await ledger.close()
    }

    /// The race under load, on real files: four tasks saving one sample at a time
    /// durably, two saving batches deferred (syncing now and then), a thread
    /// burning CPU; meanwhile three followers read every commit as it is published —
    /// the change stream (woken by the log watcher), an anchored query polled as fast
    /// as it answers, and the observer with a sample query after each notification.
    /// None may fail; the stream and the poller each see every saved sample exactly
    /// once, in log order. (No deadline decides the outcome: under a sanitizer, with
    /// the rest of the suite running beside it, this can take minutes. A watchdog
    /// only stops the followers if they hang.)
    @Test func followersOfEveryCommitUnderLoadAreToldOnlyOfWrittenRecords() async throws {
        let dir = TemporaryDirectory()
        let ledger = try Ledger.create(dir.fs)
        let app = try await HealthStore(ledger: ledger, app: tracker)
        try await app.requestAuthorization(toShare: [.quantity(.bodyMass)], read: [.quantity(.bodyMass)])
        let owner = OwnerStore(ledger: ledger)
        try await owner.grantRequested(app: tracker.bundleIdentifier)
        let load = CPULoad(threads: 1)
        defer { load.stop() }

        let durableTasks = 4, deferredTasks = 2, rounds = 20
        func samples(task: Int, round: Int, count: Int) throws -> [Sample] {
            try (0..<count).map { k in
                let minute = (task * 1_000 + round) * 10 + k
                return try weight(50 + Double(minute % 50), at: ISO8601.string(date("2026-01-01T00:00:00Z").addingTimeInterval(Double(minute) * 60)))
            }
        }
        let planned = try (0..<(durableTasks + deferredTasks)).map { t in
            try (0..<rounds).map { r in try samples(task: t, round: r, count: t < durableTasks ? 1 : 1 + r % 5) }
        }
        let total = planned.joined().joined().count

        let stream = Task { () throws -> [UUID] in
            var seen: [UUID] = []
            for try await set in owner.changes(of: mass, from: nil) {
                seen += additions(set)
                if seen.count >= total { break }
            }
            return seen
        }
        let poller = Task { () throws -> [UUID] in
            var seen: [UUID] = []
            var anchor: ChangeAnchor?
            while seen.count < total && !Task.isCancelled {
                let page = try await owner.anchoredObjects(of: mass, anchor: anchor, limit: 16)
                seen += additions(page)
                anchor = page.newAnchor
                await Task.yield()
            }
            return seen
        }
        let observer = Task { () throws -> Int in
            var notifications = 0
            for try await _ in try await owner.observe(mass) {
                notifications += 1
                if try await owner.samples(SampleQuery(type: .quantity(.bodyMass))).samples.count >= total { break }
            }
            return notifications
        }
        let watchdog = Task {
            try await Task.sleep(nanoseconds: 900 * 1_000_000_000)
            stream.cancel()
            poller.cancel()
            observer.cancel()
        }

        try await withThrowingTaskGroup(of: Void.self) { group in
            for (t, plan) in planned.enumerated() {
                group.addTask {
                    for (r, batch) in plan.enumerated() {
                        if t < durableTasks {
                            try await app.save(batch)
                        } else {
                            try await ledger.append(.save(bundleIdentifier: tracker.bundleIdentifier, samples: batch),
                                                     durability: .deferred)
                            if r % 8 == 7 { try await ledger.sync() }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        try await ledger.sync()

        let streamed = try await stream.value
        let polled = try await poller.value
        let notifications = try await observer.value
        watchdog.cancel()
        let logOrder = try await owner.anchoredObjects(of: mass, anchor: nil).changes.compactMap {
            if case .added(let s) = $0 { s.uuid } else { nil }
        }
        #expect(logOrder.count == total)
        #expect(Set(logOrder) == Set(planned.joined().joined().map(\.uuid)))
        // Compared by count and first difference: the lists are long.
        try #require(streamed.count == total)
        #expect(streamed.indices.first { streamed[$0] != logOrder[$0] } == nil)
        try #require(polled.count == total)
        #expect(polled.indices.first { polled[$0] != logOrder[$0] } == nil)
        #expect(notifications >= 1)
        try await ledger.close()
        #expect(try LogVerifier.verify(dir.fs).isIntact)
    }
}
