import Foundation
import HealthModel

/// The rules that decide whether an event may be appended at its point in the log.
///
/// One piece of code, used by the store before it appends and by `verify` when it
/// checks a log written by anyone (including a tampered tool). FORMAT.md's "Rules"
/// (E1–E12) are these (the store adds E13–E14 for what it appends: `AppendRules`); each refusal names its rule (`RuleViolation.ruleID`):
/// - apps act only once registered; registrations take ordinals in order;
/// - a save needs share permission for each sample's type (for a correlation, its
///   members' types) at that point in the log; a revoked permission stops saves from
///   the revoking event on;
/// - a UUID is stored once, ever (deleted UUIDs are not reused);
/// - a sync identifier already stored for the app is replaced only by a higher sync
///   version of the same type, with the permission a delete of the stored object needs,
///   version, and the save records which UUID it replaced;
/// - an app deletes only objects it saved, while it holds share permission for their
///   type; the owner deletes anything; deleting needs a live object;
/// - only the owner decides authorization and sets characteristics (the decoder
///   already refuses those events from any other actor);
/// - characteristics are never shared; correlation types are never requested;
/// - types only Apple computes (`ObjectType.isAppleOnly`) are never requested for
///   sharing, granted sharing by the owner, or saved, except by imported sources;
/// - workout activities (E10) go to a live workout, by the app that saved it (with
///   workout share permission) or the owner, within the workout, with new UUIDs,
///   overlapping none of the workout's activities;
/// - an erasure (E16) names no sample that is live where it stands: replay passes over
///   what it erased from the start (`ErasureIndex`), and folds later events without it.
enum LedgerRules {
    /// The first rule `facts` break in `state`, or nil (no closure, no copy of the
    /// state: replay calls this for every event).
    static func violation(_ facts: EventFacts, in state: borrowing LedgerState, resealed: Bool = false) -> RuleViolation? {
        do {
            try check(facts, in: state, resealed: resealed)
            return nil
        } catch {
            return error
        }
    }

    /// `check`, then the rules for appended events only (`AppendRules`: E13, E14): what
    /// the store runs before it appends. Replay and `verify` run `check` alone.
    static func checkAppend(_ facts: EventFacts, in state: LedgerState) throws(RuleViolation) {
        try check(facts, in: state)
        try AppendRules.check(facts, in: state)
    }

    /// `resealed`: a save a cut erasure re-appended (E16), checked but for the sharing
    /// permission, which the app held when it first saved the samples.
    static func check(_ facts: EventFacts, in state: LedgerState, resealed: Bool = false) throws(RuleViolation) {
        switch facts {
        case .samplesSaved(let app, let headers, let strings):
            try checkSave(app: app, headers: headers, strings: strings, state: state, resealed: resealed)
        case .other(let event):
            try check(event, state: state)
        }
    }

    private static func requireApp(_ app: AppOrdinal, _ state: LedgerState) throws(RuleViolation) -> AppRegistration {
        guard let registration = state.registry.registration(app) else { throw .appNotRegistered("app#\(app)") }
        return registration
    }

    /// Share permission for `code`, as the rule `rule` needs it (E2 a save, E4 a
    /// replacement, E5 a delete, E10 workout activities, E12 an association).
    private static func requireShare(app: AppOrdinal, code: UInt16, state: LedgerState, rule: String) throws(RuleViolation) {
        switch state.authorization.shareStatus(app: app, code: code) {
        case .sharingAuthorized: return
        case .notDetermined: throw .authorizationNotDetermined(app: state.registry.label(app), type: typeName(code), rule: rule)
        case .sharingDenied: throw .authorizationDenied(app: state.registry.label(app), type: typeName(code), rule: rule)
        }
    }

    static let appleOnlyReason = "only Apple computes this type; apps may read it, never share it"

    /// `SampleIndex.slot(of:)` for a check: a UUID the log does not give is S11.
    @inline(__always)
    static func slot(of uuid: UUID, _ state: borrowing LedgerState) throws(RuleViolation) -> UInt32? {
        do { return try state.samples.slot(of: uuid) } catch { throw .sampleUnreadable(slot: error.slot, reason: error.reason) }
    }

    /// `SampleIndex.uuid(_:)` for a check: a UUID the log does not give is S11.
    static func uuid(_ slot: UInt32, _ state: borrowing LedgerState) throws(RuleViolation) -> UUID {
        do { return try state.samples.uuid(slot) } catch { throw .sampleUnreadable(slot: error.slot, reason: error.reason) }
    }

    static func typeName(_ code: UInt16) -> String { ObjectType(code: code)?.identifier ?? "type \(code)" }

    /// The first rule a save of `headers` by `app` breaks in `state`, or nil: `violation`
    /// of `.samplesSaved(app:headers:syncIdentifiers:)` for headers lent in place
    /// (replay's fold: no slice of the chunk's arrays made, retained and released per save).
    static func saveViolation(app: AppOrdinal, headers: UnsafeBufferPointer<SampleCodec.Header>,
                              strings: UnsafeBufferPointer<String>, in state: borrowing LedgerState,
                              resealed: Bool = false) -> RuleViolation? {
        do {
            try checkSave(app: app, headers: headers, strings: strings, state: state, resealed: resealed)
            return nil
        } catch {
            return error
        }
    }

    private static func checkSave<Headers: RandomAccessCollection<SampleCodec.Header>, Strings: RandomAccessCollection<String>>(
        app: AppOrdinal, headers: Headers, strings: Strings, state: borrowing LedgerState, resealed: Bool
    ) throws(RuleViolation) where Headers.Index == Int, Strings.Index == Int {
        guard state.registry.isRegistered(app) else { throw .appNotRegistered("app#\(app)") }
        guard !headers.isEmpty else { throw .emptyCall("a save", rule: "E7") }
        // Sets only when there is more than one sample to compare.
        var seen = UUIDBatchSet(count: headers.count > 1 ? headers.count : 0)
        var syncSeen = Set<String>()
        var ahead = headers.startIndex + 16  // the UUID-table bucket of a sample 16 ahead, fetched while this one is checked
        for h in headers {
            if ahead < headers.endIndex {
                state.samples.prefetch(headers[ahead].uuid)
                ahead += 1
            }
            guard headers.count == 1 || seen.insert(h.uuid), try Self.slot(of: h.uuid, state) == nil else {
                throw .duplicateUUID(h.uuid)
            }
            switch h.kind {
            case .unrecognized:
                // E2: any registered app may keep raw records — imported
                // sources their export's, an app a bridge's (Health Auto Export's metrics
                // with no HealthKit type). Only the owner reads them; no type's
                // permission covers them. HealthKit's `save` refuses them before the rules.
                break
            case .correlation:
                break  // its members carry the permission check
            case _ where resealed:
                break  // re-appended by the owner's erasure (E16)
            default:
                if ObjectType.isAppleOnly(code: h.typeCode), state.registry.registration(app)?.imported != true {
                    throw .typeNotAuthorizable(type: typeName(h.typeCode), reason: Self.appleOnlyReason)
                }
                try requireShare(app: app, code: h.typeCode, state: state, rule: "E2")
            }
            guard h.memberOf == nil else {
                guard h.replaces == nil else { throw .replacementMismatch(uuid: h.uuid, expected: nil, recorded: h.replaces) }
                continue
            }
            // Sync identity: a higher version replaces, and the save records what.
            var expected: UUID?
            if h.syncIndex >= 0 {
                let id = strings[strings.startIndex + Int(h.syncIndex)]
                guard syncSeen.insert(id).inserted else {
                    throw .syncIdentifierRepeated(syncIdentifier: id)
                }
                if let slot = state.samples.syncSlot(app: app, identifier: id), let stored = state.samples.syncValue(slot) {
                    guard h.syncVersion > stored.version else {
                        throw .syncVersionNotNewer(syncIdentifier: id, stored: stored.version, given: h.syncVersion)
                    }
                    // A replacement is a delete of the stored object: same type, same
                    // source (the sync index is per app), and the permission a delete needs.
                    let replaced = state.samples.entry(slot)
                    guard replaced.typeCode == h.typeCode else {
                        throw .syncReplacementTypeMismatch(syncIdentifier: id, stored: typeName(replaced.typeCode), given: typeName(h.typeCode))
                    }
                    if case .correlation? = ObjectType(code: replaced.typeCode) {
                        for member in state.samples.memberSlots(of: slot) {
                            try requireShare(app: app, code: state.samples.entry(member).typeCode, state: state, rule: "E4")
                        }
                    } else if h.kind != .unrecognized {
                        try requireShare(app: app, code: replaced.typeCode, state: state, rule: "E4")
                    }
                    expected = try Self.uuid(slot, state)
                }
            }
            guard h.replaces == expected else { throw .replacementMismatch(uuid: h.uuid, expected: expected, recorded: h.replaces) }
        }
    }

    /// E10: activities go to a live workout, added by the app that saved it (with
    /// share permission for workouts, as a save of it needs) or by the owner; each
    /// lies within the workout's interval, has a UUID no activity has, and overlaps
    /// none of the workout's activities, earlier or in the same event.
    private static func checkActivities(actor: ActorID, workout: UUID, _ activities: [WorkoutActivity],
                                        state: LedgerState) throws(RuleViolation) {
        guard !activities.isEmpty else { throw .emptyCall("an addition of workout activities", rule: "E10") }
        guard let slot = try Self.slot(of: workout, state), state.samples.isLive(slot) else { throw .objectNotFound(workout, rule: "E10") }
        let target = state.samples.entry(slot)
        guard target.typeCode == ObjectType.workout.code else {
            throw .invalidWorkoutActivity(activities[0].uuid, "is added to \(workout.uuidString), which is not a workout")
        }
        if case .app(let app) = actor {
            _ = try requireApp(app, state)
            guard target.app == app else { throw .notOwnerOfObject(uuid: workout, app: state.registry.label(app), rule: "E10") }
            try requireShare(app: app, code: ObjectType.workout.code, state: state, rule: "E10")
        }
        var seen = Set<UUID>()
        for activity in activities where !seen.insert(activity.uuid).inserted || state.workoutActivityUUIDs.contains(activity.uuid) {
            throw .invalidWorkoutActivity(activity.uuid, "is already used by a workout activity")
        }
        if let (uuid, reason) = WorkoutActivity.misplacement(of: activities, workoutStart: target.startDate, workoutEnd: target.endDate,
                                                              existing: state.workoutActivities[workout] ?? []) {
            throw .invalidWorkoutActivity(uuid, reason)
        }
    }

    private static func check(_ event: Event, state: LedgerState) throws(RuleViolation) {
        switch event {
        case .appRegistered(let ordinal, let registration):
            guard !registration.bundleIdentifier.isEmpty else { throw .appNotRegistered("(empty bundle identifier)") }
            let expected = state.registry.ordinal(of: registration.bundleIdentifier) ?? state.registry.nextOrdinal
            guard ordinal == expected else {
                throw .registrationOutOfOrder(bundleIdentifier: registration.bundleIdentifier, ordinal: ordinal, expected: expected)
            }
        case .authorizationRequested(let app, let share, let read):
            let registration = try requireApp(app, state)
            for t in share {
                if t.isAppleOnly, !registration.imported { throw .typeNotAuthorizable(type: t.identifier, reason: Self.appleOnlyReason) }
                if case .characteristic = t { throw .typeNotAuthorizable(type: t.identifier, reason: "characteristics can only be read") }
                if case .correlation = t { throw .typeNotAuthorizable(type: t.identifier, reason: "request the member types of a correlation") }
            }
            for t in read {
                if case .correlation = t { throw .typeNotAuthorizable(type: t.identifier, reason: "request the member types of a correlation") }
            }
        case .authorizationDecided(let d):
            let registration = try requireApp(d.app, state)
            if case .characteristic = d.type, d.share != nil {
                throw .typeNotAuthorizable(type: d.type.identifier, reason: "characteristics can only be read")
            }
            if case .correlation = d.type {
                throw .typeNotAuthorizable(type: d.type.identifier, reason: "authorize the member types of a correlation")
            }
            if d.type.isAppleOnly, d.share == .granted, d.basis == .owner {
                throw .typeNotAuthorizable(type: d.type.identifier, reason: Self.appleOnlyReason)
            }
            if d.basis == .imported, !registration.imported {
                throw .ownerOnly(action: "authorize \(registration.bundleIdentifier) on an imported basis")
            }
        case .characteristicSet, .characteristicCleared:
            break  // owner-only is enforced by the decoder and the store
        case .samplesDeleted(let actor, let objects, _):
            guard !objects.isEmpty else { throw .emptyCall("a delete", rule: "E7") }
            var seen = Set<UUID>()
            if case .app(let app) = actor { _ = try requireApp(app, state) }
            for o in objects {
                guard seen.insert(o.uuid).inserted, let slot = try Self.slot(of: o.uuid, state), state.samples.isLive(slot) else {
                    throw .objectNotFound(o.uuid)
                }
                let entry = state.samples.entry(slot)
                guard o.syncIdentifier == entry.syncIdentifier, o.syncVersion == entry.syncVersion else {
                    throw .tombstoneMismatch(o.uuid)
                }
                if case .app(let app) = actor {
                    guard entry.app == app else { throw .notOwnerOfObject(uuid: o.uuid, app: state.registry.label(app)) }
                    if case .correlation? = ObjectType(code: entry.typeCode) {
                        // a correlation rests on its members' types
                        for member in state.samples.memberSlots(of: slot) {
                            try requireShare(app: app, code: state.samples.entry(member).typeCode, state: state, rule: "E5")
                        }
                    } else {
                        try requireShare(app: app, code: entry.typeCode, state: state, rule: "E5")
                    }
                }
            }
        case .activitySummariesRecorded(let summaries):
            guard !summaries.isEmpty else { throw .emptyCall("an activity summary record") }
        case .exportElementsKept(let elements):
            guard !elements.isEmpty else { throw .emptyCall("a kept-elements record") }
        case .ownerTimeZoneSet:
            break  // owner-only is enforced by the decoder; the zone is checked when set
        case .sourcePrioritySet(_, let sources):
            // what the decoder checks, so the store never writes what a reader refuses
            guard sources.count <= SourcePriority.maxSources else {
                throw .invalidSourcePriority("\(sources.count) sources, more than \(SourcePriority.maxSources)")
            }
            guard Set(sources).count == sources.count else { throw .invalidSourcePriority("a source is listed twice") }
            for s in sources where s.isEmpty || s.utf8.count > 255 {
                throw .invalidSourcePriority("a bundle identifier has 1 to 255 bytes")
            }
            // E8: every one a registered app
            for s in sources where state.registry.ordinal(of: s) == nil { throw .appNotRegistered(s, rule: "E8") }
        case .preferredUnitSet:
            break  // owner-only and a unit of the type's dimension: enforced by the decoder
        case .samplesAssociated(let app, let workout, let samples):
            _ = try requireApp(app, state)
            guard !samples.isEmpty else { throw .emptyCall("an association", rule: "E12") }
            guard let slot = try Self.slot(of: workout, state), state.samples.isLive(slot) else { throw .objectNotFound(workout, rule: "E12") }
            let target = state.samples.entry(slot)
            guard target.typeCode == ObjectType.workout.code else { throw .invalidAssociation(workout, "is not a workout") }
            guard target.app == app else { throw .notOwnerOfObject(uuid: workout, app: state.registry.label(app), rule: "E12") }
            try requireShare(app: app, code: ObjectType.workout.code, state: state, rule: "E12")
            var seen = Set<UUID>()
            for uuid in samples {
                guard seen.insert(uuid).inserted else { throw .invalidAssociation(uuid, "is listed twice") }
                guard let s = try Self.slot(of: uuid, state), state.samples.isLive(s) else { throw .objectNotFound(uuid, rule: "E12") }
                let entry = state.samples.entry(s)
                guard entry.typeCode != ObjectType.workout.code else { throw .invalidAssociation(uuid, "is a workout: only samples join a workout") }
                guard entry.app == app else { throw .notOwnerOfObject(uuid: uuid, app: state.registry.label(app), rule: "E12") }
            }
        case .workoutActivitiesAdded(let actor, let workout, let activities):
            try checkActivities(actor: actor, workout: workout, activities, state: state)
        case .importStarted(let start):
            guard state.imports.firstIndex(where: { $0.start.importId == start.importId }) == nil else {
                throw .importMismatch(start.importId, "was already started")
            }
            // E11: one transaction at a time.
            if start.isTransaction, let open = state.openTransaction {
                throw .importMismatch(start.importId, "starts while import \(open.start.importId.uuidString) is open", rule: "E11")
            }
        case .importAborted(let abort):
            // E11: only the open transaction is aborted.
            guard let open = state.openTransaction, open.start.importId == abort.importId else {
                throw .importMismatch(abort.importId, "is not an open import transaction", rule: "E11")
            }
        case .absentFromExport(let absence):
            guard let i = state.imports.firstIndex(where: { $0.start.importId == absence.importId }) else {
                throw .importMismatch(absence.importId, "never started", rule: "E9")
            }
            guard state.imports[i].finishedAt == nil else { throw .importMismatch(absence.importId, "already finished", rule: "E9") }
            guard !absence.objects.isEmpty || !absence.days.isEmpty else { throw .emptyCall("an absent-from-export removal", rule: "E9") }
            var seen = Set<UUID>()
            for o in absence.objects {
                guard seen.insert(o.uuid).inserted, let slot = try Self.slot(of: o.uuid, state), state.samples.isLive(slot) else {
                    throw .objectNotFound(o.uuid, rule: "E9")
                }
                let entry = state.samples.entry(slot)
                guard o.syncIdentifier == entry.syncIdentifier, o.syncVersion == entry.syncVersion else {
                    throw .tombstoneMismatch(o.uuid, rule: "E9")
                }
                // Only what an import brought: a sample of an imported source, not a member
                // (members go with their correlation).
                guard !entry.isMember, state.registry.registration(entry.app)?.imported == true else {
                    throw .notBroughtByImport("\(o.uuid.uuidString) is not a sample an import brought")
                }
            }
            var days = Set<Int>()
            for day in absence.days {
                let key = LedgerState.dayKey(day)
                guard days.insert(key).inserted, state.activitySummaries[key] != nil else {
                    throw .notBroughtByImport("the ledger has no activity summary of \(day) (or it is named twice)")
                }
            }
        case .importFinished(let finish):
            guard let i = state.imports.firstIndex(where: { $0.start.importId == finish.importId }) else {
                throw .importMismatch(finish.importId, "never started")
            }
            guard state.imports[i].finishedAt == nil else { throw .importMismatch(finish.importId, "already finished") }
        case .credentialIssued(let issue):
            try checkIssue(issue, state: state)
        case .credentialRevoked(let id, _):
            guard let entry = state.credentials[id] else { throw .invalidCredential("no credential \(id) was issued") }
            guard entry.revokedAt == nil else {
                throw .invalidCredential("credential \(id) was already revoked at event #\(entry.revokedAt!)")
            }
        case .encryptedFrom:
            // E17: only as a ledger's first event.
            guard state.lastSequence == 0 else { throw .notFirst("encryptedFrom") }
        case .erased(let erasure):
            // E16: what an erasure names was never folded (replay read it first).
            for uuid in erasure.samples {
                if let slot = try Self.slot(of: uuid, state), state.samples.isLive(slot) { throw .erasedSampleLive(uuid) }
            }
        case .samplesSaved:
            preconditionFailure("saves are checked through their headers")
        }
    }

    /// E15: a credential is issued once, to the owner or a registered app that is not
    /// an imported source (imported sources act only through imports), with a note
    /// of at most 255 bytes.
    private static func checkIssue(_ issue: CredentialIssue, state: LedgerState) throws(RuleViolation) {
        guard state.credentials[issue.id] == nil else { throw .invalidCredential("credential \(issue.id) was already issued") }
        if case .app(let ordinal) = issue.subject {
            guard let registration = state.registry.registration(ordinal) else {
                throw .invalidCredential("app #\(ordinal) is not registered")
            }
            guard !registration.imported else {
                throw .invalidCredential("\(registration.bundleIdentifier) is an imported source: it acts only through imports")
            }
        }
        guard (issue.name?.utf8.count ?? 0) <= CredentialIssue.nameBytesMax else {
            throw .invalidCredential("a credential's name has at most \(CredentialIssue.nameBytesMax) bytes")
        }
    }
}
