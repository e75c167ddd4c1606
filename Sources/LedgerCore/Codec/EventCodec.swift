import Foundation
import HealthModel

/// Encodes events into record payloads and decodes them back (events/FORMAT.md,
/// Part 2). Every kind is versioned in the record's `kindVersion`.
///
/// Upcasting rule: a decoder reads every version of a kind that ever shipped and
/// returns the current in-memory `Event`; an encoder writes only the current
/// version. A shipped version's layout is never edited: a change adds a version.
/// A kind or version this release does not know is `EventDecodingError`, never a trap.
package enum EventCodec {
    /// Appends `event` to `batch` as one record.
    package static func append(_ event: Event, to batch: inout LedgerLogBatch) {
        batch.append(kind: event.kind.rawValue, version: event.kindVersion) { payload in
            encodePayload(event, into: &payload)
        }
    }

    /// Appends `event` as a record sealed under the data key `keyId` (a sealed
    /// ledger's; the writer encrypts it when it sequences the batch).
    package static func append(_ event: Event, to batch: inout LedgerLogBatch, sealedUnder keyId: UInt64) {
        batch.append(kind: event.kind.rawValue, version: event.kindVersion, sealedUnder: keyId) { payload in
            encodePayload(event, into: &payload)
        }
    }

    /// The payload bytes of `event` (in its `kindVersion`).
    package static func payload(_ event: Event) -> [UInt8] {
        var w = ByteWriter(capacity: 128)
        encodePayload(event, into: &w)
        return w.bytes
    }

    static func encodePayload(_ event: Event, into w: inout ByteWriter) {
        w.varint(event.actor.encoded)
        switch event {
        case .appRegistered(_, let r):
            w.string(r.bundleIdentifier)
            w.string(r.name)
            SampleCodec.optionalString(r.readPurpose, into: &w)
            SampleCodec.optionalString(r.sharePurpose, into: &w)
            w.u8(r.imported ? 1 : 0)
        case .authorizationRequested(_, let share, let read):
            w.varint(share.count)
            for t in share { w.u16(t.code) }
            w.varint(read.count)
            for t in read { w.u16(t.code) }
        case .authorizationDecided(let d):
            w.varint(UInt64(d.app))
            w.u16(d.type.code)
            w.u8(d.share?.rawValue ?? 0)
            w.u8(d.read?.rawValue ?? 0)
            w.u8(d.basis.rawValue)
        case .characteristicSet(let value):
            w.u8(UInt8(value.type.rawValue))
            switch value {
            case .dateOfBirth(let dob):
                w.varint(dob.year)
                w.u8(UInt8(dob.month))
                w.u8(UInt8(dob.day))
            case .biologicalSex(let v): w.varint(v.rawValue)
            case .bloodType(let v): w.varint(v.rawValue)
            case .fitzpatrickSkinType(let v): w.varint(v.rawValue)
            case .wheelchairUse(let v): w.varint(v.rawValue)
            case .activityMoveMode(let v): w.varint(v.rawValue)
            case .cardioFitnessMedicationsUse(let v): w.varint(v.rawValue)
            }
        case .characteristicCleared(let type):
            w.u8(UInt8(type.rawValue))
        case .samplesSaved(_, let samples):
            w.varint(samples.count)
            for saved in samples {
                w.lengthPrefixed { SampleCodec.encode(saved.sample, replaces: saved.replaces, into: &$0) }
            }
        case .samplesDeleted(_, let objects, let reason):
            SampleCodec.optionalString(reason, into: &w)
            deletedObjects(objects, into: &w)
        case .activitySummariesRecorded(let summaries):
            w.varint(summaries.count)
            for a in summaries {
                w.varint(a.day.year)
                w.u8(UInt8(a.day.month))
                w.u8(UInt8(a.day.day))
                for n in a.numbers { SampleCodec.optionalDouble(n, into: &w) }
                SampleCodec.optionalString(a.activeEnergyBurnedUnit, into: &w)
                stringPairs(a.otherAttributes, into: &w)
            }
        case .importStarted(let s):
            // Version 2 (a transaction): no content hash, no `again`; version 1 (legacy) both.
            w.uuid(s.importId)
            if let hash = s.contentSHA256 { for b in hash { w.u8(b) } }
            SampleCodec.optionalString(s.exportDate, into: &w)
            SampleCodec.optionalString(s.locale, into: &w)
            SampleCodec.optionalString(s.exportVersion, into: &w)
            w.string(s.sourcePath)
            if !s.isTransaction { w.u8(s.again ? 1 : 0) }
            stringPairs(s.me, into: &w)
        case .importAborted(let a):
            w.uuid(a.importId)
            w.string(a.reason)
        case .ownerTimeZoneSet(let identifier):
            w.string(identifier)
        case .sourcePrioritySet(let type, let sources):
            w.u16(ObjectType.quantity(type).code)
            w.varint(sources.count)
            for s in sources { w.string(s) }
        case .preferredUnitSet(let type, let unit):
            w.u16(ObjectType.quantity(type).code)
            w.string(unit?.canonicalString ?? "")
        case .samplesAssociated(_, let workout, let samples):
            w.uuid(workout)
            w.varint(samples.count)
            for uuid in samples { w.uuid(uuid) }
        case .workoutActivitiesAdded(_, let workout, let activities):
            w.uuid(workout)
            WorkoutActivityCodec.encode(activities, into: &w)
        case .exportElementsKept(let elements):
            w.varint(elements.count)
            for element in elements {
                w.varint(element.nodes.count)
                for node in element.nodes {
                    w.varint(node.depth)
                    w.string(node.name)
                    stringPairs(node.attributes, into: &w)
                }
            }
        case .absentFromExport(let a):
            w.uuid(a.importId)
            SampleCodec.optionalString(a.exportDate, into: &w)
            deletedObjects(a.objects, into: &w)
            w.varint(a.days.count)
            for day in a.days {
                w.varint(day.year)
                w.u8(UInt8(day.month))
                w.u8(UInt8(day.day))
            }
        case .credentialIssued(let c):
            w.varint(c.id.value)
            w.varint(c.subject.encoded)
            for b in c.secretSHA256 { w.u8(b) }
            if let expiry = c.expiresAt {
                w.u8(1)
                w.zigzag(expiry)
            } else {
                w.u8(0)
            }
            SampleCodec.optionalString(c.name, into: &w)
        case .credentialRevoked(let id, let reason):
            w.varint(id.value)
            SampleCodec.optionalString(reason, into: &w)
        case .erased(let erasure):
            encodeErasure(erasure, into: &w)
        case .encryptedFrom(let o):
            w.uuid(o.ledgerId)
            for b in o.chainHead { w.u8(b) }
            w.varint(o.events)
            w.zigzag(o.copiedAt)
        case .importFinished(let f):
            // Version 2 (a transaction's): the export's SHA-256 after the id.
            w.uuid(f.importId)
            if let hash = f.contentSHA256 { for b in hash { w.u8(b) } }
            w.varint(f.counts.count)
            for c in f.counts {
                w.string(c.name)
                w.varint(c.value)
            }
        }
    }

    /// Tombstones as `samplesDeleted` and `absentFromExport` write them: a count, then
    /// per object its UUID, optional sync identifier, optional zigzag sync version.
    static func deletedObjects(_ objects: [DeletedObject], into w: inout ByteWriter) {
        w.varint(objects.count)
        for o in objects {
            w.uuid(o.uuid)
            SampleCodec.optionalString(o.syncIdentifier, into: &w)
            if let v = o.syncVersion {
                w.u8(1)
                w.zigzag(v)
            } else {
                w.u8(0)
            }
        }
    }

    static func deletedObjects(_ r: inout ByteReader) throws(EventDecodingError) -> [DeletedObject] {
        let n = try r.count(limit: r.remaining)
        var objects: [DeletedObject] = []
        objects.reserveCapacity(n)
        for _ in 0..<n {
            let uuid = try r.uuid()
            let syncId = try SampleCodec.optionalString(&r)
            let at = r.absolutePosition
            let version: Int64?
            switch try r.u8() {
            case 0: version = nil
            case 1: version = try r.zigzag()
            default: throw .malformed(offset: at, reason: "bad presence byte")
            }
            objects.append(DeletedObject(uuid: uuid, syncIdentifier: syncId, syncVersion: version))
        }
        return objects
    }

    /// Entries whose values are strings (raw attributes), as pairs of strings.
    static func stringPairs(_ entries: [MetadataEntry], into w: inout ByteWriter) {
        w.varint(entries.count)
        for e in entries {
            w.string(e.key)
            w.string(e.value.description)
        }
    }

    static func stringPairs(_ r: inout ByteReader) throws(EventDecodingError) -> [MetadataEntry] {
        let n = try r.count(limit: r.remaining)
        var out: [MetadataEntry] = []
        for _ in 0..<n { out.append(MetadataEntry(key: try r.string(), value: .string(try r.string()))) }
        return out
    }

    /// Decodes a record's payload. `source` maps an app ordinal to its registration
    /// (to stamp samples with their source); nil leaves samples without a source.
    /// `keepingSamples: false` (checking a save, not using it): each sample of a save
    /// is accepted or refused exactly as otherwise, with the same error (shown valid in
    /// place, or decoded in full and let go at once); the event returned then holds none
    /// of them. (Keeping them built an array of every sample of the
    /// save, fresh memory each time, only to free it.)
    package static func decode(kind: UInt16, version: UInt16, payload: UnsafeRawBufferPointer,
                              source: ((AppOrdinal) -> Source?)? = nil,
                              keepingSamples: Bool = true) throws(EventDecodingError) -> Event {
        guard let k = EventKind(rawValue: kind) else { throw .unknownKind(kind: kind, version: version) }
        guard version >= 1 && version <= k.currentVersion else { throw .unknownVersion(kind: kind, version: version) }
        var r = ByteReader(payload)
        let actor = ActorID(encoded: try r.varint())
        func app() throws(EventDecodingError) -> AppOrdinal {
            guard case .app(let ordinal) = actor else { throw .malformed(offset: 0, reason: "\(k.name) needs an app as its actor") }
            return ordinal
        }
        func owner() throws(EventDecodingError) {
            guard actor == .owner else { throw .malformed(offset: 0, reason: "\(k.name) needs the owner as its actor", rule: "E6") }
        }
        let event: Event
        switch k {
        case .appRegistered:
            let ordinal = try app()
            let registration = AppRegistration(bundleIdentifier: try r.string(), name: try r.string(),
                                               readPurpose: try SampleCodec.optionalString(&r),
                                               sharePurpose: try SampleCodec.optionalString(&r),
                                               imported: try bool(&r))
            event = .appRegistered(app: ordinal, registration)
        case .authorizationRequested:
            let ordinal = try app()
            event = .authorizationRequested(app: ordinal, share: try types(&r), read: try types(&r))
        case .authorizationDecided:
            try owner()
            let ordinal = AppOrdinal(try r.count(limit: Int(UInt32.max)))
            let type = try objectType(&r)
            let share = try answer(&r)
            let read = try answer(&r)
            let at = r.absolutePosition
            guard let basis = DecisionBasis(rawValue: try r.u8()) else { throw .malformed(offset: at, reason: "unknown decision basis") }
            event = .authorizationDecided(AuthorizationDecision(app: ordinal, type: type, share: share, read: read, basis: basis))
        case .characteristicSet:
            try owner()
            event = .characteristicSet(try characteristic(&r))
        case .characteristicCleared:
            try owner()
            event = .characteristicCleared(try characteristicType(&r))
        case .samplesSaved:
            let ordinal = try app()
            var memo = SampleCodec.SaveMemo()
            var valid = PlainQuantityBytes.ValidMetadata()
            let samples = try savedSamples(&r, source: source?(ordinal), version: version, keeping: keepingSamples,
                                           memo: &memo, valid: &valid)
            event = .samplesSaved(app: ordinal, samples: samples)
        case .samplesDeleted:
            let reason = try SampleCodec.optionalString(&r)
            event = .samplesDeleted(actor: actor, objects: try deletedObjects(&r), reason: reason)
        case .activitySummariesRecorded:
            try owner()
            let n = try r.count(limit: r.remaining)
            var summaries: [ActivitySummary] = []
            for _ in 0..<n {
                let at = r.absolutePosition
                let y = try r.count(limit: 9999), m = Int(try r.u8()), d = Int(try r.u8())
                var numbers: [Double?] = []
                for _ in 0..<ActivitySummary.numberNames.count { numbers.append(try SampleCodec.optionalDouble(&r)) }
                let unit = try SampleCodec.optionalString(&r)
                let other = try stringPairs(&r)
                do {
                    summaries.append(try ActivitySummary(day: try DateOfBirth(year: y, month: m, day: d), numbers: numbers,
                                                         activeEnergyBurnedUnit: unit, otherAttributes: other))
                } catch {
                    throw .malformed(offset: at, reason: "activity summary: \(error)")
                }
            }
            event = .activitySummariesRecorded(summaries)
        case .importStarted:
            try owner()
            let id = try r.uuid()
            let hash = version == 1 ? try sha256(&r) : nil
            let exportDate = try SampleCodec.optionalString(&r)
            let locale = try SampleCodec.optionalString(&r)
            let exportVersion = try SampleCodec.optionalString(&r)
            let path = try r.string()
            if let hash {
                let again = try bool(&r)
                event = .importStarted(ExportImportStart(importId: id, contentSHA256: hash, exportDate: exportDate, locale: locale,
                                                         exportVersion: exportVersion, sourcePath: path, again: again,
                                                         me: try stringPairs(&r)))
            } else {
                event = .importStarted(ExportImportStart(importId: id, exportDate: exportDate, locale: locale,
                                                         exportVersion: exportVersion, sourcePath: path, me: try stringPairs(&r)))
            }
        case .importFinished:
            try owner()
            let id = try r.uuid()
            let hash = version == 2 ? try sha256(&r) : nil
            let n = try r.count(limit: r.remaining)
            var counts: [ImportCount] = []
            for _ in 0..<n { counts.append(ImportCount(try r.string(), try r.varint())) }
            event = .importFinished(ExportImportFinish(importId: id, counts: counts, contentSHA256: hash))
        case .importAborted:
            try owner()
            event = .importAborted(ExportImportAbort(importId: try r.uuid(), reason: try r.string()))
        case .absentFromExport:
            try owner()
            let id = try r.uuid()
            let exportDate = try SampleCodec.optionalString(&r)
            let objects = try deletedObjects(&r)
            let n = try r.count(limit: r.remaining / 3)
            var days: [DateOfBirth] = []
            for _ in 0..<n {
                let at = r.absolutePosition
                let y = try r.count(limit: 9999), m = Int(try r.u8()), d = Int(try r.u8())
                do { days.append(try DateOfBirth(year: y, month: m, day: d)) } catch {
                    throw .malformed(offset: at, reason: "invalid day")
                }
            }
            guard !objects.isEmpty || !days.isEmpty else { throw .malformed(offset: 0, reason: "absentFromExport removes nothing") }
            event = .absentFromExport(ExportAbsence(importId: id, exportDate: exportDate, objects: objects, days: days))
        case .ownerTimeZoneSet:
            try owner()
            let at = r.absolutePosition
            let identifier = try r.string()
            guard !identifier.isEmpty, identifier.utf8.count <= 255 else {
                throw .malformed(offset: at, reason: "a time zone identifier has 1 to 255 bytes")
            }
            event = .ownerTimeZoneSet(identifier)
        case .sourcePrioritySet:
            try owner()
            let at = r.absolutePosition
            guard case .quantity(let type)? = ObjectType(code: try r.u16()) else {
                throw .malformed(offset: at, reason: "a source priority names a quantity type")
            }
            let n = try r.count(limit: SourcePriority.maxSources)
            var sources: [String] = []
            for _ in 0..<n {
                let s = try r.string()
                guard !s.isEmpty, s.utf8.count <= 255, !sources.contains(s) else {
                    throw r.malformed("a source priority lists distinct bundle identifiers of 1 to 255 bytes")
                }
                sources.append(s)
            }
            event = .sourcePrioritySet(type: type, sources: sources)
        case .preferredUnitSet:
            try owner()
            let at = r.absolutePosition
            guard case .quantity(let type) = try objectType(&r) else {
                throw .malformed(offset: at, reason: "a preferred unit is for a quantity type")
            }
            let unitAt = r.absolutePosition
            let text = try r.string()
            var unit: HealthUnit?
            if !text.isEmpty {
                do {
                    let parsed = try HealthUnit(text)
                    try PreferredUnits.check(parsed, for: type)
                    unit = parsed
                } catch {
                    throw .malformed(offset: unitAt, reason: "preferred unit: \(error)", rule: SampleCodec.unitRule(error))
                }
            }
            event = .preferredUnitSet(type: type, unit: unit)
        case .samplesAssociated:
            let ordinal = try app()
            let workout = try r.uuid()
            let n = try r.count(limit: r.remaining / 16)
            var samples: [UUID] = []
            samples.reserveCapacity(n)
            for _ in 0..<n { samples.append(try r.uuid()) }
            event = .samplesAssociated(app: ordinal, workout: workout, samples: samples)
        case .workoutActivitiesAdded:
            let workout = try r.uuid()
            event = .workoutActivitiesAdded(actor: actor, workout: workout, activities: try WorkoutActivityCodec.decode(&r))
        case .exportElementsKept:
            try owner()
            let n = try r.count(limit: r.remaining)
            var elements: [ExportElement] = []
            for _ in 0..<n {
                let at = r.absolutePosition
                let count = try r.count(limit: r.remaining)
                var nodes: [ExportElement.Node] = []
                for _ in 0..<count {
                    nodes.append(ExportElement.Node(depth: try r.count(limit: 1 << 16), name: try r.string(),
                                                    attributes: try stringPairs(&r)))
                }
                do { elements.append(try ExportElement(nodes: nodes)) } catch {
                    throw .malformed(offset: at, reason: "\(error)")
                }
            }
            event = .exportElementsKept(elements)
        case .credentialIssued:
            try owner()
            let id = CredentialID(try r.varint())
            let subject = ActorID(encoded: try r.varint())
            let hash = try sha256(&r)
            let expiresAt = try bool(&r) ? try r.zigzag() : nil
            let at = r.absolutePosition
            let name = try SampleCodec.optionalString(&r)
            guard (name?.utf8.count ?? 0) <= CredentialIssue.nameBytesMax else {
                throw .malformed(offset: at, reason: "a credential's name has at most \(CredentialIssue.nameBytesMax) bytes")
            }
            event = .credentialIssued(CredentialIssue(id: id, subject: subject, secretSHA256: hash, expiresAt: expiresAt, name: name))
        case .credentialRevoked:
            try owner()
            event = .credentialRevoked(id: CredentialID(try r.varint()), reason: try SampleCodec.optionalString(&r))
        case .erased:
            try owner()
            event = .erased(try decodeErasure(&r, version: version))
        case .encryptedFrom:
            try owner()
            event = .encryptedFrom(LedgerOrigin(ledgerId: try r.uuid(), chainHead: try sha256(&r), events: try r.varint(),
                                                copiedAt: try r.zigzag()))
        }
        try r.finish()
        return event
    }

    /// The samples of a save's payload after its actor (their count, then each
    /// length-prefixed), each decoded in full; kept when `keeping`. When not kept (a
    /// save checked, not used), a sample of the common quantity shape is first shown
    /// valid in place (`PlainQuantityBytes.provesValid`: the same checks, no model
    /// object); any other, and any that does not pass there, is decoded in full, which
    /// accepts it or throws the error naming it. `valid` remembers metadata sections
    /// that passed, like `memo` the spellings.
    private static func savedSamples(_ r: inout ByteReader, source: Source?, version: UInt16, keeping: Bool,
                                     memo: inout SampleCodec.SaveMemo,
                                     valid: inout PlainQuantityBytes.ValidMetadata) throws(EventDecodingError) -> [SavedSample] {
        let n = try r.count(limit: r.remaining)
        var samples: [SavedSample] = []
        if keeping { samples.reserveCapacity(n) }
        for _ in 0..<n {
            var sub = try r.lengthPrefixed()
            if !keeping, PlainQuantityBytes.provesValid(sub.bytes, version: version, memo: &memo, valid: &valid) { continue }
            let sample = try SampleCodec.decode(&sub, source: source, version: version, asMember: false, memo: &memo)
            if keeping { samples.append(sample) }
            try sub.finish()
        }
        return samples
    }

    /// Checks a `samplesSaved` payload of `version` exactly as `decode` does (every
    /// sample decoded in full, none kept; the same errors), with a memo of unit and
    /// device spellings the caller carries from save to save: the spellings' meanings
    /// are functions of their bytes, so a memo is valid across saves (replay checks a
    /// million single-sample saves: a memo per save parsed each one's unit anew, a
    /// tenth of a replay). Returns the saving app.
    ///
    /// Common-shape samples are shown valid in place (`savedSamples`: building each
    /// sample only to drop it was a third of a replay's reading thread); `valid`
    /// remembers metadata sections that passed, across saves like `memo`.
    static func checkSave(version: UInt16, payload: UnsafeRawBufferPointer, source: Source?,
                          memo: inout SampleCodec.SaveMemo,
                          valid: inout PlainQuantityBytes.ValidMetadata) throws(EventDecodingError) -> AppOrdinal {
        let kind = EventKind.samplesSaved
        guard version >= 1 && version <= kind.currentVersion else { throw .unknownVersion(kind: kind.rawValue, version: version) }
        var r = ByteReader(payload)
        guard case .app(let ordinal) = ActorID(encoded: try r.varint()) else {
            throw .malformed(offset: 0, reason: "\(kind.name) needs an app as its actor")
        }
        _ = try savedSamples(&r, source: source, version: version, keeping: false, memo: &memo, valid: &valid)
        try r.finish()
        return ordinal
    }

    /// Decodes a record's payload, lent as a span (`RecordView.withPayload`).
    package static func decode(kind: UInt16, version: UInt16, payload: RawSpan,
                              source: ((AppOrdinal) -> Source?)? = nil) throws(EventDecodingError) -> Event {
        try payload.withUnsafeBytes { (bytes) throws(EventDecodingError) -> Event in
            try decode(kind: kind, version: version, payload: bytes, source: source)
        }
    }

    /// Decodes a record lent by a scan into an event.
    package static func decode(_ record: borrowing RecordView,
                              source: ((AppOrdinal) -> Source?)? = nil) throws(EventDecodingError) -> Event {
        if let failure = record.sealFailure {
            throw .sealedRecordUnopened(failure)
        }
        try SealScopes.requireSealed(kind: record.kind, inSealedLog: record.inSealedLog, sealed: record.sealedKeyId != nil)
        let (kind, version) = (record.kind, record.kindVersion)
        return try record.withPayload { (payload) throws(EventDecodingError) -> Event in
            try decode(kind: kind, version: version, payload: payload, source: source)
        }
    }

    /// Decodes a stored record into an event.
    package static func decode(_ record: StoredRecord, source: ((AppOrdinal) -> Source?)? = nil) throws(EventDecodingError) -> Event {
        let result = record.payload.withUnsafeBytes { p in
            Result { () throws(EventDecodingError) -> Event in
                try decode(kind: record.kind, version: record.kindVersion, payload: p, source: source)
            }
        }
        return try result.get()
    }

    static func sha256(_ r: inout ByteReader) throws(EventDecodingError) -> [UInt8] {
        var hash: [UInt8] = []
        hash.reserveCapacity(32)
        for _ in 0..<32 { hash.append(try r.u8()) }
        return hash
    }

    /// The importId of an `importStarted`, `importFinished` or `importAborted` payload
    /// (every version: the owner's actor byte, then the UUID), without decoding the
    /// rest: how replay finds the end of an import (`ImportBrackets`).
    package static func importId(payload: UnsafeRawBufferPointer) -> UUID? {
        guard payload.count >= 17, payload[0] == 0 else { return nil }
        return UUID(uuid: payload.loadUnaligned(fromByteOffset: 1, as: uuid_t.self))
    }

    /// `importId(payload:)` of a record seen in place.
    package static func importId(of record: borrowing RecordView) -> UUID? {
        record.withPayload { span in span.withUnsafeBytes { importId(payload: $0) } }
    }

    static func bool(_ r: inout ByteReader) throws(EventDecodingError) -> Bool {
        let at = r.absolutePosition
        switch try r.u8() {
        case 0: return false
        case 1: return true
        default: throw .malformed(offset: at, reason: "bad bool")
        }
    }

    static func answer(_ r: inout ByteReader) throws(EventDecodingError) -> Answer? {
        let at = r.absolutePosition
        let b = try r.u8()
        if b == 0 { return nil }
        guard let a = Answer(rawValue: b) else { throw .malformed(offset: at, reason: "unknown answer") }
        return a
    }

    static func objectType(_ r: inout ByteReader) throws(EventDecodingError) -> ObjectType {
        let at = r.absolutePosition
        let code = try r.u16()
        guard let type = ObjectType(code: code) else { throw .malformed(offset: at, reason: "unknown type code \(code)") }
        return type
    }

    static func types(_ r: inout ByteReader) throws(EventDecodingError) -> [ObjectType] {
        let n = try r.count(limit: r.remaining / 2)
        var out: [ObjectType] = []
        for _ in 0..<n { out.append(try objectType(&r)) }
        return out
    }

    static func characteristicType(_ r: inout ByteReader) throws(EventDecodingError) -> CharacteristicType {
        let at = r.absolutePosition
        guard let t = CharacteristicType(rawValue: UInt16(try r.u8())) else { throw .malformed(offset: at, reason: "unknown characteristic") }
        return t
    }

    static func characteristic(_ r: inout ByteReader) throws(EventDecodingError) -> CharacteristicValue {
        let type = try characteristicType(&r)
        let at = r.absolutePosition
        func value<T: RawRepresentable<Int>>(_: T.Type) throws(EventDecodingError) -> T {
            guard let v = T(rawValue: try r.count(limit: 1 << 16)) else { throw .malformed(offset: at, reason: "unknown \(type.shortName) value") }
            return v
        }
        switch type {
        case .dateOfBirth:
            let y = try r.count(limit: 9999), m = Int(try r.u8()), d = Int(try r.u8())
            do { return .dateOfBirth(try DateOfBirth(year: y, month: m, day: d)) } catch {
                throw .malformed(offset: at, reason: "invalid date of birth")
            }
        case .biologicalSex: return .biologicalSex(try value(BiologicalSex.self))
        case .bloodType: return .bloodType(try value(BloodType.self))
        case .fitzpatrickSkinType: return .fitzpatrickSkinType(try value(FitzpatrickSkinType.self))
        case .wheelchairUse: return .wheelchairUse(try value(WheelchairUse.self))
        case .activityMoveMode: return .activityMoveMode(try value(ActivityMoveMode.self))
        case .cardioFitnessMedicationsUse:
            let raw = try r.count(limit: 3)
            return .cardioFitnessMedicationsUse(CardioFitnessMedicationsUse(rawValue: raw))
        }
    }
}

import LedgerLog

/// The log's batch type, under the name the event layer uses.
package typealias LedgerLogBatch = RecordBatch
