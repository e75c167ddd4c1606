import Foundation
import HealthModel
import HealthLedger
import LedgerCore
import LedgerLog
import Testing
import TestSupport

/// The change feed as a long poll: it returns as soon as a commit brings a
/// change the reader may see, waits on through changes it may not, and returns empty
/// at its deadline.
struct LongPollTests {
    static let seven = UUID(uuidString: "00000000-0000-4000-8000-000000000007")!

    static func stores() async throws -> (OwnerStore, HealthStore, HealthStore) {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        let app = try await HealthStore(ledger: ledger, app: tracker)
        let other = try await HealthStore(ledger: ledger, app: healthApp)
        try await app.requestAuthorization(toShare: [.quantity(.bodyMass)], read: [])
        try await other.requestAuthorization(toShare: [.quantity(.bodyMass)], read: [])
        try await owner.grantRequested(app: tracker.bundleIdentifier)
        try await owner.grantRequested(app: healthApp.bundleIdentifier)
        return (owner, app, other)
    }

    @Test func aLongPollReturnsAsSoonAsACommitBringsAVisibleChange() async throws {
        try await OwnThreads.run {
            let (_, app, other) = try await Self.stores()
            let anchor = try await app.anchoredObjects(of: [.quantity(.bodyMass)], anchor: nil).newAnchor
            let started = Date()
            async let polled = app.anchoredObjects(of: [.quantity(.bodyMass)], anchor: anchor, waitingUpTo: 300)
            // Another app's save: the poller may not read it (no read permission), so it waits on.
            try await Task.sleep(for: .milliseconds(150))
            try await other.save(try weight(80, at: "2026-03-01T08:00:00Z"))
            try await Task.sleep(for: .milliseconds(150))
            let committed = Date()
            try await app.save(try weight(70, at: "2026-03-01T09:00:00Z", uuid: Self.seven))
            let set = try await polled
            let answered = Date()
            #expect(set.changes.count == 1)
            guard case .added(let added)? = set.changes.first else { Issue.record("not an addition: \(set.changes)"); return }
            #expect(added.uuid == Self.seven)
            // Soon after the commit, far before its deadline. (These threads are the test's
            // own, but the cores are shared with the rest of the suite: the 100 ms bound is
            // held where nothing else runs, by ServeCommandTests' tour and ServiceRouteTests.)
            #expect(answered.timeIntervalSince(committed) < 10, "answered \(answered.timeIntervalSince(committed)) s after the commit")
            #expect(answered.timeIntervalSince(started) < 300)
        }
    }

    @Test func aLongPollWithNothingNewReturnsEmptyAtItsDeadline() async throws {
        try await OwnThreads.run {
            let (_, app, _) = try await Self.stores()
            let anchor = try await app.anchoredObjects(of: [.quantity(.bodyMass)], anchor: nil).newAnchor
            let started = Date()
            let set = try await app.anchoredObjects(of: [.quantity(.bodyMass)], anchor: anchor, waitingUpTo: 0.3)
            let waited = Date().timeIntervalSince(started)
            #expect(set.changes.isEmpty)
            #expect(set.newAnchor == anchor)
            #expect(waited >= 0.29, "waited \(waited) s")
        }
    }

    @Test func aCancelledLongPollReturnsAtOnce() async throws {
        try await OwnThreads.run {
            let (owner, _, _) = try await Self.stores()
            let anchor = try await owner.anchoredObjects(of: [.quantity(.bodyMass)], anchor: nil).newAnchor
            let started = Date()
            let task = Task(executorPreference: OwnThreads.executor) { try await owner.anchoredObjects(of: [.quantity(.bodyMass)], anchor: anchor, waitingUpTo: 600) }
            try await Task.sleep(for: .milliseconds(100))
            task.cancel()
            let set = try await task.value
            #expect(set.changes.isEmpty)
            #expect(Date().timeIntervalSince(started) < 10)  // far from the 600 s it would wait
        }
    }

    /// A long poll's deadline and its cancellation need no thread of Swift's shared
    /// pool: with every one of them held for 2.5 seconds, a poll on the caller's own
    /// threads still ends at its deadline, and a cancelled one at once. (A server's
    /// handlers run on its own threads; the poll must not hand its ending to the pool.)
    @Test func aLongPollEndsOnItsCallersThreadsWhileTheSharedPoolIsHeld() async throws {
        try await OwnThreads.run {
            let (owner, _, _) = try await Self.stores()
            let anchor = try await owner.anchoredObjects(of: [.quantity(.bodyMass)], anchor: nil).newAnchor
            let held = ProcessInfo.processInfo.activeProcessorCount  // the pool's width
            let running = Locked(0)
            let holding = (0..<held).map { _ in
                Task.detached { running.withLock { $0 += 1 }; Self.block(seconds: 2.5) }
            }
            // Until every holder runs (at most 2 s: if they cannot start, other tests
            // hold the pool already, which serves as well).
            for _ in 0..<2_000 where running.withLock({ $0 }) < held { Self.block(seconds: 0.001) }
            let started = Date()
            let quiet = try await owner.anchoredObjects(of: [.quantity(.bodyMass)], anchor: anchor, waitingUpTo: 0.2)
            let afterDeadline = Date().timeIntervalSince(started)
            let task = Task(executorPreference: OwnThreads.executor) {
                try await owner.anchoredObjects(of: [.quantity(.bodyMass)], anchor: anchor, waitingUpTo: 600)
            }
            Self.block(seconds: 0.1)  // this test's own thread (a Task.sleep wakes on the pool)
            task.cancel()
            let cancelled = try await task.value
            let afterCancel = Date().timeIntervalSince(started)
            #expect(quiet.changes.isEmpty && cancelled.changes.isEmpty)
            // With the pool held, a deadline that needs it wakes 0.8 s late or more (1.0 s
            // here for a 0.2 s poll on the child-task deadline, 3.2 s in CI).
            #expect(afterDeadline < 0.8, "the deadline's poll ended after \(afterDeadline) s")
            #expect(afterCancel - afterDeadline < 0.7, "the cancelled poll ended \(afterCancel - afterDeadline) s after it began")
            for t in holding { await t.value }
        }
    }

    /// Holds the calling thread (a blocking wait, as a synchronous test's child process is).
    static func block(seconds: Double) {
        usleep(UInt32(seconds * 1_000_000))
    }
}
