import Foundation
import HealthModel
@testable import LedgerCore
import LedgerKeys
import LedgerLog
import Testing
import TestSupport

/// Erasure by destroying keys (issue 32), in process: what replay folds afterwards
/// (byte for byte what the ledger holds, with the keys gone or — after a crash — still
/// there), later events that name erased samples, and an erasure stopped after each of
/// its durable steps as `kill -9` would.
@Suite struct ErasureTests {
    /// An encrypted ledger's folder and key file; each `fs()` is a new process's view
    /// (a key ring that has read nothing yet).
    struct Folder {
        let dir = TemporaryDirectory("erasure")
        var path: String { dir.path + "/ledger" }

        init() throws {
            try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
            _ = try KeyEncryptionKey.create(at: dir.path + "/kek")
        }

        func fs() throws -> PosixFileSystem {
            let ring = LedgerKeyRing(folder: LedgerKeyRing.folder(ofLedger: path), kek: try KeyEncryptionKey.load(from: dir.path + "/kek"))
            return PosixFileSystem(path: path, recordKeys: ring)
        }

        func create() throws -> Ledger {
            try Ledger.create(try fs(), options: LedgerOptions(log: LogWriterOptions(sealedFormat: true)))
        }

        func open() throws -> Ledger { try Ledger.open(try fs()) }

        /// A fresh replay of the whole log, by a new reader.
        func replayed() throws -> LedgerState {
            let fs = try fs()
            let reader = try LogReader(fs)
            var state = LedgerState()
            _ = try Replayer.replay(reader, into: &state, from: reader.start)
            return state
        }
    }

    static func weight(_ v: Double, _ day: Int, _ uuid: UUID) throws -> Sample {
        try quantitySample(.bodyMass, v, "kg", at: String(format: "2026-11-%02dT08:00:00Z", day), uuid: uuid)
    }

    /// A saves three weights and deletes one of them; B saves two and the owner deletes
    /// one of B's; A saves a heart rate.
    static func story(_ ledger: Ledger) async throws {
        try await ledger.grant(appA, share: [.quantity(.bodyMass), .quantity(.heartRate)], read: [.quantity(.bodyMass)])
        try await ledger.grant(appB, share: [.quantity(.bodyMass)])
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier,
                                      samples: [try weight(81, 1, fixedUUID(1)), try weight(82, 2, fixedUUID(2)), try weight(83, 3, fixedUUID(3))]))
        try await ledger.append(.save(bundleIdentifier: appB.bundleIdentifier, samples: [try weight(70, 4, fixedUUID(4)), try weight(71, 5, fixedUUID(5))]))
        try await ledger.append(.delete(bundleIdentifier: appA.bundleIdentifier, uuids: [fixedUUID(2)], reason: "mistyped"))
        try await ledger.append(.delete(bundleIdentifier: nil, uuids: [fixedUUID(5)], reason: nil))
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier,
                                      samples: [try quantitySample(.heartRate, 60, "count/min", at: "2026-11-06T08:00:00Z", uuid: fixedUUID(6))]))
    }

    static func live(_ state: LedgerState) -> [UUID] {
        (0..<UInt32(state.samples.count)).filter { state.samples.isLive($0) }.map { try! state.samples.uuid($0) }.sorted { $0.uuidString < $1.uuidString }
    }

    @Test func erasingASourceTakesAllItSavedAndReplaysToWhatTheLedgerHolds() async throws {
        let folder = try Folder()
        let ledger = try folder.create()
        try await Self.story(ledger)
        let outcome = try await ledger.erase(.source(bundleIdentifier: appA.bundleIdentifier), reason: "asked")
        // Every sample A ever saved, the deleted one too; two were live.
        #expect(Set(outcome.erasures[0].samples) == [fixedUUID(1), fixedUUID(2), fixedUUID(3), fixedUUID(6)])
        #expect(outcome.erasures[0].liveAtErasure == 3)
        #expect(outcome.erasures[0].replacements.isEmpty)  // A's deletion named only what A saved
        #expect(outcome.snapshot != nil)
        let state = await ledger.state
        #expect(Self.live(state) == [fixedUUID(4)])
        #expect(state.registry.ordinal(of: appA.bundleIdentifier) == 1)  // the app stays
        try await ledger.close()

        // A new process, with the keys gone: the same projections, byte for byte.
        let fresh = try folder.replayed()
        #expect(fresh == state)
        #expect(fresh.digest() == state.digest())
        #expect(fresh.eventsNotApplied == 3)  // A's two saves and its deletion, passed over
        #expect(fresh.erasures.entries.map(\.sequence) == [outcome.sequence])
        let report = try LedgerVerifier.verify(try folder.fs())
        #expect(report.isIntact, "\(String(describing: report.eventProblem)) \(report.snapshots)")
        // The destroyed keys are tombstones: a record they sealed says so by name.
        var erased = 0
        try LogReader(try folder.fs()).forEachRecord { record in
            if let id = record.sealedKeyId, outcome.erasures[0].keyIds.contains(id) {
                #expect(record.sealFailure?.reason == .keyDestroyed, "event \(record.sequence)")
                erased += 1
            }
            return true
        }
        #expect(erased == 3)
        let ring = try #require(try folder.fs().recordKeys as? LedgerKeyRing)
        for id in outcome.erasures[0].keyIds {
            guard case .destroyed = ring.lookup(keyId: id) else { Issue.record("key \(id) is not destroyed"); continue }
        }
        // Nothing left to erase.
        let again = try folder.open()
        await #expect(throws: LedgerError.self) { try await again.erase(.source(bundleIdentifier: appA.bundleIdentifier), reason: "again") }
        // A may save again, under new keys; the erased UUIDs may be used again.
        try await again.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [try Self.weight(90, 7, fixedUUID(1))]))
        try await again.append(.delete(bundleIdentifier: appA.bundleIdentifier, uuids: [fixedUUID(1)], reason: nil))
        let after = await again.state
        try await again.close()
        #expect(try folder.replayed() == after)
        #expect(try LedgerVerifier.verify(try folder.fs()).isIntact)
    }

    /// The change feed across an erasure: an anchor issued before it is answered with
    /// the erased samples the caller could have been given, as deletions naming the
    /// erasure (the one deleted before too), then everything current as from the start
    /// — applied by UUID, that ends where a fetch without an anchor does — and an anchor
    /// after which nothing is new. Pages of one change lose and repeat nothing; an app
    /// is told only of erased samples it could have read; a version 1 anchor (issued
    /// before anchors named erasures) is taken as knowing none.
    @Test func anAnchorFromBeforeAnErasureIsToldOfTheErasedSamplesAsDeletions() async throws {
        let folder = try Folder()
        let ledger = try folder.create()
        try await Self.story(ledger)
        let types: Set<ObjectType> = [.quantity(.bodyMass), .quantity(.heartRate)]
        func feed(_ anchor: ChangeAnchor?, app: AppOrdinal? = nil, limit: Int = 0) throws -> ChangeSet {
            var state = try folder.replayed()
            return try ChangeFeed.changes(of: types, predicate: nil, anchor: anchor, limit: limit, app: app, ledgerId: ledger.ledgerId,
                                          fs: try folder.fs(), in: &state)
        }
        let ordinalB = try #require(try folder.replayed().registry.ordinal(of: appB.bundleIdentifier))
        let before = try feed(nil), beforeB = try feed(nil, app: ordinalB)
        let outcome = try await ledger.erase(.source(bundleIdentifier: appA.bundleIdentifier), reason: "asked")
        try await ledger.close()

        let after = try feed(before.newAnchor), fresh = try feed(nil)
        let erased: [Change] = [1, 2, 3, 6].map {
            .deleted(DeletedSample(uuid: fixedUUID($0), type: $0 == 6 ? .quantity(.heartRate) : .quantity(.bodyMass), syncIdentifier: nil,
                                   syncVersion: nil, replacedBy: nil, erasedAt: outcome.sequence))
        }
        #expect(Array(after.changes.prefix(4)) == erased)
        #expect(Array(after.changes.dropFirst(4)) == fresh.changes && !fresh.changes.isEmpty)
        #expect(after.newAnchor == fresh.newAnchor && !after.hasMore)
        #expect(try feed(after.newAnchor).changes.isEmpty)
        // By pages of one: the same changes, each once.
        var paged: [Change] = []
        var anchor = before.newAnchor
        for _ in 0..<50 {
            let page = try feed(anchor, limit: 1)
            paged += page.changes
            anchor = page.newAnchor
            if !page.hasMore { break }
        }
        #expect(paged == after.changes)
        #expect(anchor == after.newAnchor)
        // A page boundary inside the erased samples survives the anchor's text.
        let firstPage = try feed(before.newAnchor, limit: 2)
        #expect(firstPage.changes == Array(erased.prefix(2)) && firstPage.hasMore)
        let rest = try feed(try ChangeAnchor(text: firstPage.newAnchor.text))
        #expect(firstPage.changes + rest.changes == after.changes)
        // B, which may not read A's samples, is told of none of them.
        let afterB = try feed(beforeB.newAnchor, app: ordinalB)
        #expect(afterB.changes == (try feed(nil, app: ordinalB)).changes)
        #expect(!afterB.changes.contains { if case .deleted(let d) = $0 { d.erasedAt != nil } else { false } })
        // A version 1 token: the same fields without the erasure it knew.
        var bytes = [UInt8](try #require(Data(base64Encoded: Self.base64(before.newAnchor.text))))
        bytes[0] = 1
        bytes.removeLast(9)
        let v1 = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        #expect(try feed(try ChangeAnchor(text: v1)).changes == after.changes)
        // An anchor naming an erasure this ledger does not hold is refused.
        bytes = [UInt8](try #require(Data(base64Encoded: Self.base64(after.newAnchor.text))))
        bytes[bytes.count - 9] &+= 1
        let forged = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        #expect(throws: ChangeFeedError.self) { try feed(try ChangeAnchor(text: forged)) }
    }

    /// Another app's erased correlation is told to an app only when one of its members
    /// was of a type the app may read: B reads dietary protein only, so of A's two
    /// erased meals it is told of the one with protein, not of the energy-only one.
    @Test func anErasedCorrelationIsToldOnlyThroughAReadableMember() async throws {
        let folder = try Folder()
        let ledger = try folder.create()
        let t = date("2026-03-04T12:00:00Z")
        try await ledger.grant(appA, share: [.quantity(.dietaryEnergyConsumed), .quantity(.dietaryProtein)], read: [])
        try await ledger.grant(appB, share: [], read: [.quantity(.dietaryProtein)])
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [
            .correlation(try Correlation(type: .food, start: t, end: t, objects: [
                try QuantitySample(type: .dietaryEnergyConsumed, quantity: try Quantity(600, unit: "kcal"), start: t, end: t, uuid: fixedUUID(41)),
                try QuantitySample(type: .dietaryProtein, quantity: try Quantity(20, unit: "g"), start: t, end: t, uuid: fixedUUID(42)),
            ], uuid: fixedUUID(40))),
            .correlation(try Correlation(type: .food, start: t, end: t, objects: [
                try QuantitySample(type: .dietaryEnergyConsumed, quantity: try Quantity(300, unit: "kcal"), start: t, end: t, uuid: fixedUUID(51)),
            ], uuid: fixedUUID(50))),
        ]))
        let b = try #require(try folder.replayed().registry.ordinal(of: appB.bundleIdentifier))
        func feed(_ anchor: ChangeAnchor?) throws -> ChangeSet {
            var state = try folder.replayed()
            return try ChangeFeed.changes(of: [.correlation(.food)], predicate: nil, anchor: anchor, limit: 0, app: b,
                                          ledgerId: ledger.ledgerId, fs: try folder.fs(), in: &state)
        }
        let before = try feed(nil)
        #expect(before.samples.map(\.uuid) == [fixedUUID(40)])
        let outcome = try await ledger.erase(.source(bundleIdentifier: appA.bundleIdentifier), reason: "asked")
        try await ledger.close()
        #expect(try feed(before.newAnchor).changes == [.deleted(DeletedSample(uuid: fixedUUID(40), type: .correlation(.food),
            syncIdentifier: nil, syncVersion: nil, replacedBy: nil, erasedAt: outcome.sequence))])
    }

    /// base64url to base64 with padding.
    static func base64(_ text: String) -> String {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.count % 4 != 0 { s += "=" }
        return s
    }

    @Test func erasingATypeFoldsLaterEventsThatNameItsSamplesWithoutThem() async throws {
        let folder = try Folder()
        let ledger = try folder.create()
        try await Self.story(ledger)
        // The owner's deletion of B's weight is sealed under the owner's key, which an
        // erasure of the type keeps: replay must fold it without the erased sample.
        let outcome = try await ledger.erase(.type(code: ObjectType.quantity(.bodyMass).code), reason: "no weights")
        #expect(Set(outcome.erasures[0].samples) == [fixedUUID(1), fixedUUID(2), fixedUUID(3), fixedUUID(4), fixedUUID(5)])
        #expect(outcome.erasures[0].liveAtErasure == 3)
        let state = await ledger.state
        #expect(Self.live(state) == [fixedUUID(6)])
        #expect(state.samples.latest(typeCode: ObjectType.quantity(.bodyMass).code) == nil)
        try await ledger.close()
        #expect(try folder.replayed() == state)
        #expect(try LedgerVerifier.verify(try folder.fs()).isIntact)
        // An erasure naming a live sample is refused by replay (E16).
        let forged = Erasure(scope: .all, reason: "x", keyIds: [1], samples: [fixedUUID(6)], liveAtErasure: 1, replacements: [],
                             feedSlots: nil)
        #expect(LedgerRules.violation(.other(.erased(forged)), in: state) == .erasedSampleLive(fixedUUID(6)))
    }

    @Test func aPlainLedgerOrAnUnknownScopeIsRefusedAndChangesNothing() async throws {
        let plain = try makeLedger()
        try await plain.grant(appA, share: [.quantity(.bodyMass)])
        let before = await plain.state
        await #expect(throws: LedgerError.self) { try await plain.erase(.all, reason: "x") }
        #expect(await plain.state == before)

        let folder = try Folder()
        let ledger = try folder.create()
        try await Self.story(ledger)
        let size = { try FileManager.default.attributesOfItem(atPath: folder.path + "/ledger.log")[.size] as? Int }
        let keys = { try Data(contentsOf: URL(fileURLWithPath: folder.path + "/keys/keys.bin")) }
        let (sizeBefore, keysBefore) = (try size(), try keys())
        for (scope, reason) in [(Erasure.Scope.source(bundleIdentifier: "com.example.none"), "x"), (.importRun(fixedUUID(9)), "x"),
                                (.type(code: ObjectType.quantity(.stepCount).code), "x"), (.all, ""),
                                (.all, String(repeating: "r", count: Erasure.reasonBytesMax + 1))] {
            do {
                _ = try await ledger.erase(scope, reason: reason)
                Issue.record("\(scope) with a reason of \(reason.utf8.count) bytes was not refused")
            } catch let LedgerError.erasureRefused(why, notFound) {
                #expect(notFound == !(reason.isEmpty || reason.utf8.count > Erasure.reasonBytesMax), "\(why)")
            }
        }
        #expect(try size() == sizeBefore)
        #expect(try keys() == keysBefore)
        try await ledger.close()
        let state = try folder.replayed()
        #expect(Self.live(state) == [fixedUUID(1), fixedUUID(3), fixedUUID(4), fixedUUID(6)])
        #expect(state.erasures.isEmpty)
    }

    /// Stopped after each durable step (what is on disk stays, nothing else of the
    /// erasure runs), then opened by a new process: always the state after.
    @Test(arguments: [Ledger.ErasureStop.afterAppend, .afterDestroy, .afterSnapshotsRemoved])
    func anErasureStoppedAfterAnyStepIsFinishedByTheNextWriter(_ stop: Ledger.ErasureStop) async throws {
        let folder = try Folder()
        let ledger = try folder.create()
        try await Self.story(ledger)
        try await ledger.snapshot()  // a snapshot from before, holding what is erased
        let outcome = try await ledger.erase(.source(bundleIdentifier: appA.bundleIdentifier), reason: "asked", stoppingAfter: stop)
        ledger.abandon()
        let keysAfterStop = try #require(try folder.fs().recordKeys as? LedgerKeyRing)
        #expect(outcome.erasures[0].keyIds.allSatisfy { keysAfterStop.isLive($0) } == (stop == .afterAppend))

        // A reader before any writer: already the state after (replay passes over).
        #expect(Self.live(try folder.replayed()) == [fixedUUID(4)])
        // The next writer finishes it: keys destroyed, older snapshots gone.
        let reopened = try folder.open()
        #expect(Self.live(await reopened.state) == [fixedUUID(4)])
        let ring = try #require(try folder.fs().recordKeys as? LedgerKeyRing)
        for id in outcome.erasures[0].keyIds {
            guard case .destroyed = ring.lookup(keyId: id) else { Issue.record("key \(id) is live after \(stop)"); continue }
        }
        let snapshots = try FileManager.default.contentsOfDirectory(atPath: folder.path + "/snapshots")
        #expect(snapshots.isEmpty, "\(snapshots)")
        try await reopened.snapshot()
        try await reopened.close()
        let report = try LedgerVerifier.verify(try folder.fs())
        #expect(report.isIntact && report.snapshotsChecked == 1, "\(String(describing: report.eventProblem)) \(report.snapshots)")
    }

    /// A range of three days cuts November's key: the weights of those days are erased,
    /// every other weight of November is saved again under a new key first (same UUIDs,
    /// its workout association restored), October and December are untouched — even
    /// though the app lost its sharing permission before the erasure.
    @Test func aCutErasureOfThreeDaysLeavesExactlyTheOtherSamples() async throws {
        let folder = try Folder()
        let ledger = try folder.create()
        try await ledger.grant(appA, share: [.quantity(.bodyMass), .quantity(.heartRate), .workout])
        var weights: [(day: String, uuid: UUID)] = [("2026-10-30", fixedUUID(100)), ("2026-12-02", fixedUUID(101))]
        for d in 1...10 { weights.append((String(format: "2026-11-%02d", d), fixedUUID(d))) }
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: try weights.map {
            try quantitySample(.bodyMass, 80, "kg", at: $0.day + "T08:00:00Z", uuid: $0.uuid)
        }))
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [
            try quantitySample(.heartRate, 60, "count/min", at: "2026-11-04T08:00:00Z", uuid: fixedUUID(200)),
            .workout(try Workout(activityType: .running, start: date("2026-11-09T07:30:00Z"), end: date("2026-11-09T08:30:00Z"),
                                 duration: 3600, uuid: fixedUUID(300))),
        ]))
        try await ledger.append(.associate(bundleIdentifier: appA.bundleIdentifier, workout: fixedUUID(300),
                                           samples: [fixedUUID(9), fixedUUID(4)]))
        try await ledger.append(.delete(bundleIdentifier: appA.bundleIdentifier, uuids: [fixedUUID(7)], reason: nil))
        try await ledger.append(.decideAuthorization(bundleIdentifier: appA.bundleIdentifier,
                                                     decisions: [(.quantity(.bodyMass), .denied, nil)], basis: .owner))
        let ring = try #require(try folder.fs().recordKeys as? LedgerKeyRing)
        let novemberBefore = try ring.liveKeys(where: { $0.type == ObjectType.quantity(.bodyMass).code && $0.month.description == "2026-11" })
        #expect(novemberBefore.count == 1)

        let outcome = try await ledger.erase(.typeRange(code: ObjectType.quantity(.bodyMass).code, from: date("2026-11-03T00:00:00Z"),
                                                        to: date("2026-11-06T00:00:00Z")), reason: "three days")
        let e = outcome.erasures[0]
        // Erased: the three days, and the weight deleted before (its key is gone).
        #expect(Set(e.samples) == [fixedUUID(3), fixedUUID(4), fixedUUID(5), fixedUUID(7)])
        #expect(e.liveAtErasure == 3 && outcome.samplesKept == 6)
        #expect(e.keyIds == novemberBefore.map(\.id))
        #expect(e.resealed == [outcome.sequence - 1])
        #expect(e.restoredAssociations == [Erasure.RestoredAssociation(workout: fixedUUID(300), samples: [fixedUUID(9)])])
        let state = await ledger.state
        let kept: Set<UUID> = [fixedUUID(100), fixedUUID(101), fixedUUID(1), fixedUUID(2), fixedUUID(6), fixedUUID(8),
                               fixedUUID(9), fixedUUID(10), fixedUUID(200), fixedUUID(300)]
        #expect(Set(Self.live(state)) == kept)
        #expect(state.associations[fixedUUID(300)] == [fixedUUID(9)])
        try await ledger.close()

        #expect(try folder.replayed() == state)
        let report = try LedgerVerifier.verify(try folder.fs())
        #expect(report.isIntact, "\(String(describing: report.eventProblem)) \(report.snapshots)")
        // November's old key is gone, a new one seals what stays; October's and December's are untouched.
        let fresh = try #require(try folder.fs().recordKeys as? LedgerKeyRing)
        guard case .destroyed = fresh.lookup(keyId: novemberBefore[0].id) else { Issue.record("November's old key is live"); return }
        let weightKeys = try fresh.liveKeys(where: { $0.type == ObjectType.quantity(.bodyMass).code }).map(\.scope.month.description)
        #expect(weightKeys.contains("2026-10") && weightKeys.contains("2026-11") && weightKeys.contains("2026-12"))
        // Erasing the same days again finds the new key: nothing of them is left, the
        // other November weights are kept again.
        let again = try folder.open()
        let second = try await again.erase(.typeRange(code: ObjectType.quantity(.bodyMass).code, from: date("2026-11-03T00:00:00Z"),
                                                      to: date("2026-11-06T00:00:00Z")), reason: "again")
        #expect(second.samplesErased == 0 && second.samplesKept == 6)
        #expect(Set(Self.live(await again.state)) == kept)
        try await again.close()
        #expect(try LedgerVerifier.verify(try folder.fs()).isIntact)
        // Not a sample type, or a workout: refused.
        let third = try folder.open()
        await #expect(throws: LedgerError.self) {
            try await third.erase(.typeRange(code: ObjectType.workout.code, from: date("2026-11-01T00:00:00Z"), to: date("2026-11-02T00:00:00Z")), reason: "x")
        }
        try await third.close()
    }

    /// A kept sample that replaced (by sync identity) one outside the erasure still
    /// replaces it when it comes again: the predecessor is live until then (E4). Without
    /// it the erasure's own event broke a rule once the keys were gone (found in review).
    @Test func aKeptSampleStillReplacesItsPredecessorOutsideTheErasure() async throws {
        let folder = try Folder()
        let ledger = try folder.create()
        try await ledger.grant(appA, share: [.quantity(.bodyMass)])
        func weight(_ at: String, _ n: Int, _ version: Int64?) throws -> Sample {
            try quantitySample(.bodyMass, 80, "kg", at: at, uuid: fixedUUID(n), metadata: version.map {
                [Metadata.WellKnownKey.syncIdentifier: .string("s1"), Metadata.WellKnownKey.syncVersion: .integer($0)]
            } ?? Metadata())
        }
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [try weight("2026-10-30T08:00:00Z", 1, 1)]))
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [try weight("2026-11-20T08:00:00Z", 2, 2)]))
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [try weight("2026-11-03T08:00:00Z", 3, nil)]))
        let outcome = try await ledger.erase(.typeRange(code: ObjectType.quantity(.bodyMass).code, from: date("2026-11-01T00:00:00Z"),
                                                        to: date("2026-11-06T00:00:00Z")), reason: "five days")
        #expect(outcome.erasures[0].samples == [fixedUUID(3)] && outcome.samplesKept == 1)
        let state = await ledger.state
        #expect(Self.live(state) == [fixedUUID(2)])
        #expect(state.samples.liveSyncVersion(app: 1, identifier: "s1") == 2)
        try await ledger.close()
        #expect(try folder.replayed() == state)
        #expect(try LedgerVerifier.verify(try folder.fs()).isIntact)
    }

    /// An erasure whose UUIDs do not fit one record is written as several `erased`
    /// events, each with the scope and keys, the first with everything else.
    @Test func anErasureSplitsItsUUIDsAcrossEvents() throws {
        let e = Erasure(scope: .all, reason: "r", keyIds: [1, 2], samples: (1...5).map(fixedUUID), liveAtErasure: 3,
                        replacements: [], resealed: [4], restoredAssociations: [.init(workout: fixedUUID(9), samples: [fixedUUID(1)])],
                        feedSlots: (1...5).map { $0 == 2 ? nil : ErasedFeedSlot(typeCode: ObjectType.quantity(.stepCount).code, app: UInt32($0)) })
        let parts = e.split(samplesPerEvent: 2) { $0 != fixedUUID(2) && $0 != fixedUUID(5) }
        #expect(parts.map(\.samples) == [[fixedUUID(1), fixedUUID(2)], [fixedUUID(3), fixedUUID(4)], [fixedUUID(5)]])
        #expect(parts.map { $0.feedSlots?.map { $0?.app } } == [[1, nil], [3, 4], [5]])
        #expect(parts.map(\.liveAtErasure) == [1, 2, 0])
        #expect(parts.map(\.keyIds) == [[1, 2], [1, 2], [1, 2]])
        #expect(parts[0].resealed == [4] && parts[1].resealed.isEmpty && parts[0].restoredAssociations.count == 1)
        #expect(e.split(samplesPerEvent: 5) { _ in true } == [e])
    }

    /// A save whose samples fall under several key scopes is appended as one record per
    /// scope, each folded with its own slice of the save's facts (a correlation's members
    /// and sync identities renumbered): what the writer folds is what replay folds, and a
    /// sync replacement inside a part still names what it replaces.
    @Test func aSaveSplitByScopeFoldsAsReplayFoldsIt() async throws {
        let folder = try Folder()
        let ledger = try folder.create()
        try await ledger.grant(appA, share: [.quantity(.bodyMass), .quantity(.bloodPressureSystolic), .quantity(.bloodPressureDiastolic)])
        func bp(_ at: String, _ n: Int) throws -> Sample {
            let t = date(at)
            let sys = try QuantitySample(type: .bloodPressureSystolic, quantity: try Quantity(120, unit: "mmHg"), start: t, end: t,
                                         uuid: fixedUUID(n + 1), metadata: [Metadata.WellKnownKey.syncIdentifier: .string("s\(n)"),
                                                                            Metadata.WellKnownKey.syncVersion: .integer(1)])
            let dia = try QuantitySample(type: .bloodPressureDiastolic, quantity: try Quantity(80, unit: "mmHg"), start: t, end: t,
                                         uuid: fixedUUID(n + 2))
            return .correlation(try Correlation(type: .bloodPressure, start: t, end: t, objects: [sys, dia], uuid: fixedUUID(n)))
        }
        func weight(_ v: Double, _ at: String, _ n: Int, sync version: Int64) throws -> Sample {
            try quantitySample(.bodyMass, v, "kg", at: at, uuid: fixedUUID(n),
                               metadata: [Metadata.WellKnownKey.syncIdentifier: .string("w"), Metadata.WellKnownKey.syncVersion: .integer(version)])
        }
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [
            try weight(80, "2026-10-30T08:00:00Z", 1, sync: 1), try bp("2026-11-02T08:00:00Z", 10),
            try quantitySample(.bodyMass, 81, "kg", at: "2026-11-03T08:00:00Z", uuid: fixedUUID(2)), try bp("2026-10-31T08:00:00Z", 20),
        ]))
        // Replaces the October weight by sync identity, from a save split again.
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [
            try bp("2026-12-02T08:00:00Z", 30), try weight(82, "2026-11-05T08:00:00Z", 3, sync: 2),
        ]))
        let state = await ledger.state
        #expect(state.samples.count == 12)
        #expect(!state.samples.isLive(try #require(try state.samples.slot(of: fixedUUID(1)))))
        #expect(state.samples.liveSyncVersion(app: 1, identifier: "w") == 2)
        try await ledger.close()
        #expect(try folder.replayed() == state)
        #expect(try LedgerVerifier.verify(try folder.fs()).isIntact)
    }

    /// E17: `encryptedFrom` begins a ledger, and only begins one.
    @Test func anEncryptedCopysOriginIsItsFirstEventOnly() async throws {
        let origin = Event.encryptedFrom(LedgerOrigin(ledgerId: fixedUUID(1), chainHead: [UInt8](repeating: 7, count: 32), events: 3, copiedAt: 0))
        #expect(LedgerRules.violation(.other(origin), in: LedgerState()) == nil)
        let ledger = try makeLedger()
        try await ledger.grant(appA, share: [.quantity(.bodyMass)])
        #expect(LedgerRules.violation(.other(origin), in: await ledger.state) == .notFirst("encryptedFrom"))
        #expect(RuleViolation.notFirst("encryptedFrom").ruleID == "E17")
    }

    /// An `erased` payload built field by field (FORMAT.md, kind 27), each field settable.
    static func erasedPayload(scope: UInt8 = 4, keyIds: [UInt64] = [1], sampleCount: Int? = nil, samples: [UUID] = [],
                              live: UInt64 = 0, replacementKind: UInt16? = nil, reason: String = "r") -> [UInt8] {
        var w = ByteWriter(capacity: 64)
        w.varint(0)  // the owner
        w.u8(scope)
        if scope == 1 { w.string("com.example.a") }
        w.string(reason)
        w.varint(keyIds.count)
        for id in keyIds { w.varint(id) }
        w.varint(0)  // no records listed
        w.varint(sampleCount ?? samples.count)
        for u in samples { w.uuid(u) }
        w.varint(live)
        if let kind = replacementKind {
            w.varint(1)
            w.varint(5)
            w.u16(kind)
            w.u16(1)
            w.lengthPrefixed { $0.varint(0); $0.string("x") }
        } else {
            w.varint(0)
        }
        w.varint(0)  // no re-appended saves
        w.varint(0)  // no restored associations
        return w.bytes
    }

    @Test func malformedErasuresAreRefusedByName() throws {
        func refusal(_ payload: [UInt8]) -> String? {
            do {
                _ = try payload.withUnsafeBytes { try EventCodec.decode(kind: EventKind.erased.rawValue, version: 1, payload: $0) }
                return nil
            } catch {
                return "\(error)"
            }
        }
        #expect(refusal(Self.erasedPayload()) == nil)
        #expect(refusal(Self.erasedPayload(scope: 9))?.contains("unknown erasure scope") == true)
        #expect(refusal(Self.erasedPayload(keyIds: []))?.contains("destroys at least one key") == true)
        #expect(refusal(Self.erasedPayload(keyIds: [4, 4]))?.contains("ascend from 1") == true)
        #expect(refusal(Self.erasedPayload(keyIds: [0]))?.contains("ascend from 1") == true)
        // A count of UUIDs the bytes cannot hold is refused before anything is reserved.
        #expect(refusal(Self.erasedPayload(sampleCount: 1 << 40))?.contains("above") == true)
        #expect(refusal(Self.erasedPayload(samples: [fixedUUID(1)], live: 2))?.contains("2 live of 1") == true)
        #expect(refusal(Self.erasedPayload(replacementKind: EventKind.samplesSaved.rawValue))?.contains("a replacement of kind 6") == true)
        #expect(refusal(Self.erasedPayload(reason: String(repeating: "r", count: 1_001)))?.contains("has 1 to 1000 bytes") == true)
        #expect(refusal(Self.erasedPayload(reason: "a\nb"))?.contains("one line without control characters") == true)
        // Not the owner: refused as E6.
        var app = Self.erasedPayload()
        app[0] = 1
        #expect(refusal(app)?.contains("[E6]") == true)
        // Every truncation is refused, never a trap.
        let whole = Self.erasedPayload(scope: 1, keyIds: [2, 9], samples: [fixedUUID(1), fixedUUID(2)], live: 1,
                                       replacementKind: EventKind.samplesDeleted.rawValue)
        for cut in 0..<whole.count { #expect(refusal(Array(whole[0..<cut])) != nil, "cut at \(cut)") }
    }

    /// Version 2 adds, per erased sample, the type and app the change feed had given it
    /// (type code 0: never folded, and then app 0): anything else is malformed, and a
    /// version 1 reader of a version 2 payload finds bytes left over.
    @Test func version2FeedSlotsAreRangeChecked() throws {
        func decode(_ payload: [UInt8], version: UInt16) throws -> Erasure {
            let event = try payload.withUnsafeBytes { try EventCodec.decode(kind: EventKind.erased.rawValue, version: version, payload: $0) }
            guard case .erased(let e) = event else { throw EventDecodingError.malformed(offset: 0, reason: "not an erasure: \(event)") }
            return e
        }
        func v2(_ slots: [(UInt16, UInt64)]) -> [UInt8] {
            var w = ByteWriter(capacity: 16)
            for (code, app) in slots {
                w.u16(code)
                w.varint(app)
            }
            return Self.erasedPayload(samples: [fixedUUID(1), fixedUUID(2)], live: 1) + w.bytes
        }
        let mass = ObjectType.quantity(.bodyMass).code
        // The app word is the ordinal shifted left once, its low bit "a correlation's member".
        let fine = try decode(v2([(mass, 14), (0, 0)]), version: 2)
        #expect(fine.feedSlots == [ErasedFeedSlot(typeCode: mass, app: 7), nil])
        #expect(try decode(v2([(mass, 15), (mass, 2)]), version: 2).feedSlots
                == [ErasedFeedSlot(typeCode: mass, app: 7, isMember: true), ErasedFeedSlot(typeCode: mass, app: 1)])
        #expect(fine.kindVersion == 2)
        #expect(try decode(Self.erasedPayload(samples: [fixedUUID(1), fixedUUID(2)], live: 1), version: 1).feedSlots == nil)
        #expect(throws: EventDecodingError.self) { try decode(v2([(mass, 7), (0, 0)]), version: 1) }
        func refusal(_ slots: [(UInt16, UInt64)]) -> String {
            do { return "decoded \(try decode(v2(slots), version: 2))" } catch { return "\(error)" }
        }
        #expect(refusal([(mass, 7), (0, 1)]).contains("an erased sample never folded names no app"))
        #expect(refusal([(mass, 7), (ObjectType.characteristic(.biologicalSex).code, 1)]).contains("is no sample type's"))
        #expect(refusal([(mass, 7), (0x0999, 1)]).contains("type code 2457 is no sample type's"))
        #expect(refusal([(mass, 1 << 33), (0, 0)]).contains("app ordinal 4294967296 out of range"))
        // One slot for two samples: the bytes end early.
        #expect(!refusal([(mass, 7)]).hasPrefix("decoded"))
    }

    @Test func aStateFromBeforeAnErasureIsRebuiltByTheNextReplay() async throws {
        let folder = try Folder()
        let ledger = try folder.create()
        try await Self.story(ledger)
        // A reader's state, caught up before the erasure.
        let fs = try folder.fs()
        let reader = try LogReader(fs)
        var following = LedgerState()
        let first = try Replayer.replay(reader, into: &following, from: reader.start)
        #expect(Self.live(following).count == 4)
        _ = try await ledger.erase(.source(bundleIdentifier: appA.bundleIdentifier), reason: "asked")
        // Following on from where it was: the erasure makes it start again.
        _ = try Replayer.replay(reader, into: &following, from: try #require(first.position))
        #expect(Self.live(following) == [fixedUUID(4)])
        #expect(following == (await ledger.state))
        try await ledger.close()
    }
}
