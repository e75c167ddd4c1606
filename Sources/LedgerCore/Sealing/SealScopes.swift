import Foundation
import HealthModel
import LedgerKeys

/// Which events a sealed ledger seals, and under which key scope (issue 32; DESIGN.md,
/// "Keys and erasure"): one key per (source, type, UTC month), so that every erasure
/// the owner may ask for is whole keys (a source, an import, a type, the person), or
/// whole keys plus at most two months re-keyed (a range of days).
///
/// - `samplesSaved`: one record per (source, type, month of the sample's start): a
///   save whose samples fall into several scopes is appended as several records, in the
///   same batch (so still all or nothing), each folded on its own. A correlation or a
///   workout goes whole with its own type. The source is the saving app, or — inside an
///   import transaction — that app *as brought by that import* (`importedApp`).
/// - `characteristicSet`: the owner (or the import bringing it), the characteristic's
///   type code, the month the event was recorded in.
/// - `activitySummariesRecorded`: the owner (or the import), 0x0700, the month recorded.
/// - `appRegistered`: the app (as brought by the import, inside one), 0xFFFD, the month
///   recorded: an app's name can itself say what it treats.
/// - `samplesDeleted` (sync identities, a reason): the deleting app or the owner (the
///   import, inside one), 0xFFFE, the month recorded; `absentFromExport` (the removed
///   days, the newer export's date): the import, type 0.
/// - `workoutActivitiesAdded`: its actor, 0x0600, the month of the first activity's start.
/// - `importStarted` (the export's `<Me>`) and `exportElementsKept` (clinical records,
///   audiograms and the like): the import itself, type 0, the month recorded.
///
/// Every other kind stays plain: authorization decisions, an import's counts and its
/// end or abort, priorities, preferred units, the time zone, associations (UUIDs) and
/// credentials carry no health values.
enum SealScopes {
    /// The type code of an import's own sealed events.
    static let importContent: UInt16 = 0

    /// The source of records saved by `app`, inside the import `importId` if any.
    static func source(app: AppOrdinal, importId: UUID?) -> KeySource {
        if let importId { return .importedApp(importId: uuidBytes(importId), ordinal: UInt64(app)) }
        return .app(ordinal: UInt64(app))
    }

    /// The type code of sealed registrations.
    static let registration: UInt16 = 0xFFFD
    /// The type code of sealed deletions (their sync identities and reasons).
    static let deletion: UInt16 = 0xFFFE
    /// The type code of erasures' own keys (`erased` events): no erasure destroys one.
    static let erasure: UInt16 = 0xFFFC

    /// Whether keys of this type code hold what an erasure keeps: registrations (an app
    /// and its grants stay: later events name it), erasures themselves, and the
    /// snapshot key (rotated by every erasure apart from its scope).
    static func survivesErasure(type: UInt16) -> Bool {
        type == registration || type == erasure || type == SealedSnapshotFileSystem.scope.type
    }

    /// The kinds an encrypted ledger seals (rule K4: never found plain in one).
    static let sealedKinds: Set<UInt16> = [
        EventKind.appRegistered.rawValue, EventKind.characteristicSet.rawValue, EventKind.samplesSaved.rawValue,
        EventKind.samplesDeleted.rawValue, EventKind.activitySummariesRecorded.rawValue,
        EventKind.importStarted.rawValue, EventKind.exportElementsKept.rawValue,
        EventKind.workoutActivitiesAdded.rawValue, EventKind.absentFromExport.rawValue, EventKind.erased.rawValue,
    ]

    /// The scope of a non-save event, or nil when it stays plain. Inside an import
    /// transaction, what the import brings (its apps' registrations, the export's
    /// characteristics and activity summaries) is the import's, so that erasing the
    /// import is whole keys and erases none of the owner's own entries.
    static func scope(of event: Event, recordedAt: Int64, importId: UUID?) -> KeyScope? {
        let recorded = UTCMonth(containingNanoseconds: recordedAt)
        let owner = importId.map(importSource) ?? KeySource.app(ordinal: 0)
        switch event {
        case .appRegistered(let app, _):
            return KeyScope(source: source(app: app, importId: importId), type: registration, month: recorded)
        case .samplesDeleted(let actor, _, _):
            let source = importId.map(importSource) ?? KeySource.app(ordinal: actor.encoded)
            return KeyScope(source: source, type: deletion, month: recorded)
        case .absentFromExport(let absence):
            return KeyScope(source: importSource(absence.importId), type: importContent, month: recorded)
        case .characteristicSet(let value):
            return KeyScope(source: owner, type: ObjectType.characteristic(value.type).code, month: recorded)
        case .activitySummariesRecorded:
            return KeyScope(source: owner, type: ObjectType.activitySummary.code, month: recorded)
        case .workoutActivitiesAdded(let actor, _, let activities):
            let start = activities.first.map { month(ofReferenceSeconds: $0.startDate.timeIntervalSinceReferenceDate) }
            return KeyScope(source: .app(ordinal: UInt64(actor.encoded)), type: ObjectType.workout.code, month: start ?? recorded)
        case .importStarted(let start):
            return KeyScope(source: importSource(start.importId), type: importContent, month: recorded)
        case .exportElementsKept:
            return KeyScope(source: owner, type: importContent, month: recorded)
        case .erased:
            return KeyScope(source: .app(ordinal: 0), type: erasure, month: recorded)
        default:
            return nil
        }
    }

    /// The scope of one top-level sample.
    static func scope(typeCode: UInt16, start: Double, source: KeySource) -> KeyScope {
        KeyScope(source: source, type: typeCode, month: month(ofReferenceSeconds: start))
    }

    /// An import's own source.
    static func importSource(_ importId: UUID) -> KeySource {
        // 16 bytes by construction: cannot fail.
        guard let source = try? KeySource(kind: .importRun, id: uuidBytes(importId)) else {
            preconditionFailure("a UUID is 16 bytes")
        }
        return source
    }

    static func uuidBytes(_ id: UUID) -> [UInt8] { withUnsafeBytes(of: id.uuid) { Array($0) } }

    /// The UTC month of a date given as seconds since 2001-01-01T00:00:00Z (a sample's
    /// dates lie in years 1…9999, D1; anything else is clamped into them).
    static func month(ofReferenceSeconds seconds: Double) -> UTCMonth {
        let unix = seconds.isFinite ? seconds + 978_307_200 : 0
        // Years 1…9999 are days -719,162 … 2,932,896 from 1970.
        return UTCMonth(daysSince1970: Int64(max(-719_162, min(2_932_896, (unix / 86_400).rounded(.down)))))
    }
}

extension SealScopes {
    /// K4: in an encrypted ledger (a log of format version 2) a kind it seals is never
    /// plain. A plain one was written by someone without the key (a forgery the CRC and
    /// chain cannot catch: anyone may append to the file), and is refused as malformed.
    static func requireSealed(kind: UInt16, inSealedLog: Bool, sealed: Bool) throws(EventDecodingError) {
        guard inSealedLog, !sealed, sealedKinds.contains(kind) else { return }
        let name = EventKind(rawValue: kind).map { "\($0)" } ?? "kind \(kind)"
        throw .malformed(offset: 0, reason: "a \(name) record of an encrypted ledger is not sealed", rule: "K4")
    }

    /// The type code a sample's record carries (0 for one kept raw).
    static func typeCode(of sample: Sample) -> UInt16 {
        if case .unrecognized = sample { return 0 }
        if case .known(let type) = sample.type { return type.code }
        return 0
    }

    /// A decided event as the records a sealed ledger appends: a save split by scope
    /// (its samples in order within each part), anything else whole with its scope or
    /// none. Each part's facts are its own (`EventFacts`), for folding part by part.
    static func records(of event: Event, facts: EventFacts, recordedAt: Int64,
                        importId: UUID?) -> [(event: Event, facts: EventFacts, scope: KeyScope?)] {
        guard case .samplesSaved(let app, let samples) = event else {
            return [(event, facts, scope(of: event, recordedAt: recordedAt, importId: importId))]
        }
        let source = source(app: app, importId: importId)
        var scopes: [KeyScope] = []
        scopes.reserveCapacity(samples.count)
        var uniform = true
        for saved in samples {
            let s = scope(typeCode: typeCode(of: saved.sample), start: saved.sample.startDate.timeIntervalSinceReferenceDate, source: source)
            if uniform, let first = scopes.first, first != s { uniform = false }
            scopes.append(s)
        }
        guard let first = scopes.first else { return [(event, facts, nil)] }
        if uniform { return [(event, facts, first)] }
        // Several scopes: each part's facts are the save's own headers, sliced (a sample's
        // header, then its members'), renumbered — not derived again from the samples.
        guard case .samplesSaved(_, let headers, let strings) = facts else { preconditionFailure("a save's facts are a save's") }
        var order: [KeyScope] = []
        var parts: [KeyScope: Int] = [:]
        var grouped: [(samples: [SavedSample], headers: [SampleCodec.Header], strings: [String])] = []
        var h = headers.startIndex
        for (i, saved) in samples.enumerated() {
            let s = scopes[i]
            let g: Int
            if let known = parts[s] { g = known } else {
                g = grouped.count
                parts[s] = g
                order.append(s)
                grouped.append(([], [], []))
            }
            grouped[g].samples.append(saved)
            // This sample's headers: its own (top level), then its members'.
            let start = h
            h += 1
            while h < headers.endIndex, headers[h].memberOf != nil { h += 1 }
            let base = grouped[g].headers.count
            for var header in headers[start..<h] {
                if let parent = header.memberOf { header.memberOf = parent - (start - headers.startIndex) + base }
                if header.syncIndex >= 0 {
                    grouped[g].strings.append(strings[strings.startIndex + Int(header.syncIndex)])
                    header.syncIndex = Int32(grouped[g].strings.count - 1)
                }
                grouped[g].headers.append(header)
            }
        }
        precondition(h == headers.endIndex, "a save's facts hold its samples' headers, in order")
        return order.indices.map { k in
            (Event.samplesSaved(app: app, samples: grouped[k].samples),
             EventFacts.samplesSaved(app: app, headers: grouped[k].headers[...], syncIdentifiers: grouped[k].strings[...]), order[k])
        }
    }
}

/// What the ledger's fold needs to lay out a sealed ledger's records: the import
/// transaction open, if any (its saves are keyed by the import as well as the app).
struct SealingContext {
    let importId: UUID?
}
