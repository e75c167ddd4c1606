import Foundation
import HealthModel
import LedgerCore

extension ExportMapper {
    // MARK: Record

    /// What a Record's start tag says, read before its children. Plain values: the
    /// type, unit and device are ids into the mapper's tables (`typeInfos`,
    /// `unitInfos`, `deviceInfos`), so a head is copied and dropped without reference
    /// counting.
    struct RecordHead {
        /// `typeInfos[typeId]`, and its model type (nil: not one the model knows).
        var typeId: Int
        var type: ObjectType?
        var source: Int
        var sourceVersion: Int
        /// `unitInfos[unitId]`: the unit attribute as written and parsed (−1: none).
        var unitId: Int
        var valueText: String?
        var value: Double?
        var start: (Date, Int)
        var end: (Date, Int)
        var creation: (Date, Int)?
        /// `deviceInfos[deviceId]` (−1: none).
        var deviceId: Int
        var exact: UInt64
        var logical: UInt64
    }

    /// The `type` attribute of `head` as written.
    func typeName(_ head: RecordHead) -> String { typeInfos[head.typeId].name }
    /// The unit attribute as written (nil: none).
    func unitText(_ head: RecordHead) -> String? { head.unitId >= 0 ? unitInfos[head.unitId].text : nil }
    /// The unit parsed: nil when there is no unit attribute, .some(nil) when it does not parse.
    func unit(_ head: RecordHead) -> HealthUnit?? { head.unitId >= 0 ? .some(unitInfos[head.unitId].unit) : nil }
    /// The device parsed (nil: none).
    func device(_ head: RecordHead) -> Device? { head.deviceId >= 0 ? deviceInfos[head.deviceId].device : nil }

    /// The current Record (or Correlation) start tag's attributes. `exact`: compute the
    /// exact fingerprint (a correlation's member, or a Record of a type one admits: the
    /// only ones it is compared for).
    func recordHead(exact needsExact: Bool = false) throws(ImportError) -> RecordHead {
        var typeId = -1
        var sourceId: Int?
        var sourceVersion = -1
        var unitId = -1
        var valueText: String?
        var value: Double?
        var start: (Date, Int)?, end: (Date, Int)?, creation: (Date, Int)?
        var deviceId = -1
        var exact: UInt64 = 0
        var logical: UInt64 = 0x5EED
        for i in 0..<scanner.attributeCount {
            let name = scanner.attributeName(i)
            try scanner.withValue(i) { (bytes) throws(ImportError) in
                // A value in the logical fingerprint is hashed once, for it and its intern
                // table; others are interned by the table's own (cheaper) hash.
                switch ExportName(rawValue: name) {
                case .type?:
                    let h = Self.hash(bytes, seed: 0)
                    typeId = types.value(bytes, hash: h) { newType($0) }
                    logical = Self.mix(logical ^ h &* 3)
                case .sourceName?:
                    let h = Self.hash(bytes, seed: 0)
                    sourceId = sourceNames.value(bytes, hash: h) { sourceFor($0) }
                    logical = Self.mix(logical ^ h &* 5)
                case .sourceVersion?:
                    sourceVersion = versionIds.value(bytes) { newVersion($0) }
                case .unit?:
                    let h = Self.hash(bytes, seed: 0)
                    unitId = units.value(bytes, hash: h) { newUnit($0) }
                    logical = Self.mix(logical ^ h &* 7)
                case .value?:
                    let h = Self.hash(bytes, seed: 0)
                    value = ExportValues.number(bytes)
                    if value == nil || scanner.attributeIndex(ExportName.unit.id) == nil {
                        valueText = categoryValues.value(bytes, hash: h) { $0 }
                    }
                    logical = Self.mix(logical ^ h &* 11)
                case .creationDate?:
                    creation = try date(i, "creationDate")
                case .startDate?:
                    start = try date(i, "startDate")
                    logical = Self.mix(logical ^ Self.hash(bytes, seed: 0) &* 13)
                case .endDate?:
                    end = try date(i, "endDate")
                    logical = Self.mix(logical ^ Self.hash(bytes, seed: 0) &* 17)
                case .device?:
                    deviceId = devices.value(bytes) { newDevice($0) }
                default:
                    unknownAttributes["\(scanner.name(scanner.element))@\(scanner.name(name))", default: 0] += 1
                }
            }
        }
        let type = typeId >= 0 ? typeInfos[typeId].type : nil
        if needsExact || Self.mayBeMember(type) {
            // Over every attribute, in any order: equal for exact repeats.
            for i in 0..<scanner.attributeCount {
                let name = scanner.attributeName(i)
                scanner.withValue(i) { bytes in exact &+= Self.mix(Self.hash(bytes, seed: 0) ^ UInt64(name) &* 0x9E37_79B9_7F4A_7C15) }
            }
        }
        guard typeId >= 0 else { throw invalid("a <\(scanner.name(scanner.element))> without a type") }
        guard let start else { throw invalid("a <\(scanner.name(scanner.element))> without a startDate") }
        return RecordHead(typeId: typeId, type: type, source: sourceId ?? sourceFor(""), sourceVersion: sourceVersion,
                          unitId: unitId, valueText: valueText, value: value, start: start,
                          end: end ?? start, creation: creation, deviceId: deviceId, exact: exact, logical: logical)
    }

    func metadataEntry() throws(ImportError) -> MetadataEntry {
        let key = text(.key) ?? ""
        let value = text(.value) ?? ""
        return MetadataEntry(key: key, value: ExportValues.metadataValue(value))
    }

    /// A Record element (the current start tag) through its end, built through the
    /// model; `member`: inside a Correlation (its identity is then in the member domain).
    func record(member: Bool) throws(ImportError) -> MappedRecord {
        guard let mapped = try readRecord(member: member, direct: false) else {
            preconditionFailure("a Record read without the direct encoding is mapped")
        }
        return mapped
    }

    /// A Record element through its end: a top-level plain quantity or category sample
    /// (no metadata, no beats, nothing kept) that the model's checks accept is left in
    /// `direct`, as parts for the direct encoding, and nil returned (when `direct`
    /// and `directEncoding`); any other Record is mapped through the model.
    func readRecord(member: Bool, direct: Bool) throws(ImportError) -> MappedRecord? {
        let mark = pendingChildren.count
        let formStart = identity.lastTagStart
        let head = try recordHead(exact: member)
        var metadata = Metadata()
        var exact = head.exact
        var beats: [InstantaneousBeat] = []
        var beatLists = 0
        let depth = scanner.depth
        loop: while true {
            switch try nextToken() {
            case .endElement where scanner.depth == depth - 1:
                break loop
            case .endElement:
                continue
            case .endOfDocument:
                throw invalid("the document ends inside a Record")
            case .startElement:
                switch ExportName(rawValue: scanner.element) {
                case .MetadataEntry? where scanner.depth == depth + 1:
                    let entry = try metadataEntry()
                    exact = Self.mix(exact ^ hashString(entry.key, seed: 7) ^ hashString(entry.value.description, seed: 8))
                    metadata.append(entry.key, entry.value)
                case .HeartRateVariabilityMetadataList? where scanner.depth == depth + 1:
                    beatLists += 1
                case .InstantaneousBeatsPerMinute? where scanner.depth == depth + 2:
                    guard let bpmIndex = scanner.attributeIndex(ExportName.bpm.id) else { throw invalid("a beat without bpm") }
                    let bpm = try number(bpmIndex, "bpm")
                    do { beats.append(try InstantaneousBeat(bpm: bpm, time: text(.time) ?? "")) } catch {
                        throw invalid("beat: \(error)")
                    }
                default:
                    try keepChild(below: depth)
                }
            }
        }
        var typeCode: UInt16?
        switch head.type {
        case .quantity(let q)?: typeCode = ObjectType.quantity(q).code
        case .category(let c)?: typeCode = ObjectType.category(c).code
        default: typeCode = nil
        }
        let sync = metadata.isEmpty ? nil : ((try? metadata.syncIdentity()) ?? nil)
        let digest = identity.digest(member ? .member : .record, from: formStart)
        if direct, !member, directEncoding, metadata.isEmpty, beats.isEmpty, pendingChildren.count == mark, let typeCode,
           head.typeId != scratchId, head.unitId != scratchId, head.deviceId != scratchId,
           var parts = directParts(head, uuid: RecordIdentity.uuid(fromDigest: digest)) {
            // Made with the UUID of a first occurrence while the occurrence table's slot
            // loaded; a repeat (rare) takes its own.
            let uuid = identity.occurrence(of: digest)
            if identity.lastWasRepeat { parts = parts.with(uuid: uuid) }
            self.direct = DirectRecord(parts: parts, typeCode: typeCode, source: head.source, typeId: head.typeId,
                                       logicalFingerprint: head.logical)
            directRecords += 1
            return nil
        }
        let uuid = identity.occurrence(of: digest)
        let (sample, reason) = try makeSample(head, metadata: metadata, beats: beats, uuid: uuid)
        try attachPendingChildren(from: mark, to: "Record", [MetadataEntry(key: "uuid", value: .string(uuid.uuidString))])
        return MappedRecord(sample: sample, typeCode: typeCode, syncIdentity: sync, source: head.source,
                            typeName: typeName(head), typeId: head.typeId, rawReason: reason,
                            exactFingerprint: exact, logicalFingerprint: head.logical, metadataCount: metadata.count,
                            beatLists: beatLists, beats: beats.count)
    }

    /// The Record as parts for the direct encoding (`SampleParts`: no `Sample` built),
    /// when it is a quantity or category sample with no metadata, no beats and nothing
    /// kept, that the model's checks accept; nil sends it through `makeSample` (which
    /// builds it, or keeps it raw with the reason the model gives). A correlation's
    /// possible member types are never direct: the importer holds those back as samples.
    func directParts(_ head: RecordHead, uuid: UUID) -> SampleParts? {
        let offsets = WrittenOffsets(start: head.start.1, end: head.end.1, creation: head.creation?.1)
        let version = head.sourceVersion >= 0 ? versionParts[head.sourceVersion] : -1
        let device = head.deviceId >= 0 ? deviceParts[head.deviceId] : -1
        switch head.type {
        case .quantity(let type)?:
            guard !Self.isMemberType[Int(ObjectType.quantity(type).code)], let value = head.value, head.unitId >= 0 else {
                return nil
            }
            let key = Int(ObjectType.quantity(type).code) << 32 | head.unitId
            let prepared: Int32
            // A unit is prepared only once it parsed, so a prepared one needs no look at
            // `unitInfos` (a class instance: a retain and a release per record).
            if let last = lastPreparedUnit, last.key == key {
                prepared = last.unit  // records come in runs of one type and unit
            } else if let p = preparedUnits[key] {
                prepared = p
            } else {
                guard let unit = unitInfos[head.unitId].unit else { return nil }
                prepared = partsTable.add(PreparedUnit(type: type, unit: unit))
                preparedUnits[key] = prepared
            }
            lastPreparedUnit = (key, prepared)
            return try? SampleParts(quantity: value, unit: prepared, in: partsTable, uuid: uuid, start: head.start.0,
                                    end: head.end.0, creation: head.creation?.0, offsets: offsets, device: device,
                                    sourceVersion: version)
        case .category(let type)?:
            guard let text = head.valueText ?? head.value.map({ Quantity.format($0) }) else { return nil }
            let code = ObjectType.category(type).code
            let value: Int
            if let cached = categoryCache[text]?[code] {
                value = cached
            } else {
                guard let v = try? type.value(named: text) else { return nil }
                categoryCache[text, default: [:]][code] = v
                value = v
            }
            return try? SampleParts(category: type, value: value, uuid: uuid, start: head.start.0, end: head.end.0,
                                    creation: head.creation?.0, offsets: offsets, device: device, sourceVersion: version)
        default:
            return nil
        }
    }

    /// The common part of a Record kept raw: everything as written, metadata included;
    /// an interval the model refuses (end before start) is kept at its start, the end
    /// staying in the reason. Metadata HealthKit refuses (a sync identifier without a
    /// version, a number that is not finite) cannot be kept: the import is refused,
    /// naming the record, rather than dropping it.
    func rawCommon(_ head: RecordHead, metadata: Metadata, uuid: UUID, source: Source) throws(ImportError) -> SampleCommon {
        let end = head.end.0 >= head.start.0 ? head.end : head.start
        do {
            return try SampleCommon(uuid: uuid, startDate: head.start.0, endDate: end.0, metadata: metadata,
                                    device: device(head), source: source, creationDate: head.creation?.0,
                                    writtenOffsets: WrittenOffsets(start: head.start.1, end: end.1, creation: head.creation?.1))
        } catch {
            throw invalid("a Record of type '\(typeName(head))' that cannot be kept even raw: \(error)")
        }
    }

    func makeSample(_ head: RecordHead, metadata: Metadata, beats: [InstantaneousBeat], uuid: UUID) throws(ImportError)
        -> (Sample, String?) {
        let source = sourceValue(head.source, head.sourceVersion)
        let offsets = WrittenOffsets(start: head.start.1, end: head.end.1, creation: head.creation?.1)
        func raw(_ reason: String) throws(ImportError) -> (Sample, String?) {
            let common = try rawCommon(head, metadata: metadata, uuid: uuid, source: source)
            return (.unrecognized(UnrecognizedSample(typeIdentifier: typeName(head),
                                                     value: head.valueText ?? head.value.map { Quantity.format($0) }, unit: unitText(head),
                                                     reason: reason, common: common)), reason)
        }
        let common: SampleCommon
        do {
            common = try SampleCommon(uuid: uuid, startDate: head.start.0, endDate: head.end.0, metadata: metadata,
                                      device: device(head), source: source, creationDate: head.creation?.0,
                                      writtenOffsets: offsets)
        } catch {
            return try raw("\(error)")
        }
        switch head.type {
        case .quantity(let type)?:
            guard let value = head.value else { return try raw(head.valueText == nil ? "no value" : "value is not a number") }
            guard let unitText = unitText(head) else { return try raw("no unit") }
            guard let unit = unit(head) ?? nil else { return try raw("unit '\(unitText)' does not parse") }
            do {
                return (.quantity(try QuantitySample(type: type, quantity: try Quantity(value, unit), common: common, beats: beats)), nil)
            } catch {
                return try raw("\(error)")
            }
        case .category(let type)?:
            guard let text = head.valueText ?? head.value.map({ Quantity.format($0) }) else { return try raw("no value") }
            do {
                let code = ObjectType.category(type).code
                let value: Int
                if let cached = categoryCache[text]?[code] {
                    value = cached
                } else {
                    value = try type.value(named: text)
                    categoryCache[text, default: [:]][code] = value
                }
                return (.category(try CategorySample(type: type, value: value, common: common)), nil)
            } catch {
                return try raw("\(error)")
            }
        case nil:
            return try raw("unknown type")
        default:
            return try raw("a Record cannot hold a \(typeName(head))")
        }
    }
}
