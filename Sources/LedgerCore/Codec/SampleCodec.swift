import Foundation
import HealthModel

/// Encoding of one sample (events/FORMAT.md, Part 2, "sample"), version 1.
///
/// ```
/// sample   := kind u8 · uuid[16] · typeCode u16 · start f64 · end f64 · flags u8
///             · [replaces uuid[16]] · [syncIdentifier string · syncVersion zigzag]
///             · kind-specific
///             · [metadata] · [device] · [creationDate f64] · [sourceVersion string]
///             · [offsets: start zigzag · end zigzag · (creation zigzag if creationDate)]
///             · [beats: count varint · (bpm f64 · time string) × count]   (quantity only)
/// flags    := 1 metadata · 2 device · 4 creationDate · 8 sourceVersion · 16 replaces · 32 sync
///             · 64 writtenOffsets · 128 beats
/// ```
/// The fixed header comes first and a correlation's members come first in its
/// kind-specific part, so replay reads what projections need and skips the rest
/// through the length prefix every sample carries.
enum SampleCodec {
    enum Kind: UInt8 {
        case quantity = 1, category = 2, correlation = 3, workout = 4, unrecognized = 5
    }

    struct Flags: OptionSet {
        let rawValue: UInt8
        static let metadata = Flags(rawValue: 1)
        static let device = Flags(rawValue: 2)
        static let creationDate = Flags(rawValue: 4)
        static let sourceVersion = Flags(rawValue: 8)
        static let replaces = Flags(rawValue: 16)
        static let sync = Flags(rawValue: 32)
        static let writtenOffsets = Flags(rawValue: 64)
        static let beats = Flags(rawValue: 128)
    }

    // MARK: Encoding

    /// A sample's kind and type code as the payload writes them (0 for a raw record):
    /// the one mapping, used by the encoder and by the store's facts (`EventFacts`).
    static func kindAndCode(_ sample: Sample) -> (kind: Kind, code: UInt16) {
        switch sample {
        case .quantity(let s): (.quantity, ObjectType.quantity(s.type).code)
        case .category(let s): (.category, ObjectType.category(s.type).code)
        case .correlation(let s): (.correlation, ObjectType.correlation(s.type).code)
        case .workout: (.workout, ObjectType.workout.code)
        case .unrecognized: (.unrecognized, 0)
        }
    }

    static func encode(_ sample: Sample, replaces: UUID?, into w: inout ByteWriter) {
        let common = sample.common
        let (kind, typeCode) = kindAndCode(sample)
        let sync = (try? common.metadata.syncIdentity()) ?? nil
        var flags = Flags()
        if !common.metadata.isEmpty { flags.insert(.metadata) }
        if common.device != nil { flags.insert(.device) }
        if common.creationDate != nil { flags.insert(.creationDate) }
        if common.source?.version != nil { flags.insert(.sourceVersion) }
        if replaces != nil { flags.insert(.replaces) }
        if sync != nil { flags.insert(.sync) }
        if common.writtenOffsets != nil { flags.insert(.writtenOffsets) }
        if case .quantity(let q) = sample, !q.beats.isEmpty { flags.insert(.beats) }

        w.u8(kind.rawValue)
        w.uuid(common.uuid)
        w.u16(typeCode)
        w.date(common.startDate)
        w.date(common.endDate)
        w.u8(flags.rawValue)
        if let replaces { w.uuid(replaces) }
        if let sync {
            w.string(sync.identifier)
            w.zigzag(sync.version)
        }
        switch sample {
        case .quantity(let s):
            w.f64(s.quantity.value)
            w.string(s.quantity.unit.spelling)
        case .category(let s):
            w.zigzag(Int64(s.value))
        case .correlation(let s):
            w.varint(s.objects.count)
            for member in s.objects {
                w.lengthPrefixed { encode(.quantity(member), replaces: nil, into: &$0) }
            }
        case .workout(let s):
            encodeWorkout(s, into: &w)
        case .unrecognized(let s):
            w.string(s.typeIdentifier)
            optionalString(s.value, into: &w)
            optionalString(s.unit, into: &w)
            optionalString(s.reason, into: &w)
        }
        if flags.contains(.metadata) { encodeMetadata(common.metadata, into: &w) }
        if let device = common.device { encodeDevice(device, into: &w) }
        if let creation = common.creationDate { w.date(creation) }
        if let version = common.source?.version { w.string(version) }
        if let offsets = common.writtenOffsets {
            w.zigzag(Int64(offsets.start))
            w.zigzag(Int64(offsets.end))
            if common.creationDate != nil { w.zigzag(Int64(offsets.creation ?? 0)) }
        }
        if case .quantity(let q) = sample, !q.beats.isEmpty {
            w.varint(q.beats.count)
            for beat in q.beats {
                w.f64(beat.bpm)
                w.string(beat.time)
            }
        }
    }

    static func optionalString(_ s: String?, into w: inout ByteWriter) { w.optional(s) { $0.string($1) } }

    static func optionalDouble(_ d: Double?, into w: inout ByteWriter) { w.optional(d) { $0.f64($1) } }

    static func encodeQuantity(_ q: Quantity?, into w: inout ByteWriter) {
        w.optional(q) { w, q in
            w.f64(q.value)
            w.string(q.unit.spelling)
        }
    }

    static func encodeMetadata(_ m: Metadata, into w: inout ByteWriter) {
        w.varint(m.count)
        for entry in m {
            w.string(entry.key)
            switch entry.value {
            case .string(let s): w.u8(1); w.string(s)
            case .integer(let i): w.u8(2); w.zigzag(i)
            case .number(let d): w.u8(3); w.f64(d)
            case .bool(let b): w.u8(4); w.u8(b ? 1 : 0)
            case .date(let d): w.u8(5); w.date(d)
            case .quantity(let q): w.u8(6); w.f64(q.value); w.string(q.unit.spelling)
            }
        }
    }

    static func encodeDevice(_ d: Device, into w: inout ByteWriter) {
        let fields = d.fields
        var present: UInt8 = 0
        for (i, f) in fields.enumerated() where f != nil { present |= 1 << UInt8(i) }
        w.u8(present)
        for f in fields { if let f { w.string(f) } }
    }

    static func encodeWorkout(_ s: Workout, into w: inout ByteWriter) {
        w.varint(UInt64(s.activityType.rawValue))
        w.f64(s.duration)
        encodeQuantity(s.totalEnergyBurned, into: &w)
        encodeQuantity(s.totalDistance, into: &w)
        w.varint(s.events.count)
        for e in s.events {
            w.u8(UInt8(e.kind.rawValue))
            w.date(e.date)
            w.f64(e.duration)
            encodeMetadata(e.metadata, into: &w)
        }
        w.varint(s.statistics.count)
        for st in s.statistics {
            w.string(st.type.rawValue)
            w.date(st.startDate)
            w.date(st.endDate)
            optionalDouble(st.average, into: &w)
            optionalDouble(st.minimum, into: &w)
            optionalDouble(st.maximum, into: &w)
            optionalDouble(st.sum, into: &w)
            optionalString(st.unit, into: &w)
        }
        w.varint(s.routes.count)
        for r in s.routes {
            optionalString(r.sourceName, into: &w)
            optionalString(r.sourceVersion, into: &w)
            optionalDouble(r.creationDate?.timeIntervalSinceReferenceDate, into: &w)
            optionalDouble(r.startDate?.timeIntervalSinceReferenceDate, into: &w)
            optionalDouble(r.endDate?.timeIntervalSinceReferenceDate, into: &w)
            optionalString(r.fileReference, into: &w)
            encodeMetadata(r.metadata, into: &w)
            w.varint(r.locations.count)
            for l in r.locations {
                w.date(l.date)
                w.f64(l.latitude)
                w.f64(l.longitude)
                optionalDouble(l.altitude, into: &w)
                optionalDouble(l.horizontalAccuracy, into: &w)
                optionalDouble(l.verticalAccuracy, into: &w)
                optionalDouble(l.course, into: &w)
                optionalDouble(l.speed, into: &w)
            }
        }
    }

    // MARK: Decoding (full)

    /// Decodes a sample, re-validating it through the model's constructors: bytes
    /// that decode are a value the model accepts. `source` is the saving app.
    /// Decodes one sample of a `samplesSaved` payload of `version` (1: no flags above
    /// 32, no reason on an unrecognized sample; 2: the current layout).
    /// `asMember`: the sample is a correlation's member, which must be a quantity
    /// sample that replaces nothing (checked before anything nested is read, so
    /// members never nest: the decoder recurses at most one level).
    static func decode(_ r: inout ByteReader, source: Source?, version: UInt16 = EventKind.samplesSaved.currentVersion,
                       asMember: Bool = false) throws(EventDecodingError) -> SavedSample {
        var memo = SaveMemo()
        return try decode(&r, source: source, version: version, asMember: asMember, memo: &memo)
    }

    /// `decode`, with what the samples before it (of the same save) spelled.
    static func decode(_ r: inout ByteReader, source: Source?, version: UInt16, asMember: Bool,
                       memo: inout SaveMemo) throws(EventDecodingError) -> SavedSample {
        let start = r.absolutePosition
        let (kind, uuid, typeCode, startDate, endDate, flags) = try readFrame(&r, version: version, asMember: asMember)
        let replaces = flags.contains(.replaces) ? try r.uuid() : nil
        var sync: (String, Int64)?
        if flags.contains(.sync) { sync = (try r.string(), try r.zigzag()) }

        enum Body {
            case quantity(Double, SaveMemo.Read)
            case category(Int64)
            case correlation([QuantitySample])
            case workout(WorkoutBody)
            case unrecognized(String, String?, String?, String?)
        }
        let body: Body
        switch kind {
        case .quantity: body = .quantity(try r.finite(), try memo.read(&r))
        case .category: body = .category(try r.zigzag())
        case .correlation:
            let n = try r.count(limit: r.remaining)
            var members: [QuantitySample] = []
            for _ in 0..<n {
                var sub = try r.lengthPrefixed()
                let saved = try decode(&sub, source: source, version: version, asMember: true, memo: &memo)
                guard case .quantity(let member) = saved.sample else { throw sub.malformed(memberRule, rule: "V2") }
                try sub.finish()
                members.append(member)
            }
            body = .correlation(members)
        case .workout: body = .workout(try decodeWorkout(&r))
        case .unrecognized:
            body = .unrecognized(try r.string(), try optionalString(&r), try optionalString(&r),
                                 version >= 2 ? try optionalString(&r) : nil)
        }
        let metadata = flags.contains(.metadata) ? try decodeMetadata(&r) : Metadata()
        let device = flags.contains(.device) ? try memo.device(&r) : nil
        let creationDate = flags.contains(.creationDate) ? try r.date() : nil
        let version = flags.contains(.sourceVersion) ? try r.string() : nil
        var offsets: WrittenOffsets?
        if flags.contains(.writtenOffsets) {
            let start = try r.zigzag(), end = try r.zigzag()
            let creation = creationDate != nil ? try r.zigzag() : nil
            let limit = Int64(ISO8601.maxOffsetSeconds)
            // magnitude, not abs: abs(Int64.min) traps, and these integers are untrusted.
            guard start.magnitude <= UInt64(limit), end.magnitude <= UInt64(limit), (creation ?? 0).magnitude <= UInt64(limit) else { throw r.malformed("UTC offset beyond ±23:59", rule: "D2") }
            offsets = WrittenOffsets(start: Int(start), end: Int(end), creation: creation.map { Int($0) })
        }
        var beats: [InstantaneousBeat] = []
        if flags.contains(.beats) {
            let n = try r.count(limit: r.remaining)
            beats.reserveCapacity(n)
            for _ in 0..<n {
                let at = r.absolutePosition
                let bpm = try r.finite()
                let time = try r.string()
                do { beats.append(try InstantaneousBeat(bpm: bpm, time: time)) } catch {
                    throw EventDecodingError.malformed(offset: at, reason: "beat: \(error)")
                }
            }
        }
        let sampleSource = source.map { Source(bundleIdentifier: $0.bundleIdentifier, name: $0.name, version: version) }

        let modelStart = r.absolutePosition
        do {
            if let sync {
                guard let identity = try metadata.syncIdentity(), identity.identifier == sync.0, identity.version == sync.1 else {
                    throw EventDecodingError.malformed(offset: start, reason: "sync identity does not match the metadata")
                }
            }
            let common = try SampleCommon(uuid: uuid, startDate: startDate, endDate: endDate, metadata: metadata,
                                          device: device, source: sampleSource, creationDate: creationDate,
                                          writtenOffsets: offsets)
            let sample: Sample
            switch body {
            case .quantity(let value, let unit):
                guard case .quantity(let type)? = ObjectType(code: typeCode) else { throw EventDecodingError.malformed(offset: start, reason: "type code \(typeCode) is not a quantity type", rule: "V1") }
                // A stored value is read back as written: a range this version added
                // does not make an accepted log unreadable.
                // `Quantity(value, unit: text)` is `Quantity(value, try HealthUnit(text))`.
                sample = .quantity(try QuantitySample(type: type, quantity: try Quantity(value, try memo.unit(unit)), common: common,
                                                      beats: beats, checkingRange: false))
            case .category(let value):
                guard case .category(let type)? = ObjectType(code: typeCode) else { throw EventDecodingError.malformed(offset: start, reason: "type code \(typeCode) is not a category type", rule: "V1") }
                sample = .category(try CategorySample(type: type, value: Int(value), common: common))
            case .correlation(let members):
                guard case .correlation(let type)? = ObjectType(code: typeCode) else { throw EventDecodingError.malformed(offset: start, reason: "type code \(typeCode) is not a correlation type", rule: "V1") }
                sample = .correlation(try Correlation(type: type, objects: members, common: common))
            case .workout(let w):
                guard typeCode == ObjectType.workout.code else { throw EventDecodingError.malformed(offset: start, reason: "type code \(typeCode) is not the workout type", rule: "V1") }
                sample = .workout(try Workout(activityType: w.activity, duration: w.duration, totalEnergyBurned: w.energy,
                                              totalDistance: w.distance, events: w.events, statistics: w.statistics,
                                              routes: w.routes, common: common, checkingRange: false))
            case .unrecognized(let type, let value, let unit, let reason):
                guard typeCode == 0 else { throw EventDecodingError.malformed(offset: start, reason: "type code \(typeCode) on an unrecognized sample, whose type code must be 0", rule: "V1") }
                sample = .unrecognized(UnrecognizedSample(typeIdentifier: type, value: value, unit: unit, reason: reason,
                                                          common: common))
            }
            return SavedSample(sample, replaces: replaces)
        } catch let error as EventDecodingError {
            throw error
        } catch {
            throw EventDecodingError.malformed(offset: modelStart, reason: "the model refuses the sample: \(error)",
                                               rule: unitRule(error))
        }
    }

    static let memberRule = "a correlation member must be a quantity sample and replaces nothing"

    /// V3 for a unit string the bounded grammar refuses (`unitSyntax`); K3 for any
    /// other refusal of the model.
    static func unitRule(_ error: any Error) -> String {
        if case .unitSyntax? = error as? HealthModelError { return "V3" }
        return "K3"
    }

    /// The fixed start of every sample, read and checked the same way by the full
    /// decoder and by replay's header reader (one definition of a valid frame): a
    /// known kind; a type code of that kind (a quantity type for a quantity sample,
    /// and so on; 0 for an unrecognized one); dates in `ISO8601.validRange` with the
    /// end not before the start; flags this version knows, beats only on a quantity;
    /// for a member, a quantity that replaces nothing. The reader stands after the
    /// flags.
    static func readFrame(_ r: inout ByteReader, version: UInt16, asMember: Bool) throws(EventDecodingError)
        -> (Kind, UUID, UInt16, Date, Date, Flags) {
        let at = r.absolutePosition
        guard let kind = Kind(rawValue: try r.u8()) else { throw .malformed(offset: at, reason: "unknown sample kind") }
        guard !asMember || kind == .quantity else { throw .malformed(offset: at, reason: memberRule, rule: "V2") }
        let uuid = try r.uuid()
        let typeCode = try r.u16()
        try checkTypeCode(typeCode, of: kind, at: at)
        let startDate = try r.date()
        let endDate = try r.date()
        guard endDate >= startDate else { throw .malformed(offset: at, reason: "end before start") }
        let flags = Flags(rawValue: try r.u8())
        guard version >= 2 || flags.rawValue & ~0x3F == 0 else { throw r.malformed("unknown sample flags") }
        guard kind == .quantity || !flags.contains(.beats) else { throw r.malformed("beats on a sample that is not a quantity") }
        guard !asMember || !flags.contains(.replaces) else { throw .malformed(offset: at, reason: memberRule, rule: "V2") }
        return (kind, uuid, typeCode, startDate, endDate, flags)
    }

    /// Throws unless `code` names a type of `kind` (0 for an unrecognized sample).
    static func checkTypeCode(_ code: UInt16, of kind: Kind, at offset: Int) throws(EventDecodingError) {
        let fits: Bool
        switch (kind, ObjectType(code: code)) {
        case (.quantity, .quantity?), (.category, .category?), (.correlation, .correlation?): fits = true
        case (.workout, let type?): fits = type == .workout
        case (.unrecognized, _): fits = code == 0
        default: fits = false
        }
        guard fits else { throw .malformed(offset: offset, reason: "type code \(code) is not a type of a \(kind) sample", rule: "V1") }
    }

    struct WorkoutBody {
        var activity: WorkoutActivityType
        var duration: Double
        var energy: Quantity?
        var distance: Quantity?
        var events: [WorkoutEvent]
        var statistics: [WorkoutStatistic]
        var routes: [WorkoutRoute]
    }

    static func optionalString(_ r: inout ByteReader) throws(EventDecodingError) -> String? {
        switch try r.u8() {
        case 0: return nil
        case 1: return try r.string()
        default: throw r.malformed("bad presence byte")
        }
    }

    static func optionalDouble(_ r: inout ByteReader) throws(EventDecodingError) -> Double? {
        switch try r.u8() {
        case 0: return nil
        case 1: return try r.finite()
        default: throw r.malformed("bad presence byte")
        }
    }

    static func decodeQuantity(_ r: inout ByteReader) throws(EventDecodingError) -> Quantity? {
        switch try r.u8() {
        case 0: return nil
        case 1:
            let at = r.absolutePosition
            let value = try r.finite()
            let unit = try r.string()
            do { return try Quantity(value, unit: unit) } catch {
                throw EventDecodingError.malformed(offset: at, reason: "quantity: \(error)", rule: unitRule(error))
            }
        default: throw r.malformed("bad presence byte")
        }
    }

    static func decodeMetadata(_ r: inout ByteReader) throws(EventDecodingError) -> Metadata {
        let n = try r.count(limit: r.remaining)
        var m = Metadata()
        for _ in 0..<n {
            let key = try r.string()
            let tagAt = r.absolutePosition
            switch try r.u8() {
            case 1: m.append(key, .string(try r.string()))
            case 2: m.append(key, .integer(try r.zigzag()))
            case 3: m.append(key, .number(try r.finite()))
            case 4:
                let b = try r.u8()
                guard b <= 1 else { throw r.malformed("bad bool") }
                m.append(key, .bool(b == 1))
            case 5: m.append(key, .date(try r.date()))
            case 6:
                let value = try r.finite()
                let unit = try r.string()
                do { m.append(key, .quantity(try Quantity(value, unit: unit))) } catch {
                    throw EventDecodingError.malformed(offset: tagAt, reason: "metadata quantity: \(error)", rule: unitRule(error))
                }
            default: throw EventDecodingError.malformed(offset: tagAt, reason: "unknown metadata value tag")
            }
        }
        return m
    }

    static func decodeDevice(_ r: inout ByteReader) throws(EventDecodingError) -> Device {
        let present = try r.u8()
        var fields: [String?] = []
        fields.reserveCapacity(8)
        for i in 0..<8 { fields.append(present & (1 << UInt8(i)) != 0 ? try r.string() : nil) }
        return Device(fields: fields)
    }

    static func decodeWorkout(_ r: inout ByteReader) throws(EventDecodingError) -> WorkoutBody {
        let at = r.absolutePosition
        guard let activity = WorkoutActivityType(rawValue: UInt(try r.varint())) else {
            throw EventDecodingError.malformed(offset: at, reason: "unknown workout activity type")
        }
        let duration = try r.finite()
        let energy = try decodeQuantity(&r)
        let distance = try decodeQuantity(&r)
        var events: [WorkoutEvent] = []
        for _ in 0..<(try r.count(limit: r.remaining)) {
            let eAt = r.absolutePosition
            guard let kind = WorkoutEvent.Kind(rawValue: Int(try r.u8())) else { throw EventDecodingError.malformed(offset: eAt, reason: "unknown workout event type") }
            let date = try r.date()
            let d = try r.finite()
            let metadata = try decodeMetadata(&r)
            do { events.append(try WorkoutEvent(kind: kind, date: date, duration: d, metadata: metadata)) } catch {
                throw EventDecodingError.malformed(offset: eAt, reason: "workout event: \(error)")
            }
        }
        var statistics: [WorkoutStatistic] = []
        for _ in 0..<(try r.count(limit: r.remaining)) {
            let type = try r.string()
            let start = try r.date()
            let end = try r.date()
            statistics.append(WorkoutStatistic(type: TypeIdentifier(parsing: type), startDate: start, endDate: end,
                                               average: try optionalDouble(&r), minimum: try optionalDouble(&r),
                                               maximum: try optionalDouble(&r), sum: try optionalDouble(&r),
                                               unit: try optionalString(&r)))
        }
        var routes: [WorkoutRoute] = []
        for _ in 0..<(try r.count(limit: r.remaining)) {
            let sourceName = try optionalString(&r)
            let sourceVersion = try optionalString(&r)
            let creation = try r.optionalDate()
            let start = try r.optionalDate()
            let end = try r.optionalDate()
            let file = try optionalString(&r)
            let metadata = try decodeMetadata(&r)
            var locations: [RouteLocation] = []
            let n = try r.count(limit: r.remaining)
            locations.reserveCapacity(n)
            for _ in 0..<n {
                locations.append(RouteLocation(date: try r.date(), latitude: try r.finite(), longitude: try r.finite(),
                                               altitude: try optionalDouble(&r), horizontalAccuracy: try optionalDouble(&r),
                                               verticalAccuracy: try optionalDouble(&r), course: try optionalDouble(&r),
                                               speed: try optionalDouble(&r)))
            }
            routes.append(WorkoutRoute(sourceName: sourceName, sourceVersion: sourceVersion, creationDate: creation,
                                       startDate: start, endDate: end, fileReference: file, locations: locations,
                                       metadata: metadata))
        }
        return WorkoutBody(activity: activity, duration: duration, energy: energy, distance: distance, events: events,
                           statistics: statistics, routes: routes)
    }

    // MARK: Decoding (replay's fast path)

    /// The UUID of the first sample of a `samplesSaved` payload, read without
    /// decoding (nil when the bytes are not shaped like one). Only a hint for
    /// prefetching: the real decoder checks everything.
    static func firstUUID(_ payload: UnsafeRawBufferPointer) -> UUID? {
        var r = ByteReader(payload)
        guard (try? r.varint()) != nil, (try? r.varint()) != nil, (try? r.varint()) != nil, (try? r.u8()) != nil else { return nil }
        return try? r.uuid()
    }

    /// What projections need of a sample, read without decoding the rest.
    struct Header {
        var kind: Kind
        var uuid: UUID
        var typeCode: UInt16
        var start: Double
        var end: Double
        var replaces: UUID?
        /// Index of the sync identifier in the facts' string list, or −1 (kept out of
        /// the header so that headers copy as plain bytes).
        var syncIndex: Int32
        var syncVersion: Int64
        /// Index of the enclosing correlation's header in the flattened list, for members.
        var memberOf: Int?
        /// A quantity sample's value in its type's canonical unit (NaN for other kinds):
        /// what the statistics projection keeps.
        var value: Double = .nan
        /// Whether the metadata says `HKWasUserEntered` (a manual entry ranks first by default).
        var userEntered: Bool = false
    }

    /// Whether a metadata value of `HKWasUserEntered` says yes (a true boolean, a
    /// non-zero number, or the strings `1`/`true` an export writes).
    static func saysYes(_ v: MetadataValue) -> Bool {
        switch v {
        case .bool(let b): b
        case .integer(let i): i != 0
        case .number(let d): d != 0
        case .string(let s): s == "1" || s.lowercased() == "true"
        case .date, .quantity: false
        }
    }

    /// The value of a quantity in `type`'s canonical unit (NaN when the unit does not convert).
    /// `canonicalValue(_:unit:typeCode:)` of a quantity whose unit is parsed already
    /// (the store's path: the same number, without parsing the spelling again).
    static func canonicalValue(_ quantity: Quantity, typeCode: UInt16) -> Double {
        guard case .quantity(let type)? = ObjectType(code: typeCode) else { return .nan }
        if quantity.unit.spelling == type.canonicalUnit.spelling { return quantity.value }
        return (try? quantity.doubleValue(for: type.canonicalUnit)) ?? .nan
    }

    static func canonicalValue(_ value: Double, unit: String, typeCode: UInt16) -> Double {
        var unit = unit
        return unit.withUTF8 { CanonicalConversions.shared.value(value, unit: UnsafeRawBufferPointer($0), typeCode: typeCode) ?? .nan }
    }

    /// Reads a quantity's value and unit and, when present, finds `HKWasUserEntered`
    /// in its metadata, into the header (the reader stands after the sync fields).
    static func readStatisticsFacts(_ r: inout ByteReader, flags: Flags, into h: inout Header) throws(EventDecodingError) {
        let value = try r.finite()
        // The unit as `string()` reads it (a remembered spelling's bytes are UTF-8), then
        // `canonicalValue(value, unit:, typeCode:)`, without making the string.
        let (unit, at) = try r.stringBytes()
        guard let canonical = CanonicalConversions.shared.value(value, unit: unit, typeCode: h.typeCode) else {
            throw .malformed(offset: at, reason: "string is not UTF-8")
        }
        h.value = canonical
        guard flags.contains(.metadata) else { return }
        let n = try r.count(limit: r.remaining)
        var flagSeen = false
        for _ in 0..<n {
            // The first value under the key, as `Metadata`'s subscript and `EventFacts` read it.
            let isFlag = try r.stringEquals(Metadata.WellKnownKey.wasUserEntered) && !flagSeen
            if isFlag { flagSeen = true }
            switch try r.u8() {
            case 1: let s = try r.string(); if isFlag { h.userEntered = saysYes(.string(s)) }
            case 2: let i = try r.zigzag(); if isFlag { h.userEntered = i != 0 }
            case 3: let d = try r.f64(); if isFlag { h.userEntered = d != 0 }
            case 4: let b = try r.u8(); if isFlag { h.userEntered = b == 1 }
            case 5: _ = try r.f64()
            case 6: _ = try r.f64(); try r.skipString()
            default: throw r.malformed("unknown metadata value tag")
            }
        }
    }

    /// Appends the headers of a top-level sample (and of its members, for a
    /// correlation) to `headers`, in flattened order; sync identifiers go to `strings`.
    /// Checks the frame exactly as `decode` does (`readFrame`); replay validates the
    /// rest by decoding each save in full on its reader thread.
    static func headers(_ r: inout ByteReader, into headers: inout [Header], strings: inout [String],
                        stringBase: Int = 0, memberOf: Int? = nil,
                        version: UInt16 = EventKind.samplesSaved.currentVersion) throws(EventDecodingError) {
        let (kind, uuid, typeCode, start, end, flags) = try readFrame(&r, version: version, asMember: memberOf != nil)
        var h = Header(kind: kind, uuid: uuid, typeCode: typeCode, start: start.timeIntervalSinceReferenceDate,
                       end: end.timeIntervalSinceReferenceDate, replaces: nil, syncIndex: -1, syncVersion: 0, memberOf: memberOf)
        if flags.contains(.replaces) { h.replaces = try r.uuid() }
        if flags.contains(.sync) {
            h.syncIndex = Int32(strings.count - stringBase)
            strings.append(try r.string())
            h.syncVersion = try r.zigzag()
        }
        if kind == .quantity { try readStatisticsFacts(&r, flags: flags, into: &h) }
        let index = headers.count
        headers.append(h)
        if kind == .correlation {
            let n = try r.count(limit: r.remaining)
            for _ in 0..<n {
                var sub = try r.lengthPrefixed()
                try Self.headers(&sub, into: &headers, strings: &strings, stringBase: stringBase, memberOf: index, version: version)
            }
        }
    }
}
