import Foundation
import Synchronization
import HealthLedger
import HealthModel
import LedgerCore
import LedgerLog
import Testing
import TestSupport

/// The change feed: anchored queries, deletions, anchors bound to ledger and history, visibility.
struct ChangeFeedTests {
    let mass: Set<ObjectType> = [.quantity(.bodyMass)]

    func ids(_ set: ChangeSet) -> [String] {
        set.changes.map {
            switch $0 {
            case .added(let s): "+\(s.uuid)"
            case .deleted(let d): "-\(d.uuid)"
            }
        }
    }

    @Test func additionsAndDeletionsComeInLogOrderAndPredicatesFilterDeletionsToo() async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        let app = try await HealthStore(ledger: ledger, app: tracker)
        try await app.requestAuthorization(toShare: [.quantity(.bodyMass)], read: [.quantity(.bodyMass)])
        try await owner.grantRequested(app: tracker.bundleIdentifier)
        let a = try weight(70, at: "2026-03-01T08:00:00Z"), b = try weight(80, at: "2026-03-02T08:00:00Z")
        let c = try weight(90, at: "2026-02-01T08:00:00Z")  // back-dated: still after the anchor
        try await app.save([a, b])
        let first = try await app.anchoredObjects(of: mass, anchor: nil)
        #expect(ids(first) == ["+\(a.uuid)", "+\(b.uuid)"])
        #expect(first.hasMore == false)
        try await app.delete([a.uuid])
        try await app.save(c)
        let second = try await app.anchoredObjects(of: mass, anchor: first.newAnchor)
        #expect(ids(second) == ["-\(a.uuid)", "+\(c.uuid)"])
        #expect(second.deletedObjects == [DeletedSample(uuid: a.uuid, type: .quantity(.bodyMass), syncIdentifier: nil, syncVersion: nil,
                                                         replacedBy: nil)])
        // nothing new: no changes, and the anchor text survives a round trip
        let none = try await app.anchoredObjects(of: mass, anchor: try ChangeAnchor(text: second.newAnchor.text))
        #expect(none.changes.isEmpty)
        // a predicate over values filters deletions too: from the start, ≥ 75 kg
        let heavy = SamplePredicate.quantity(.greaterOrEqual, try Quantity(75, unit: "kg"))
        let filtered = try await owner.anchoredObjects(of: mass, predicate: heavy, anchor: nil)
        #expect(ids(filtered) == ["+\(b.uuid)", "+\(c.uuid)"])
        let light = SamplePredicate.quantity(.less, try Quantity(75, unit: "kg"))
        #expect(ids(try await owner.anchoredObjects(of: mass, predicate: light, anchor: nil)) == ["-\(a.uuid)"])
        // other types are not in the feed
        #expect(try await owner.anchoredObjects(of: [.quantity(.height)], anchor: nil).changes.isEmpty)
        try await ledger.close()
    }

    @Test func aSyncIdentifierReplacementIsTheNewSamplePlusTheOldOnesDeletion() async throws {
        let ledger = try makeLedger()
        let app = try await HealthStore(ledger: ledger, app: tracker)
        try await app.requestAuthorization(toShare: [.quantity(.bodyMass)], read: [])
        try await OwnerStore(ledger: ledger).grantRequested(app: tracker.bundleIdentifier)
        func synced(_ v: Int64, _ kg: Double) throws -> Sample {
            .quantity(try QuantitySample(type: .bodyMass, quantity: try Quantity(kg, unit: "kg"), start: date("2026-02-01T08:00:00Z"),
                                         end: date("2026-02-01T08:00:00Z"), metadata: [
                                            Metadata.WellKnownKey.syncIdentifier: .string("scale"),
                                            Metadata.WellKnownKey.syncVersion: .integer(v)]))
        }
        let v1 = try synced(1, 70), v2 = try synced(2, 69)
        try await app.save(v1)
        let anchor = try await app.anchoredObjects(of: mass, anchor: nil).newAnchor
        try await app.save(v2)
        let next = try await app.anchoredObjects(of: mass, anchor: anchor)
        #expect(ids(next) == ["+\(v2.uuid)", "-\(v1.uuid)"])
        #expect(next.deletedObjects == [DeletedSample(uuid: v1.uuid, type: .quantity(.bodyMass), syncIdentifier: "scale",
                                                       syncVersion: 1, replacedBy: v2.uuid)])
        try await ledger.close()
    }

    @Test func anAppSeesItsOwnChangesUntilGrantedThenTheOlderOnesOnce() async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        let app = try await HealthStore(ledger: ledger, app: tracker)
        let other = try await HealthStore(ledger: ledger, app: healthApp)
        try await app.requestAuthorization(toShare: [.quantity(.bodyMass)], read: [.quantity(.bodyMass)])
        try await other.requestAuthorization(toShare: [.quantity(.bodyMass)], read: [])
        try await owner.decide(app: tracker.bundleIdentifier, [(.quantity(.bodyMass), .granted, .denied)])
        try await owner.decide(app: healthApp.bundleIdentifier, [(.quantity(.bodyMass), .granted, nil)])
        let mine = try weight(70, at: "2026-03-01T08:00:00Z"), theirs = try weight(71, at: "2026-03-02T08:00:00Z")
        let theirsGone = try weight(72, at: "2026-03-03T08:00:00Z")
        try await app.save(mine)
        try await other.save([theirs, theirsGone])
        try await other.delete([theirsGone.uuid])
        let before = try await app.anchoredObjects(of: mass, anchor: nil)
        // no read permission: its own sample only; the deletion of one it never could read is not shown
        #expect(ids(before) == ["+\(mine.uuid)"])
        try await owner.decide(app: tracker.bundleIdentifier, [(.quantity(.bodyMass), nil, .granted)])
        let later = try weight(73, at: "2026-03-04T08:00:00Z")
        try await other.save(later)
        // after the grant: the older samples now visible (once), then what came after the anchor
        let after = try await app.anchoredObjects(of: mass, anchor: before.newAnchor, limit: 1)
        #expect(ids(after) == ["+\(theirs.uuid)"])
        let rest = try await app.anchoredObjects(of: mass, anchor: after.newAnchor)
        #expect(ids(rest) == ["+\(later.uuid)"])
        #expect(try await app.anchoredObjects(of: mass, anchor: rest.newAnchor).changes.isEmpty)
        try await ledger.close()
    }

    @Test func anchorsFromAnotherLedgerOrARewrittenOrRolledBackHistoryAreRefused() async throws {
        let fs = SimulatedFileSystem()
        let ledger = try makeLedger(fs)
        let owner = OwnerStore(ledger: ledger)
        let app = try await HealthStore(ledger: ledger, app: tracker)
        try await app.requestAuthorization(toShare: [.quantity(.bodyMass)], read: [])
        try await OwnerStore(ledger: ledger).grantRequested(app: tracker.bundleIdentifier)
        try await app.save(try weight(70, at: "2026-03-01T08:00:00Z"))
        let cut = ledger.logLength
        try await app.save(try weight(71, at: "2026-03-02T08:00:00Z"))
        let anchor = try await owner.anchoredObjects(of: mass, anchor: nil).newAnchor
        #expect(anchor.slots == 2)
        try await ledger.close()

        // another ledger
        let elsewhere = try Ledger.create(SimulatedFileSystem(), ledgerId: UUID(uuidString: "6C656467-6572-4000-8000-000000000002")!)
        await #expect(throws: ChangeFeedError.otherLedger(anchor: fixedLedgerId, ledger: elsewhere.ledgerId)) {
            try await OwnerStore(ledger: elsewhere).anchoredObjects(of: mass, anchor: anchor)
        }
        try await elsewhere.close()

        // a copy whose tail was cut: rolled back
        let copy = SimulatedFileSystem()
        try copy.createFolder()
        copy.setBytes(LogWriter.logFileName, Array(fs.currentBytes(LogWriter.logFileName).prefix(Int(cut))))
        let rolled = try Ledger.open(copy)
        await #expect(throws: ChangeFeedError.rolledBack(anchorSlots: 2, ledgerSlots: 1, anchorDeletions: 0, ledgerDeletions: 0)) {
            try await OwnerStore(ledger: rolled).anchoredObjects(of: mass, anchor: anchor)
        }
        // … and re-appended: as many samples as the anchor covers, another history
        let again = try await HealthStore(ledger: rolled, app: tracker)
        try await again.save(try weight(71, at: "2026-03-02T08:00:00Z"))
        await #expect(throws: ChangeFeedError.historyRewritten(slots: 2, deletions: 0)) {
            try await OwnerStore(ledger: rolled).anchoredObjects(of: mass, anchor: anchor)
        }
        try await rolled.close()
        // the original still accepts it
        let reopened = try Ledger.open(fs)
        #expect(try await OwnerStore(ledger: reopened).anchoredObjects(of: mass, anchor: anchor).changes.isEmpty)
        try await reopened.close()
        #expect(throws: ChangeFeedError.malformedAnchor("not-an-anchor")) { try ChangeAnchor(text: "not-an-anchor") }
        #expect(throws: ChangeFeedError.malformedAnchor("AQ")) { try ChangeAnchor(text: "AQ") }
    }

    /// 100,000 changes paged 1,000 at a time while a second writer saves and deletes:
    /// every change exactly once, in log order.
    @Test(.tags(.sweep), .disabled(if: Sweeps.leftOut, Sweeps.reason)) func pagingWhileAWriterAppendsAndDeletesSeesEveryChangeOnceInLogOrder() async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        let app = try await HealthStore(ledger: ledger, app: tracker)
        try await app.requestAuthorization(toShare: [.quantity(.bodyMass)], read: [])
        try await OwnerStore(ledger: ledger).grantRequested(app: tracker.bundleIdentifier)
        let base = date("2026-01-01T00:00:00Z")
        func batch(_ n: Int, from: Int) throws -> [Sample] {
            try (0..<n).map { i in
                let t = base.addingTimeInterval(Double((from + i) * 37 % 100_000) * 60)
                return Sample.quantity(try QuantitySample(type: .bodyMass, quantity: try Quantity(Double(50 + i % 50), unit: "kg"),
                                                          start: t, end: t))
            }
        }
        var saved: [UUID] = []
        for k in 0..<80 {
            let b = try batch(1000, from: k * 1000)
            try await app.save(b)
            saved += b.map(\.uuid)
        }
        let existing = saved
        // the second writer: 20,000 more samples in 40 saves, deleting 100 existing samples after each
        let done = Mutex(false)
        let writer = Task {
            defer { done.withLock { $0 = true } }
            for k in 0..<40 {
                try await app.save(try batch(500, from: 80_000 + k * 500))
                try await app.delete(Array(existing[(k * 100)..<(k * 100 + 100)]))
            }
        }
        var paged: [String] = []
        var anchor: ChangeAnchor?
        var pages = 0
        while true {
            let finished = done.withLock { $0 }
            let page = try await owner.anchoredObjects(of: mass, anchor: anchor, limit: 1000)
            #expect(page.changes.count <= 1000)
            paged += ids(page)
            anchor = page.newAnchor
            pages += 1
            await Task.yield()
            if page.changes.isEmpty && finished { break }
        }
        try await writer.value
        // the whole feed now, in one answer: live additions and every deletion, in log order
        let whole = ids(try await owner.anchoredObjects(of: mass, anchor: nil))
        let deleted = Set(whole.filter { $0.hasPrefix("-") }.map { String($0.dropFirst()) })
        #expect(deleted.count == 4000)
        let liveAndDeletions: Int = 100_000 - 4000 + 4000
        #expect(whole.count == liveAndDeletions)
        // each change once; additions deleted later may have been seen before their deletion
        #expect(Set(paged).count == paged.count)
        let withoutLaterDeleted = paged.filter { !($0.hasPrefix("+") && deleted.contains(String($0.dropFirst()))) }
        #expect(withoutLaterDeleted == whole)
        var at: [String: Int] = [:]
        for (i, change) in paged.enumerated() { at[change] = i }
        let seenThenDeleted = paged.filter { $0.hasPrefix("+") && deleted.contains(String($0.dropFirst())) }
        #expect(seenThenDeleted.allSatisfy { (at["-" + $0.dropFirst()] ?? -1) > at[$0]! })
        #expect(pages >= 100)
        try await ledger.close()
    }

    @Test func theChangeStreamAndTheObserverContinueAsCommitsArrive() async throws {
        let ledger = try makeLedger()
        let app = try await HealthStore(ledger: ledger, app: tracker)
        try await app.requestAuthorization(toShare: [.quantity(.bodyMass)], read: [])
        try await OwnerStore(ledger: ledger).grantRequested(app: tracker.bundleIdentifier)
        let a = try weight(70, at: "2026-03-01T08:00:00Z"), b = try weight(71, at: "2026-03-02T08:00:00Z")
        try await app.save(a)
        var stream = app.changes(of: mass, from: nil).makeAsyncIterator()
        var observer = try await app.observe(mass).makeAsyncIterator()
        #expect(try await stream.next().map(ids) == ["+\(a.uuid)"])
        try await app.save(b)
        #expect(try await stream.next().map(ids) == ["+\(b.uuid)"])
        let notified = try await observer.next()
        #expect(notified?.slots == 2)
        try await app.delete([a.uuid])
        #expect(try await stream.next().map(ids) == ["-\(a.uuid)"])
        try await ledger.close()
    }
}
