import Foundation
import Testing
import HealthModel
@testable import LedgerCore
import LedgerChecksums
import LedgerLog
import TestSupport

/// S4 as FORMAT.md writes it: this test builds the digest's SHA-256 input from the
/// spec's text alone (its own writer below, not `DigestWriter` nor any `feed`), from
/// the projections of each golden ledger, and checks it against the code's digest
/// and the ledger's checked-in `digest.txt`.
struct DigestSpecTests {
    /// The spec's primitives: fixed-width little-endian integers, length-prefixed strings.
    struct SpecBytes {
        var bytes: [UInt8] = []
        mutating func int<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
        mutating func u8(_ v: UInt8) { bytes.append(v) }
        mutating func f64(_ v: Double) { int(v.bitPattern) }
        mutating func bool(_ v: Bool) { bytes.append(v ? 1 : 0) }
        mutating func uuid(_ u: UUID) { withUnsafeBytes(of: u.uuid) { bytes += $0 } }
        mutating func str(_ s: String) { int(UInt64(s.utf8.count)); bytes += s.utf8 }
        mutating func blob(_ b: [UInt8]) { int(UInt64(b.count)); bytes += b }
        mutating func ostr(_ s: String?) { if let s { u8(1); str(s) } else { u8(0) } }
        mutating func uuidstr(_ u: UUID) { str(u.uuidString) }
        mutating func section(_ name: String, _ n: Int) { str(name); int(UInt64(n)) }
    }

    /// The characteristic's value as S4 says: a date `YYYY-MM-DD`, medications
    /// `None`/names joined by `,`, any other HealthKit's raw name.
    static func characteristicText(_ value: CharacteristicValue) -> String {
        switch value {
        case .dateOfBirth(let d): String(format: "%04d-%02d-%02d", d.year, d.month, d.day)
        case .biologicalSex(let v): v.rawName
        case .bloodType(let v): v.rawName
        case .fitzpatrickSkinType(let v): v.rawName
        case .wheelchairUse(let v): v.rawName
        case .activityMoveMode(let v): v.rawName
        case .cardioFitnessMedicationsUse(let v):
            v.isEmpty ? "None" : [v.contains(.calciumChannelBlockers) ? "CalciumChannelBlockers" : nil,
                                  v.contains(.betaBlockers) ? "BetaBlockers" : nil].compactMap { $0 }.joined(separator: ",")
        }
    }

    /// The SHA-256 input of S4, steps 1–15, for `state`.
    static func specInput(_ state: LedgerState) -> [UInt8] {
        var d = SpecBytes()
        // 1
        d.str("healthledger-projections-v1"); d.int(state.lastSequence); d.int(state.lastRecordedAt)
        // 2
        d.section("apps", state.registry.apps.count)
        for app in state.registry.apps {
            d.str(app.bundleIdentifier); d.str(app.name); d.ostr(app.readPurpose); d.ostr(app.sharePurpose); d.bool(app.imported)
        }
        // 3
        let permissions = state.authorization.permissions
        d.section("authorization", permissions.count)
        for app in permissions.keys.sorted() {
            let types = permissions[app]!
            d.int(UInt32(app)); d.int(UInt64(types.count))
            for code in types.keys.sorted() {
                let p = types[code]!
                d.int(code)
                let share: UInt8 = switch p.share { case .notDetermined: 0; case .sharingDenied: 1; case .sharingAuthorized: 2 }
                d.u8(share)
                d.u8(p.read == nil ? 0 : p.read! ? 1 : 2)
                d.bool(p.requestedShare); d.bool(p.requestedRead)
                d.u8(p.basis == .owner ? 0 : 1)
            }
        }
        // 4
        d.section("characteristics", state.characteristics.count)
        for type in state.characteristics.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            d.int(type.rawValue); d.str(characteristicText(state.characteristics[type]!))
        }
        // 5–8, optional
        if let zone = state.ownerTimeZone { d.section("ownerTimeZone", 1); d.str(zone) }
        if !state.preferredUnits.isEmpty {
            d.section("preferredUnits", state.preferredUnits.count)
            for type in state.preferredUnits.keys.sorted(by: { $0.code < $1.code }) {
                // the quantity table's index, not the type code (0x0200 + index)
                d.int(ObjectType.quantity(type).code - 0x0200); d.str(state.preferredUnits[type]!.canonicalString)
            }
        }
        if !state.associations.isEmpty {
            d.section("associations", state.associations.count)
            for workout in state.associations.keys.sorted(by: { Array($0.uuidString.utf8).lexicographicallyPrecedes(Array($1.uuidString.utf8)) }) {
                d.uuidstr(workout); d.int(UInt64(state.associations[workout]!.count))
                for sample in state.associations[workout]! { d.uuidstr(sample) }
            }
        }
        if !state.workoutActivities.isEmpty {
            d.section("workoutActivities", state.workoutActivities.count)
            for workout in state.workoutActivities.keys.sorted(by: { Array($0.uuidString.utf8).lexicographicallyPrecedes(Array($1.uuidString.utf8)) }) {
                d.uuidstr(workout)
                // kind 16's payload after actor and workout UUID: varint m · m × activity
                let payload = EventCodec.payload(.workoutActivitiesAdded(actor: .owner, workout: workout, activities: state.workoutActivities[workout]!))
                d.blob(Array(payload.dropFirst(1 + 16)))
            }
        }
        // 9
        d.section("eventCounts", state.eventCounts.count)
        for kind in state.eventCounts.keys.sorted() { d.int(kind); d.int(state.eventCounts[kind]!) }
        // 10–11, optional
        if !state.imports.isEmpty {
            d.section("imports", state.imports.count)
            for entry in state.imports {
                d.blob(EventCodec.payload(.importStarted(entry.start)))
                d.int(entry.startedAt); d.int(entry.finishedAt ?? 0)
                // A transaction's finish (version 2) carries the export's hash; a legacy one does not.
                d.blob(EventCodec.payload(.importFinished(ExportImportFinish(
                    importId: entry.start.importId, counts: entry.counts,
                    contentSHA256: entry.start.isTransaction ? entry.contentSHA256 : nil))))
            }
        }
        if state.eventsNotApplied > 0 {  // rule E11: events of aborted imports
            d.section("eventsNotApplied", 1)
            d.int(state.eventsNotApplied)
        }
        if !state.credentials.isEmpty {  // credentials, when any were issued
            d.section("credentials", state.credentials.all.count)
            for e in state.credentials.all.sorted(by: { $0.issue.id.value < $1.issue.id.value }) {
                d.blob(EventCodec.payload(.credentialIssued(e.issue)))
                d.int(e.issuedAt); d.int(e.issuedRecordedAt)
                d.int(e.revokedAt ?? 0); d.int(e.revokedRecordedAt ?? 0); d.ostr(e.revocationReason)
            }
        }
        if !state.activitySummaries.isEmpty {
            d.section("activitySummaries", state.activitySummaries.count)
            for day in state.activitySummaries.keys.sorted() {
                d.blob(EventCodec.payload(.activitySummariesRecorded([state.activitySummaries[day]!])))
            }
        }
        // 12–14
        let columns = state.samples.columns
        d.section("samples", columns.slots.count)
        var runStart = 0  // a record's samples take consecutive slots: position = distance from its first
        for (i, s) in columns.slots.enumerated() {
            if i == 0 || columns.slots[i - 1].recordOffset != s.recordOffset { runStart = i }
            d.int(s.recordOffset); d.int(UInt32(i - runStart)); d.f64(s.start); d.f64(s.end)
            d.int(s.typeCode); d.int(state.samples.entry(UInt32(i)).app); d.u8(s.state)
            if let sync = columns.syncOfSlot[UInt32(i)] { d.u8(1); d.str(sync.identifier); d.int(sync.version) } else { d.u8(0) }
        }
        d.section("tombstones", columns.tombstones.count)
        for t in columns.tombstones {
            d.int(t.slot); d.int(t.sequence)
            let actor: UInt64 = switch t.actor { case .owner: 0; case .app(let ordinal): UInt64(ordinal) }
            d.int(actor)
            d.int(t.replacedBy.map { $0 + 1 } ?? 0)
        }
        d.section("latest", columns.latest.count)
        for code in columns.latest.keys.sorted() { d.int(code); d.int(columns.latest[code]!) }
        // 15, optional
        let priorities = state.statistics.priorities
        if !priorities.isEmpty {
            d.section("sourcePriorities", priorities.count)
            for code in priorities.keys.sorted() {
                d.int(code); d.int(UInt64(priorities[code]!.count))
                for bundle in priorities[code]! { d.str(bundle) }
            }
        }
        return d.bytes
    }

    @Test(arguments: ["tutorial-v1", "tutorial-v2", "import-v2"])
    func s4TheDigestIsTheSpecsBytes(golden: String) throws {
        let folder = SharedData.repositoryRoot.appendingPathComponent("events/golden/\(golden)")
        let fs = SimulatedFileSystem()
        fs.setBytes(LogWriter.logFileName, try Array(Data(contentsOf: folder.appendingPathComponent("ledger.log"))))
        let expected = try String(contentsOf: folder.appendingPathComponent("digest.txt"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let state = try StateLoader.load(fs, reader: try LogReader(fs)).state
        #expect(state.samples.columns.slots.count > 0)
        let specDigest = SHA256.hash(Self.specInput(state))
        #expect(specDigest.hex == expected)
        #expect(state.digest() == specDigest)
    }
}

extension DigestSpecTests {
    /// The optional sections the golden ledgers do not have (5–8, 15): a ledger with
    /// a time zone, a preferred unit, an association, workout activities and a source
    /// priority digests to the spec's bytes too.
    @Test func s4TheOptionalSectionsAreTheSpecsBytes() async throws {
        let ledger = try makeLedger()
        try await ledger.grant(appA, share: [.workout, .quantity(.activeEnergyBurned), .quantity(.stepCount)])
        try await ledger.append(.setOwnerTimeZone("Pacific/Honolulu"))
        try await ledger.append(.setPreferredUnit(.bodyMass, try HealthUnit("lb")))
        try await ledger.append(.setSourcePriority(.stepCount, [appA.bundleIdentifier]))
        let workout = try Workout(activityType: .swimBikeRun, start: date("2026-03-01T08:00:00Z"), end: date("2026-03-01T09:00:00Z"),
                                  uuid: fixedUUID(20))
        let energy = try quantitySample(.activeEnergyBurned, 300, "kcal", at: "2026-03-01T08:00:00Z", to: "2026-03-01T09:00:00Z",
                                        uuid: fixedUUID(21))
        try await ledger.append(.save(bundleIdentifier: appA.bundleIdentifier, samples: [.workout(workout), energy]))
        try await ledger.append(.associate(bundleIdentifier: appA.bundleIdentifier, workout: fixedUUID(20), samples: [fixedUUID(21)]))
        let swim = try WorkoutActivity(activityType: .swimming, start: date("2026-03-01T08:00:00Z"), end: date("2026-03-01T08:20:00Z"),
                                       uuid: fixedUUID(22))
        try await ledger.append(.addWorkoutActivities(bundleIdentifier: appA.bundleIdentifier, workout: fixedUUID(20), activities: [swim]))
        let state = await ledger.state
        #expect(state.ownerTimeZone != nil && !state.preferredUnits.isEmpty && !state.associations.isEmpty
                && !state.workoutActivities.isEmpty && !state.statistics.priorities.isEmpty)
        #expect(SHA256.hash(Self.specInput(state)) == state.digest())
    }

    /// Sections 10 with a transaction's version-2 start and finish (its hash), and the
    /// count of events an aborted import left unapplied (rule E11): the spec's bytes.
    @Test func s4ImportTransactionsAreTheSpecsBytes() async throws {
        let ledger = try makeLedger()
        let done = try await ledger.beginImport(ExportImportStart(importId: fixedUUID(50), exportDate: "2019-06-17 21:07:11 -0400",
                                                                  locale: "en_US", exportVersion: "11", sourcePath: "export.zip", me: []))
        let source = AppRegistration(bundleIdentifier: "export:Watch", name: "Watch", readPurpose: nil, sharePurpose: nil, imported: true)
        _ = try await ledger.appendBestEffort([.registerApp(source),
                                          .decideAuthorization(bundleIdentifier: source.bundleIdentifier,
                                                               decisions: [(.quantity(.stepCount), .granted, nil)], basis: .imported),
                                          .save(bundleIdentifier: source.bundleIdentifier,
                                                samples: [try quantitySample(.stepCount, 12, "count", at: "2019-06-01T08:00:00Z",
                                                                             uuid: fixedUUID(51))])], in: done)
        try await ledger.commitImport(done, absence: nil, finish: ExportImportFinish(importId: fixedUUID(50), counts: [ImportCount("records", 1)],
                                                                                     contentSHA256: [UInt8](repeating: 5, count: 32)))
        let aborted = try await ledger.beginImport(ExportImportStart(importId: fixedUUID(52), exportDate: nil, locale: nil,
                                                                     exportVersion: nil, sourcePath: "broken.zip", me: []))
        try await ledger.abortImport(aborted, reason: "malformedXML")
        let state = await ledger.state
        #expect(state.imports.count == 1 && state.imports[0].contentSHA256 == [UInt8](repeating: 5, count: 32))
        #expect(state.eventsNotApplied == 2)
        #expect(SHA256.hash(Self.specInput(state)) == state.digest())
    }

    /// The credentials section: one standing, one revoked with a reason.
    @Test func s4CredentialsAreTheSpecsBytes() async throws {
        let ledger = try makeLedger()
        try await ledger.append(.registerApp(appA))
        for (id, subject) in [(UInt64(7), ActorID.app(1)), (UInt64(3), .owner)] {
            try await ledger.append(.issueCredential(CredentialIssue(id: CredentialID(id), subject: subject,
                                                                      secretSHA256: [UInt8](repeating: UInt8(id), count: 32),
                                                                      expiresAt: id == 7 ? 1_900_000_000_000_000_000 : nil, name: "n\(id)")))
        }
        try await ledger.append(.revokeCredential(CredentialID(3), reason: "rotated"))
        let state = await ledger.state
        #expect(state.credentials.all.count == 2)
        #expect(SHA256.hash(Self.specInput(state)) == state.digest())
    }
}
