import Foundation
import HealthModel
import LedgerChecksums
import LedgerLog

/// Every projection of a ledger, derived from its log by folding events in order.
///
/// - `registry`: the apps.
/// - `authorization`: per app and type, sharing status and read permission.
/// - `characteristics`: the profile's characteristics (with the latest height and
///   weight from `samples`, the profile projection: see `Profile`).
/// - `samples`: the sample index and the latest-sample index.
///
/// Deterministic: the same events in the same order give the same state and the
/// same `digest()`. Rules (`LedgerRules`) decide what may be folded; `apply`
/// folds without judging (replay of a verified log).
///
/// Invariants: `LedgerState.Invariant` (statistics per slot, imports in order, at
/// most one open transaction, every event counted once, …) and the sample index's;
/// `checkInvariants()` checks them all, and debug builds check them after folds
/// (`InvariantChecks`).
package struct LedgerState: Sendable, Equatable {
    package private(set) var registry = AppRegistry()
    package private(set) var authorization = AuthorizationProjection()
    package private(set) var characteristics: [CharacteristicType: CharacteristicValue] = [:]
    package var samples = SampleIndex()
    /// Per slot, a quantity's value and manual-entry flag; source priorities; the
    /// order apps were first granted sharing (`StatisticsProjection`).
    package internal(set) var statistics = StatisticsProjection()
    /// Each cumulative type's merged daily sums as a snapshot stored them, standing
    /// for the state at its `lastSequence` only (`DailySums`; not part of `==`).
    package internal(set) var dailySums = DailySumsCache()
    /// Imports of Apple Health exports, in the order they started.
    package private(set) var imports: [ImportEntry] = []
    /// Activity summaries by day (`year * 10_000 + month * 100 + day`); a later
    /// record of the same day replaces the earlier one.
    /// (`internal(set)`: tests file a summary under another day to see the invariant named.)
    package internal(set) var activitySummaries: [Int: ActivitySummary] = [:]

    /// The owner's time zone (IANA identifier), nil until an `ownerTimeZoneSet`.
    package private(set) var ownerTimeZone: String?
    /// The owner's preferred unit per quantity type (`preferredUnitSet`); a type not
    /// here is read in its locale's unit (`PreferredUnits`).
    package private(set) var preferredUnits: [QuantityType: HealthUnit] = [:]
    /// Samples associated with each workout (`samplesAssociated`), in the order
    /// associated, by workout UUID. Deleted samples stay listed; readers skip them.
    package private(set) var associations: [UUID: [UUID]] = [:]
    /// Each workout's activities (`workoutActivitiesAdded`, HKWorkoutActivity), in the
    /// order added, by workout UUID. A deleted workout's stay; readers skip them.
    package private(set) var workoutActivities: [UUID: [WorkoutActivity]] = [:]
    /// Every activity's UUID (derived from `workoutActivities`: rule E10's uniqueness).
    /// (`internal(set)`: tests add one to see the invariant named.)
    package internal(set) var workoutActivityUUIDs: Set<UUID> = []
    /// Bearer credentials issued and revoked (`credentialIssued`, `credentialRevoked`).
    package private(set) var credentials = CredentialRegistry()
    /// The log's erasures (issue 32), as replay read them before folding: what replay
    /// passes over, and the erased samples' UUIDs (references to them are folded
    /// without them). Set by every replay; not part of `==` (`ErasureIndex`).
    package internal(set) var erasures = ErasureIndex()

    /// The last sequence number folded in (0 for an empty log).
    package private(set) var lastSequence: UInt64 = 0
    /// The `recordedAt` of the last event folded in (ns since the epoch).
    package private(set) var lastRecordedAt: Int64 = 0
    /// Events folded in, by kind.
    private var kindCounts = EventKindCounts()
    /// Events folded in, by kind (the kinds folded at least once).
    package var eventCounts: [UInt16: UInt64] { kindCounts.dictionary }
    /// Events passed over, never applied: those of aborted imports, their
    /// `importStarted` and `importAborted` included (rule E11). `lastSequence` counts
    /// them; no projection holds anything of them.
    package private(set) var eventsNotApplied: UInt64 = 0
    /// For a state mapped from a snapshot (rule S8): what its columns' checks found
    /// wrong so far, if anything. A reader asks it before it answers. Not a projection.
    package internal(set) var snapshotDamage: SnapshotDamage?

    package init() {}

    /// Throws what the checks of a mapped snapshot's columns found wrong so far
    /// (rule S8): readers call it before they answer, so a damaged snapshot makes a
    /// read fail rather than answer from zeros.
    package func checkIntact() throws(SnapshotProblem) {
        if let problem = snapshotDamage?.problem { throw problem }
    }

    /// A reader's lookup by UUID (`SampleIndex.slot(of:)`), its answer — a slot, none,
    /// or a UUID the log did not give — taken only from an intact snapshot (S8): a probe
    /// that met a damaged block's zeros fails with that block's problem.
    package func lookUp(_ uuid: UUID) throws -> UInt32? {
        let found: UInt32?
        do { found = try samples.slot(of: uuid) } catch {
            try checkIntact()
            throw error
        }
        try checkIntact()
        return found
    }

    // MARK: Folding

    /// Folds one event's facts in. The caller has checked them (`LedgerRules`), or
    /// replays a log that `verify` accepts.
    mutating func apply(_ facts: EventFacts, kind: UInt16, sequence: UInt64, recordedAt: Int64, offset: UInt64) {
        #if DEBUG
        let slotsBefore = samples.count, deletionsBefore = samples.deletedCount
        defer { checkInvariantsAfterFold(sequence: sequence, slotsBefore: slotsBefore, deletionsBefore: deletionsBefore) }
        #endif
        count(kind: kind, sequence: sequence, recordedAt: recordedAt)
        switch facts {
        case .samplesSaved(let app, let headers, let strings):
            addSamples(app: app, headers: headers, strings: strings, sequence: sequence, offset: offset)
        case .other(let event):
            switch event {
            case .appRegistered(let ordinal, let registration):
                registry.apply(ordinal, registration)
            case .authorizationRequested(let app, let share, let read):
                authorization.request(app: app, share: share, read: read)
            case .authorizationDecided(let decision):
                authorization.decide(decision)
                if decision.share == .granted { statistics.granted(decision.app) }
            case .characteristicSet(let value):
                characteristics[value.type] = value
            case .characteristicCleared(let type):
                characteristics[type] = nil
            case .samplesDeleted(let actor, let objects, _):
                for o in objects {
                    if let slot = checkedSlot(of: o.uuid), samples.isLive(slot) {
                        samples.delete(slot, sequence: sequence, actor: actor)
                    }
                }
            case .activitySummariesRecorded(let summaries):
                for a in summaries { activitySummaries[Self.dayKey(a.day)] = a }
            case .importStarted(let start):
                imports.append(ImportEntry(start: start, startedAt: sequence))
            case .importFinished(let finish):
                if let i = imports.firstIndex(where: { $0.start.importId == finish.importId }) {
                    imports[i].finishedAt = sequence
                    imports[i].counts = finish.counts
                    if let hash = finish.contentSHA256 { imports[i].contentSHA256 = hash }
                }
            case .importAborted:
                // Replay passes over an aborted import whole (`skip`); the store reloads
                // its projections after appending one. Never folded.
                preconditionFailure("an aborted import is passed over, not folded (rule E11)")
            case .ownerTimeZoneSet(let identifier):
                ownerTimeZone = identifier
            case .sourcePrioritySet(let type, let sources):
                statistics.setPriority(ObjectType.quantity(type).code, sources)
            case .preferredUnitSet(let type, let unit):
                preferredUnits[type] = unit
            case .samplesAssociated(_, let workout, let uuids):
                associations[workout, default: []].append(contentsOf: uuids)
            case .workoutActivitiesAdded(_, let workout, let activities):
                addActivities(activities, to: workout)
            case .absentFromExport(let absence):
                for o in absence.objects {
                    if let slot = checkedSlot(of: o.uuid), samples.isLive(slot) {
                        samples.delete(slot, sequence: sequence, actor: .owner)
                    }
                }
                for day in absence.days { activitySummaries[Self.dayKey(day)] = nil }
            case .credentialIssued(let issue):
                credentials.issue(issue, sequence: sequence, recordedAt: recordedAt)
            case .credentialRevoked(let id, let reason):
                credentials.revoke(id, reason: reason, sequence: sequence, recordedAt: recordedAt)
            case .exportElementsKept:
                break  // no projection: the log keeps them; `log` and `audit` show them
            case .encryptedFrom:
                break  // no projection: the log keeps it; `log` and `audit` show it
            case .erased(let erasure):
                // What it erased was never folded: replay read it first (`ErasureIndex`).
                // The samples a cut re-appended join their workouts again: those live
                // here (a later cut of the same month re-appends them, and restores them, again).
                // (A UUID the log does not give counts as not live: a restored slot is
                // never met here — an erasure removes every snapshot — and `verify`
                // reports a damaged log.)
                func live(_ uuid: UUID) -> Bool { ((try? samples.slot(of: uuid)) ?? nil).map(samples.isLive) ?? false }
                for a in erasure.restoredAssociations where live(a.workout) {
                    let joining = a.samples.filter(live)
                    if !joining.isEmpty { associations[a.workout, default: []].append(contentsOf: joining) }
                }
            case .samplesSaved:
                preconditionFailure("saves fold through their headers")
            }
        }
    }

    private mutating func addActivities(_ activities: [WorkoutActivity], to workout: UUID) {
        workoutActivities[workout, default: []].append(contentsOf: activities)
        for a in activities { workoutActivityUUIDs.insert(a.uuid) }
    }

    /// The key of `activitySummaries` for a day.
    package static func dayKey(_ day: DateOfBirth) -> Int { day.year * 10_000 + day.month * 100 + day.day }

    /// The imports of an export with this content hash.
    package func imports(ofContent sha256: [UInt8]) -> [ImportEntry] {
        imports.filter { $0.contentSHA256 == sha256 }
    }

    /// The transactional import that is open (started, neither finished nor aborted):
    /// only while the store runs one. Replay never folds an open one (rule E11). Not
    /// always the last import started: a legacy (version 1) import may have started
    /// inside it, and a second transaction must still be refused
    /// (`LedgerState.Invariant.oneOpenTransaction`).
    package var openTransaction: ImportEntry? {
        imports.last { $0.start.isTransaction && $0.finishedAt == nil }
    }

    /// Passes over an event that is not applied (an aborted import's, rule E11): the
    /// log position advances, no projection changes.
    mutating func skip(sequence: UInt64, recordedAt: Int64) {
        precondition(sequence == lastSequence + 1, "events are passed over in sequence order")
        lastSequence = sequence
        lastRecordedAt = recordedAt
        eventsNotApplied += 1
        #if DEBUG
        checkInvariantsAfterFold(sequence: sequence, slotsBefore: samples.count, deletionsBefore: samples.deletedCount)
        #endif
    }

    /// Folds a decoded event (checked by the caller).
    package mutating func apply(_ event: Event, sequence: UInt64, recordedAt: Int64, offset: UInt64) {
        apply(EventFacts(event), kind: event.kind.rawValue, sequence: sequence, recordedAt: recordedAt, offset: offset)
    }

    /// `apply` of a save whose headers are lent in place (replay's fold; checked by the
    /// caller with `LedgerRules.saveViolation`).
    mutating func applySave(app: AppOrdinal, headers: UnsafeBufferPointer<SampleCodec.Header>, strings: UnsafeBufferPointer<String>,
                            kind: UInt16, sequence: UInt64, recordedAt: Int64, offset: UInt64) {
        #if DEBUG
        let slotsBefore = samples.count, deletionsBefore = samples.deletedCount
        defer { checkInvariantsAfterFold(sequence: sequence, slotsBefore: slotsBefore, deletionsBefore: deletionsBefore) }
        #endif
        count(kind: kind, sequence: sequence, recordedAt: recordedAt)
        addSamples(app: app, headers: headers, strings: strings, sequence: sequence, offset: offset)
    }

    /// Every fold's first step: the event is the next in sequence, and counted.
    @inline(__always)
    private mutating func count(kind: UInt16, sequence: UInt64, recordedAt: Int64) {
        precondition(sequence == lastSequence + 1, "events are folded in sequence order")
        lastSequence = sequence
        lastRecordedAt = recordedAt
        kindCounts.add(kind)
    }

    /// The slot of an object a deletion the rules allowed names. The rules looked the
    /// same UUID up in the same table: every slot restored from a snapshot whose
    /// fingerprint that probe met had its UUID read from the log and kept
    /// (`LogSampleUUIDs`), so this probe reads nothing from the log and cannot fail.
    private func checkedSlot(of uuid: UUID) -> UInt32? {
        do {
            return try samples.slot(of: uuid)
        } catch {
            preconditionFailure("a deletion's lookups are the rules' own, whose UUIDs were kept: \(error)")
        }
    }

    /// The samples of a save, in slot order (and the objects they replace deleted).
    private mutating func addSamples<Headers: RandomAccessCollection<SampleCodec.Header>, Strings: RandomAccessCollection<String>>(
        app: AppOrdinal, headers: Headers, strings: Strings, sequence: UInt64, offset: UInt64
    ) where Headers.Index == Int, Strings.Index == Int {
        for i in headers.indices {
            let h = headers[i]
            let sync = h.syncIndex >= 0 ? strings[strings.startIndex + Int(h.syncIndex)] : nil
            // What it replaces: the app's live sample of the same sync identifier, the one
            // whose UUID the rules found it records (E4) — taken before the new sample
            // takes the identifier, with no lookup by UUID (which may read the log).
            let replaced = h.replaces != nil && h.memberOf == nil ? sync.flatMap { samples.syncSlot(app: app, identifier: $0) } : nil
            let slot = samples.add(h, syncIdentifier: sync, app: app, recordOffset: offset, position: UInt32(i - headers.startIndex))
            statistics.add(slot: slot, value: h.value, userEntered: h.userEntered)
            if let old = replaced, samples.isLive(old) {
                samples.delete(old, sequence: sequence, actor: .app(app), replacedBy: slot)
            }
        }
    }

    /// Rebuilds the small projections from a snapshot's contents.
    mutating func restore(events: [Event], permissions: [(AppOrdinal, UInt16, TypePermission)], lastSequence: UInt64,
                          lastRecordedAt: Int64, eventCounts: [UInt16: UInt64], imports: [ImportEntry] = [],
                          eventsNotApplied: UInt64 = 0, credentials: [CredentialRegistry.Entry] = []) {
        for entry in credentials { self.credentials.restore(entry) }
        for event in events {
            switch event {
            case .appRegistered(let ordinal, let registration): registry.apply(ordinal, registration)
            case .characteristicSet(let value): characteristics[value.type] = value
            case .ownerTimeZoneSet(let identifier): ownerTimeZone = identifier
            case .preferredUnitSet(let type, let unit): preferredUnits[type] = unit
            case .samplesAssociated(_, let workout, let uuids): associations[workout, default: []].append(contentsOf: uuids)
            case .workoutActivitiesAdded(_, let workout, let activities): addActivities(activities, to: workout)
            case .activitySummariesRecorded(let summaries):
                for a in summaries { activitySummaries[Self.dayKey(a.day)] = a }
            default: break
            }
        }
        self.imports = imports
        for (app, code, permission) in permissions { authorization.set(app: app, code: code, permission) }
        self.lastSequence = lastSequence
        self.lastRecordedAt = lastRecordedAt
        self.kindCounts = EventKindCounts(eventCounts)
        self.eventsNotApplied = eventsNotApplied
    }

    // MARK: Digest

    /// SHA-256 of a canonical serialization of every projection.
    package func digest() -> SHA256Digest {
        var d = DigestWriter()
        d.string("healthledger-projections-v1")
        d.u64(lastSequence)
        d.i64(lastRecordedAt)
        d.section("apps", count: registry.apps.count)
        for app in registry.apps {
            d.string(app.bundleIdentifier)
            d.string(app.name)
            d.optionalString(app.readPurpose)
            d.optionalString(app.sharePurpose)
            d.bool(app.imported)
        }
        let apps = authorization.permissions.keys.sorted()
        d.section("authorization", count: apps.count)
        for app in apps {
            let types = authorization.permissions[app]!.keys.sorted()
            d.u32(app)
            d.u64(UInt64(types.count))
            for code in types {
                let p = authorization.permissions[app]![code]!
                d.u16(code)
                d.u8(UInt8(p.share.rawValue))
                d.u8(p.read.map { $0 ? 1 : 2 } ?? 0)
                d.bool(p.requestedShare)
                d.bool(p.requestedRead)
                d.u8(p.basis.rawValue)
            }
        }
        let characteristicTypes = characteristics.keys.sorted { $0.rawValue < $1.rawValue }
        d.section("characteristics", count: characteristicTypes.count)
        for type in characteristicTypes {
            d.u16(type.rawValue)
            d.string(characteristics[type]!.description)
        }
        // Digested only when set, so that a ledger without one keeps its digest.
        if let ownerTimeZone {
            d.section("ownerTimeZone", count: 1)
            d.string(ownerTimeZone)
        }
        // Digested only when set, so that a ledger without any keeps its digest.
        let preferred = preferredUnits.keys.sorted()
        if !preferred.isEmpty { d.section("preferredUnits", count: preferred.count) }
        for type in preferred {
            d.u16(type.code)
            d.string(preferredUnits[type]!.canonicalString)
        }
        let workouts = associations.keys.sorted { $0.uuidString < $1.uuidString }
        if !workouts.isEmpty { d.section("associations", count: workouts.count) }
        for workout in workouts {
            d.string(workout.uuidString)
            d.u64(UInt64(associations[workout]!.count))
            for uuid in associations[workout]! { d.string(uuid.uuidString) }
        }
        // Digested only when there are any, so that older ledgers keep their digest.
        let segmented = workoutActivities.keys.sorted { $0.uuidString < $1.uuidString }
        if !segmented.isEmpty { d.section("workoutActivities", count: segmented.count) }
        for workout in segmented {
            d.string(workout.uuidString)
            var w = ByteWriter(capacity: 128)
            WorkoutActivityCodec.encode(workoutActivities[workout]!, into: &w)
            d.bytes(w.bytes)
        }
        let counts = eventCounts
        let kinds = counts.keys.sorted()
        d.section("eventCounts", count: kinds.count)
        for k in kinds {
            d.u16(k)
            d.u64(counts[k]!)
        }
        // The two projections imports brought are digested only when present, so
        // ledgers without imports keep the digest they always had.
        if !imports.isEmpty { d.section("imports", count: imports.count) }
        for entry in imports {
            d.bytes(EventCodec.payload(.importStarted(entry.start)))
            d.u64(entry.startedAt)
            d.u64(entry.finishedAt ?? 0)
            d.bytes(EventCodec.payload(.importFinished(entry.finish)))
        }
        // Only when an import was aborted, so that other ledgers keep their digest.
        if eventsNotApplied > 0 {
            d.section("eventsNotApplied", count: 1)
            d.u64(eventsNotApplied)
        }
        // Only when there are any, so that ledgers without credentials keep their digest.
        let issued = credentials.all
        if !issued.isEmpty { d.section("credentials", count: issued.count) }
        for entry in issued {
            d.bytes(EventCodec.payload(.credentialIssued(entry.issue)))
            d.u64(entry.issuedAt)
            d.i64(entry.issuedRecordedAt)
            d.u64(entry.revokedAt ?? 0)
            d.i64(entry.revokedRecordedAt ?? 0)
            d.optionalString(entry.revocationReason)
        }
        let days = activitySummaries.keys.sorted()
        if !days.isEmpty { d.section("activitySummaries", count: days.count) }
        for day in days { d.bytes(EventCodec.payload(.activitySummariesRecorded([activitySummaries[day]!]))) }
        samples.feed(&d)
        statistics.feed(&d)
        return d.finalize()
    }
}
