import Foundation
import HealthModel
import LedgerLog

/// Something a caller asks the ledger to do. The decider turns a command into the
/// events to append (possibly none), checked by the rules against the current state.
package enum LedgerCommand: Sendable {
    /// Register an app, or update its name and purpose strings.
    case registerApp(AppRegistration)
    /// An app asks for permissions; types already asked for or answered are left out.
    case requestAuthorization(bundleIdentifier: String, share: Set<ObjectType>, read: Set<ObjectType>)
    /// The owner answers for an app, one decision per type (nil: leave as it is).
    case decideAuthorization(bundleIdentifier: String, decisions: [(type: ObjectType, share: Answer?, read: Answer?)],
                             basis: DecisionBasis)
    /// The owner sets a characteristic.
    case setCharacteristic(CharacteristicValue)
    /// The owner clears a characteristic.
    case clearCharacteristic(CharacteristicType)
    /// An app saves samples, all or nothing.
    case save(bundleIdentifier: String, samples: [Sample])
    /// An app saves samples already encoded (`EncodedSamples`: the importer's bulk
    /// path), all or nothing: the same rules, the same decisions (a newer sync version
    /// replaces the stored one) and the same event as `.save` of the same samples.
    case saveEncoded(bundleIdentifier: String, samples: EncodedSamples)
    /// The owner (bundle identifier nil) or an app deletes objects, all or nothing.
    case delete(bundleIdentifier: String?, uuids: [UUID], reason: String?)
    /// The owner records days of activity rings.
    case recordActivitySummaries([ActivitySummary])
    /// The owner starts an import of an Apple Health export.
    case startImport(ExportImportStart)
    /// The owner finishes an import.
    case finishImport(ExportImportFinish)
    /// The owner aborts the open import transaction (none of its events applies).
    case abortImport(ExportImportAbort)
    /// The owner keeps elements of an export that have no model, as written.
    case keepExportElements([ExportElement])
    /// An import removes what a newer export no longer holds (one per import).
    case removeAbsent(ExportAbsence)
    /// The owner sets their time zone (an IANA identifier); the same zone again is a no-op.
    case setOwnerTimeZone(String)
    /// The owner orders the sources of a quantity type (best first; empty: the
    /// default order); the order already in force is a no-op.
    case setSourcePriority(QuantityType, [String])
    /// The owner sets (or with nil clears) the unit they read a quantity type in;
    /// the same choice again is a no-op.
    case setPreferredUnit(QuantityType, HealthUnit?)
    /// An app associates samples it saved with a workout it saved (`add(_:to:)`);
    /// samples already associated with it are left out, and nothing new is a no-op.
    case associate(bundleIdentifier: String, workout: UUID, samples: [UUID])
    /// The app that saved a workout (bundle identifier) or the owner (nil) adds
    /// activities (HKWorkoutActivity segments) to it, all or nothing.
    case addWorkoutActivities(bundleIdentifier: String?, workout: UUID, activities: [WorkoutActivity])
    /// The owner issues a bearer credential (its secret's hash only).
    case issueCredential(CredentialIssue)
    /// The owner revokes a credential.
    case revokeCredential(CredentialID, reason: String?)
}

/// decide(command, state) → events.
package enum LedgerDecider {
    /// The events `command` appends, each checked by `LedgerRules` against `state`.
    /// Throws the first rule violation; returns [] when the command changes nothing.
    package static func decide(_ command: LedgerCommand, _ state: LedgerState) throws(RuleViolation) -> [Event] {
        try decideWithFacts(command, state).map(\.event)
    }

    /// `decide`, keeping each event's facts for folding (they are built once).
    static func decideWithFacts(_ command: LedgerCommand, _ state: LedgerState) throws(RuleViolation)
        -> [(event: Event, facts: EventFacts)] {
        let events = try propose(command, state)
        var out: [(event: Event, facts: EventFacts)] = []
        out.reserveCapacity(events.count)
        for event in events {
            let facts = EventFacts(event)
            try LedgerRules.checkAppend(facts, in: state)
            out.append((event, facts))
        }
        return out
    }

    /// `.saveEncoded`'s decision: the app, and the samples with the replacements the
    /// ledger's sync identities call for (a top-level sample whose sync identifier the
    /// app stores at a lower version replaces it, as `.save` decides), checked by the
    /// rules (unless `checkingRules` is false: the caller checks the event's facts).
    static func decideEncoded(_ bundle: String, _ encoded: EncodedSamples, _ state: LedgerState,
                              checkingRules: Bool = true) throws(RuleViolation) -> (AppOrdinal, EncodedSamples) {
        let ordinal = try app(bundle, state)
        guard !encoded.isEmpty else { throw .emptyCall("a save", rule: "E7") }
        var replacements: [Int: UUID] = [:]
        for i in 0..<encoded.count {
            guard let sync = encoded.syncIdentity(ofSample: i),
                  let slot = state.samples.syncSlot(app: ordinal, identifier: sync.identifier),
                  let stored = state.samples.syncValue(slot), sync.version > stored.version else { continue }
            replacements[i] = try LedgerRules.uuid(slot, state)
        }
        let decided = encoded.replacing(replacements)
        if checkingRules { try LedgerRules.checkAppend(decided.facts(app: ordinal), in: state) }
        return (ordinal, decided)
    }

    /// The `samplesSaved` event of decided encoded samples: decoded from the payload
    /// they make (a caller that wants the events back, and the general path).
    static func event(of samples: EncodedSamples, app: AppOrdinal, _ state: LedgerState) -> Event {
        var payload = PayloadWriter(capacity: samples.byteCount + 16)
        samples.writePayload(app: app, into: &payload)
        let event = payload.withWrittenBytes {
            try? EventCodec.decode(kind: EventKind.samplesSaved.rawValue, version: EventKind.samplesSaved.currentVersion,
                                   payload: $0, source: state.registry.source)
        }
        guard let event else { preconditionFailure("encoded samples decode (the model checked their parts)") }
        return event
    }

    private static func app(_ bundleIdentifier: String, _ state: LedgerState) throws(RuleViolation) -> AppOrdinal {
        guard let ordinal = state.registry.ordinal(of: bundleIdentifier) else { throw .appNotRegistered(bundleIdentifier) }
        return ordinal
    }

    private static func propose(_ command: LedgerCommand, _ state: LedgerState) throws(RuleViolation) -> [Event] {
        switch command {
        case .registerApp(let registration):
            if let existing = state.registry.ordinal(of: registration.bundleIdentifier) {
                return state.registry.registration(existing) == registration ? [] : [.appRegistered(app: existing, registration)]
            }
            return [.appRegistered(app: state.registry.nextOrdinal, registration)]

        case .requestAuthorization(let bundle, let share, let read):
            let ordinal = try app(bundle, state)
            let newShare = share.filter { t in
                let p = state.authorization.permission(app: ordinal, type: t)
                return !p.requestedShare && p.share == .notDetermined
            }.sorted()
            let newRead = read.filter { t in
                let p = state.authorization.permission(app: ordinal, type: t)
                return !p.requestedRead && p.read == nil
            }.sorted()
            if newShare.isEmpty && newRead.isEmpty { return [] }
            return [.authorizationRequested(app: ordinal, share: newShare, read: newRead)]

        case .decideAuthorization(let bundle, let decisions, let basis):
            let ordinal = try app(bundle, state)
            return decisions.compactMap { d in
                let current = state.authorization.permission(app: ordinal, type: d.type)
                let shareChanges = d.share.map { ($0 == .granted ? SharingStatus.sharingAuthorized : .sharingDenied) != current.share } ?? false
                let readChanges = d.read.map { ($0 == .granted) != current.read } ?? false
                guard shareChanges || readChanges || current.basis != basis else { return nil }
                return .authorizationDecided(AuthorizationDecision(app: ordinal, type: d.type, share: d.share, read: d.read, basis: basis))
            }

        case .setCharacteristic(let value):
            return state.characteristics[value.type] == value ? [] : [.characteristicSet(value)]

        case .clearCharacteristic(let type):
            return state.characteristics[type] == nil ? [] : [.characteristicCleared(type)]

        case .save(let bundle, let samples):
            let ordinal = try app(bundle, state)
            guard !samples.isEmpty else { throw .emptyCall("a save", rule: "E7") }
            let saved = try samples.map { (sample) throws(RuleViolation) -> SavedSample in
                guard let sync = (try? sample.common.metadata.syncIdentity()) ?? nil,
                      let slot = state.samples.syncSlot(app: ordinal, identifier: sync.identifier),
                      let stored = state.samples.syncValue(slot), sync.version > stored.version else {
                    return SavedSample(sample)
                }
                return SavedSample(sample, replaces: try LedgerRules.uuid(slot, state))
            }
            return [.samplesSaved(app: ordinal, samples: saved)]

        case .saveEncoded(let bundle, let encoded):
            // The general path (one command on its own): the event decoded from the
            // bytes the commit path would append (`decideEncoded`).
            let (ordinal, decided) = try decideEncoded(bundle, encoded, state, checkingRules: false)
            return [event(of: decided, app: ordinal, state)]

        case .delete(let bundle, let uuids, let reason):
            let actor: ActorID = try bundle.map { b throws(RuleViolation) in .app(try app(b, state)) } ?? .owner
            guard !uuids.isEmpty else { throw .emptyCall("a delete", rule: "E7") }
            let objects = try uuids.map { (uuid) throws(RuleViolation) -> DeletedObject in
                guard let slot = try LedgerRules.slot(of: uuid, state) else { return DeletedObject(uuid: uuid) }
                let entry = state.samples.entry(slot)
                return DeletedObject(uuid: uuid, syncIdentifier: entry.syncIdentifier, syncVersion: entry.syncVersion)
            }
            return [.samplesDeleted(actor: actor, objects: objects, reason: reason)]

        case .recordActivitySummaries(let summaries):
            return [.activitySummariesRecorded(summaries)]
        case .startImport(let start):
            return [.importStarted(start)]
        case .finishImport(let finish):
            return [.importFinished(finish)]
        case .abortImport(let abort):
            return [.importAborted(abort)]
        case .keepExportElements(let elements):
            return [.exportElementsKept(elements)]
        case .removeAbsent(let absence):
            return [.absentFromExport(absence)]
        case .setOwnerTimeZone(let identifier):
            return state.ownerTimeZone == identifier ? [] : [.ownerTimeZoneSet(identifier)]
        case .setSourcePriority(let type, let sources):
            return state.statistics.priority(ObjectType.quantity(type).code) == sources ? [] : [.sourcePrioritySet(type: type, sources: sources)]
        case .associate(let bundle, let workout, let samples):
            let ordinal = try app(bundle, state)
            guard !samples.isEmpty else { throw .emptyCall("an association", rule: "E12") }
            let already = Set(state.associations[workout] ?? [])
            let new = samples.filter { !already.contains($0) }
            guard new.isEmpty else { return [.samplesAssociated(app: ordinal, workout: workout, samples: new)] }
            // Nothing new: still only what this app may do (checked as if recorded).
            try LedgerRules.checkAppend(EventFacts(.samplesAssociated(app: ordinal, workout: workout, samples: samples)), in: state)
            return []
        case .setPreferredUnit(let type, let unit):
            return state.preferredUnits[type] == unit ? [] : [.preferredUnitSet(type: type, unit: unit)]
        case .addWorkoutActivities(let bundle, let workout, let activities):
            let actor: ActorID = try bundle.map { b throws(RuleViolation) in .app(try app(b, state)) } ?? .owner
            guard !activities.isEmpty else { throw .emptyCall("an addition of workout activities", rule: "E10") }
            return [.workoutActivitiesAdded(actor: actor, workout: workout, activities: activities)]
        case .issueCredential(let issue):
            return [.credentialIssued(issue)]
        case .revokeCredential(let id, let reason):
            return [.credentialRevoked(id: id, reason: reason)]
        }
    }
}
