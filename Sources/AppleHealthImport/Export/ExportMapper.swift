import Foundation
import HealthModel
import LedgerCore

/// One top-level element of an export, mapped to the health model.
enum ExportItem {
    case healthData(locale: String?)
    case exportDate(String)
    case me([MetadataEntry])
    case record(MappedRecord)
    case correlation(MappedCorrelation)
    case workout(MappedWorkout)
    case activitySummary(ActivitySummary)
    /// A top-level element this version has no model for (ClinicalRecord, Audiogram,
    /// VisionPrescription, …), kept whole as written.
    case kept(ExportElement)
}

/// A Record as a sample, with what the importer counts and links by.
struct MappedRecord {
    /// The sample (nil in the checking pass, which maps no Records to samples).
    var sample: Sample!
    /// The type code the record needs share permission for (a known quantity or category type).
    var typeCode: UInt16?
    /// HKMetadataKeySyncIdentifier and version, when both are present.
    var syncIdentity: (identifier: String, version: Int64)?
    /// Index into `ExportMapper.sources`.
    var source: Int
    /// The `type` attribute as written.
    var typeName: String
    /// Why the record was kept raw (`UnrecognizedSample`), else nil.
    var rawReason: String?
    /// Over all attributes (any order) and metadata: equal for exact repeats.
    var exactFingerprint: UInt64
    /// Over type, source, start, end, value and unit.
    var logicalFingerprint: UInt64
    var metadataCount: Int
    var beatLists: Int
    var beats: Int
}

struct MappedCorrelation {
    var sample: Sample
    var source: Int
    /// The exact fingerprints of the member Records (the top-level copies they repeat).
    var memberFingerprints: [UInt64]
    /// Member Records that could not be members (not a quantity type the correlation admits).
    var unlinked: [MappedRecord]
}

struct MappedWorkout {
    var sample: Sample
    var source: Int
    var rawReason: String?
    var events: Int
    var statistics: Int
    var routes: Int
    var routePoints: Int
}

/// Walks an export's XML and maps each top-level element to model values. The same
/// mapping runs in both of the importer's passes, so what was checked is what is
/// written; sample UUIDs come from `uuids` in document order, so they are the same
/// in both passes.
final class ExportMapper {
    let scanner: XMLScanner
    private let file: String
    private var uuids: UUIDSequence
    /// Reads a route file named by a `FileReference` (nil when the export has none).
    private let routeFile: (String) throws -> [RouteLocation]?

    /// Sources in order of first appearance (`sourceName` as written).
    private(set) var sources: [String] = []
    private var sourceIndex: [String: Int] = [:]
    /// Distinct attribute values, parsed once.
    private let types = InternTable<TypeInfo>()
    private let units = InternTable<UnitInfo>()

    struct UnitInfo {
        let text: String
        let unit: HealthUnit?
    }
    private let sourceNames = InternTable<Int>()
    private let strings = InternTable<String>()
    private let devices = InternTable<Device>()
    private let categoryValues = InternTable<String>()
    private let versionIds = InternTable<Int>()
    private var versions: [String] = []
    /// Sample sources by (source index, version index + 1): one value per pair.
    private var sourceValues: [Int: Source] = [:]
    /// Counts of elements with no model found inside a known element (a Record,
    /// Correlation, Workout, ActivitySummary, Me), by name: each is kept as written.
    private(set) var keptChildCounts: [String: Int] = [:]
    /// Children with no model, each as an `ExportElement` whose root names the
    /// sample (`Workout uuid=…`) or day (`ActivitySummary dateComponents=…`) it was
    /// in; the importer takes them after every item (`takeKeptChildren`).
    private var keptChildren: [ExportElement] = []
    /// Subtrees of children with no model read since their element began, waiting
    /// for that element's UUID (a path of element names, then the child's nodes).
    private var pendingChildren: [[ExportElement.Node]] = []
    /// Attributes this version does not read, by element and name.
    private(set) var unknownAttributes: [String: Int] = [:]
    /// Routes whose file was missing from the export.
    private(set) var missingRouteFiles: [String] = []
    /// The checking pass: Records are read, checked and fingerprinted, not made
    /// into samples (correlations and workouts, being few, are mapped in full).
    var checkOnly = false
    /// Category values by (type code, value text), resolved once.
    private var categoryCache: [String: [UInt16: Int]] = [:]

    struct TypeInfo {
        let name: String
        let type: ObjectType?
    }

    init(scanner: XMLScanner, file: String, uuids: UUIDSequence, routeFile: @escaping (String) throws -> [RouteLocation]?) {
        self.scanner = scanner
        self.file = file
        self.uuids = uuids
        self.routeFile = routeFile
    }

    // MARK: Walking

    /// The next top-level element under `<HealthData>`, or nil at the end.
    func next() throws(ImportError) -> ExportItem? {
        while true {
            let token: XMLScanner.Token
            do { token = try scanner.next() } catch { throw .malformedXML(file: file, error) }
            switch token {
            case .endOfDocument:
                return nil
            case .endElement:
                continue  // </HealthData>
            case .startElement:
                break
            }
            let element = scanner.element
            if scanner.depth == 1 {
                guard element == ExportName.HealthData.id else {
                    throw .notAnExport(path: file, reason: "the root element is <\(scanner.name(element))>, not <HealthData>")
                }
                return .healthData(locale: scanner.string(ExportName.locale.id))
            }
            guard scanner.depth == 2 else { throw invalid("unexpected nesting") }
            switch ExportName(rawValue: element) {
            case .ExportDate?:
                let value = scanner.string(ExportName.value.id) ?? ""
                let mark = pendingChildren.count
                try keepChildrenToEnd(below: scanner.depth)
                try attachPendingChildren(from: mark, to: "ExportDate", [])
                return .exportDate(value)
            case .Me?:
                let me = attributes()
                let mark = pendingChildren.count
                try keepChildrenToEnd(below: scanner.depth)
                try attachPendingChildren(from: mark, to: "Me", [])
                return .me(me)
            case .Record?:
                return .record(try record())
            case .Correlation?:
                return .correlation(try correlation())
            case .Workout?:
                return .workout(try workout())
            case .ActivitySummary?:
                return .activitySummary(try activitySummary())
            default:
                return .kept(try keptElement())
            }
        }
    }

    /// Most elements one kept element may hold (a ClinicalRecord or an Audiogram
    /// holds a few dozen); more is refused as not an export.
    static let keptNodeLimit = 100_000

    /// The current element and everything inside it, as written.
    private func keptElement() throws(ImportError) -> ExportElement {
        let depth = scanner.depth
        var nodes = [ExportElement.Node(depth: 0, name: scanner.name(scanner.element), attributes: attributes())]
        while true {
            switch try nextToken() {
            case .endElement where scanner.depth == depth - 1:
                do { return try ExportElement(nodes: nodes) } catch { throw invalid("\(error)") }
            case .endElement:
                continue
            case .endOfDocument:
                throw invalid("the document ends inside an element")
            case .startElement:
                guard nodes.count < Self.keptNodeLimit else {
                    throw invalid("<\(nodes[0].name)> holds more than \(Self.keptNodeLimit) elements")
                }
                nodes.append(ExportElement.Node(depth: scanner.depth - depth, name: scanner.name(scanner.element),
                                                attributes: attributes()))
            }
        }
    }

    /// The current tag's attributes, verbatim and in order.
    private func attributes() -> [MetadataEntry] {
        scanner.allAttributes().map { MetadataEntry(key: $0.0, value: .string($0.1)) }
    }

    /// The children kept since the last call, in document order.
    func takeKeptChildren() -> [ExportElement] {
        guard !keptChildren.isEmpty else { return [] }
        defer { keptChildren = [] }
        return keptChildren
    }

    /// Reads the current element (a child with no model) whole into `pendingChildren`,
    /// after the names of the elements between it and the element at `sampleDepth`
    /// (the WorkoutEvent a child of a WorkoutEvent was in), kept as nodes by name.
    private func keepChild(below sampleDepth: Int) throws(ImportError) {
        let depth = scanner.depth
        let path = (sampleDepth + 1 ..< depth).map { scanner.name(scanner.openElement(atDepth: $0)) }
        let base = path.count + 1
        var nodes = path.enumerated().map { ExportElement.Node(depth: $0.offset + 1, name: $0.element, attributes: []) }
        let name = scanner.name(scanner.element)
        keptChildCounts[name, default: 0] += 1
        nodes.append(ExportElement.Node(depth: base, name: name, attributes: attributes()))
        while true {
            switch try nextToken() {
            case .endElement where scanner.depth == depth - 1:
                pendingChildren.append(nodes)
                return
            case .endElement:
                continue
            case .endOfDocument:
                throw invalid("the document ends inside an element")
            case .startElement:
                guard nodes.count < Self.keptNodeLimit else { throw invalid("<\(name)> holds more than \(Self.keptNodeLimit) elements") }
                nodes.append(ExportElement.Node(depth: base + scanner.depth - depth, name: scanner.name(scanner.element),
                                                attributes: attributes()))
            }
        }
    }

    /// Reads to the end of the current element, keeping every child it has.
    private func keepChildrenToEnd(below sampleDepth: Int) throws(ImportError) {
        let depth = scanner.depth
        while true {
            switch try nextToken() {
            case .endElement where scanner.depth == depth - 1: return
            case .endElement: continue
            case .endOfDocument: throw invalid("the document ends inside an element")
            case .startElement: try keepChild(below: sampleDepth)
            }
        }
    }

    /// Moves the children pending since `mark` to `keptChildren`, each under a root
    /// node naming the element they were in.
    /// (`attributes` is evaluated only when there are any: this runs for every Record.)
    private func attachPendingChildren(from mark: Int, to element: String,
                                       _ attributes: @autoclosure () -> [MetadataEntry]) throws(ImportError) {
        guard pendingChildren.count > mark else { return }
        let root = ExportElement.Node(depth: 0, name: element, attributes: attributes())
        for subtree in pendingChildren[mark...] {
            do {
                keptChildren.append(try ExportElement(nodes: [root] + subtree))
            } catch {
                throw invalid("\(error)")
            }
        }
        pendingChildren.removeSubrange(mark...)
    }

    private func nextToken() throws(ImportError) -> XMLScanner.Token {
        do { return try scanner.next() } catch { throw .malformedXML(file: file, error) }
    }

    private func invalid(_ reason: String) -> ImportError {
        .invalidValue(file: file, scanner.errorAtCurrentTag(reason))
    }

    // MARK: Attribute values

    private func text(_ name: ExportName) -> String? {
        scanner.attributeIndex(name.id).map { String(decoding: scanner.value($0), as: UTF8.self) }
    }

    private func internedString(_ i: Int) -> String { strings.value(scanner.value(i)) { $0 } }

    private func date(_ i: Int, _ what: String) throws(ImportError) -> (Date, Int) {
        guard let d = ExportValues.date(scanner.value(i)) else {
            throw invalid("\(what) '\(String(decoding: scanner.value(i), as: UTF8.self))' is not a date")
        }
        return (Date(timeIntervalSinceReferenceDate: d.seconds), d.offset)
    }

    private func number(_ i: Int, _ what: String) throws(ImportError) -> Double {
        guard let v = ExportValues.number(scanner.value(i)) else {
            throw invalid("\(what) '\(String(decoding: scanner.value(i), as: UTF8.self))' is not a number")
        }
        return v
    }

    private func optionalNumber(_ name: ExportName) throws(ImportError) -> Double? {
        guard let i = scanner.attributeIndex(name.id) else { return nil }
        return try number(i, String(describing: name))
    }

    private func source(_ i: Int?) -> Int {
        guard let i else { return sourceFor("") }
        return sourceNames.value(scanner.value(i)) { sourceFor($0) }
    }

    private func version(_ i: Int) -> Int {
        versionIds.value(scanner.value(i)) { text in
            versions.append(text)
            return versions.count - 1
        }
    }

    /// The `Source` of a sample from source `index` at version `version` (−1: none).
    private func sourceValue(_ index: Int, _ version: Int) -> Source {
        let key = index << 24 | (version + 1)
        if let s = sourceValues[key] { return s }
        let s = Source(bundleIdentifier: AppleHealthImporter.bundleIdentifier(for: sources[index]), name: sources[index],
                       version: version >= 0 ? versions[version] : nil)
        sourceValues[key] = s
        return s
    }

    private func sourceFor(_ name: String) -> Int {
        if let k = sourceIndex[name] { return k }
        sources.append(name)
        sourceIndex[name] = sources.count - 1
        return sources.count - 1
    }

    @inline(__always)
    private static func mix(_ h: UInt64) -> UInt64 {
        var x = h
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        return x ^ (x >> 31)
    }

    @inline(__always)
    static func hash(_ v: UnsafeBufferPointer<UInt8>, seed: UInt64) -> UInt64 {
        var h = seed ^ UInt64(v.count) &* 0x9E37_79B9_7F4A_7C15
        guard let p = v.baseAddress else { return mix(h) }
        var i = 0
        while i + 8 <= v.count {
            h = mix(h ^ UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self))
            i += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while i < v.count {
            tail |= UInt64(p[i]) << shift
            shift += 8
            i += 1
        }
        return mix(h ^ tail ^ 0xFF)
    }

    private func hashString(_ s: String, seed: UInt64) -> UInt64 {
        var s = s
        return s.withUTF8 { Self.hash($0, seed: seed) }
    }

    // MARK: Record

    /// What a Record's start tag says, read before its children.
    private struct RecordHead {
        var type: TypeInfo
        var source: Int
        var sourceVersion: Int
        var unitText: String?
        var unit: HealthUnit??
        var valueText: String?
        var value: Double?
        var start: (Date, Int)
        var end: (Date, Int)
        var creation: (Date, Int)?
        var device: Device?
        var exact: UInt64
        var logical: UInt64
    }

    private func recordHead() throws(ImportError) -> RecordHead {
        var type: TypeInfo?
        var sourceId: Int?
        var sourceVersion = -1
        var unitText: String?
        var unit: HealthUnit??
        var valueText: String?
        var value: Double?
        var start: (Date, Int)?, end: (Date, Int)?, creation: (Date, Int)?
        var device: Device?
        var exact: UInt64 = 0
        var logical: UInt64 = 0x5EED
        for i in 0..<scanner.attributeCount {
            let name = scanner.attributeName(i)
            let bytes = scanner.value(i)
            // One hash per value: the fingerprints and the intern tables share it.
            let h = Self.hash(bytes, seed: 0)
            exact &+= Self.mix(h ^ UInt64(name) &* 0x9E37_79B9_7F4A_7C15)
            switch ExportName(rawValue: name) {
            case .type?:
                type = types.value(bytes, hash: h) { TypeInfo(name: $0, type: try? ObjectType(identifier: $0)) }
                logical = Self.mix(logical ^ h &* 3)
            case .sourceName?:
                sourceId = sourceNames.value(bytes, hash: h) { sourceFor($0) }
                logical = Self.mix(logical ^ h &* 5)
            case .sourceVersion?:
                sourceVersion = versionIds.value(bytes, hash: h) { text in
                    versions.append(text)
                    return versions.count - 1
                }
            case .unit?:
                let u = units.value(bytes, hash: h) { UnitInfo(text: $0, unit: try? HealthUnit($0)) }
                unitText = u.text
                unit = .some(u.unit)
                logical = Self.mix(logical ^ h &* 7)
            case .value?:
                value = ExportValues.number(bytes)
                if value == nil || scanner.attributeIndex(ExportName.unit.id) == nil {
                    valueText = categoryValues.value(bytes, hash: h) { $0 }
                }
                logical = Self.mix(logical ^ h &* 11)
            case .creationDate?:
                creation = try date(i, "creationDate")
            case .startDate?:
                start = try date(i, "startDate")
                logical = Self.mix(logical ^ h &* 13)
            case .endDate?:
                end = try date(i, "endDate")
                logical = Self.mix(logical ^ h &* 17)
            case .device?:
                device = devices.value(bytes, hash: h) { ExportValues.device($0) }
            default:
                unknownAttributes["\(scanner.name(scanner.element))@\(scanner.name(name))", default: 0] += 1
            }
        }
        guard let type else { throw invalid("a <\(scanner.name(scanner.element))> without a type") }
        guard let start else { throw invalid("a <\(scanner.name(scanner.element))> without a startDate") }
        return RecordHead(type: type, source: sourceId ?? sourceFor(""), sourceVersion: sourceVersion, unitText: unitText,
                          unit: unit, valueText: valueText, value: value, start: start,
                          end: end ?? start, creation: creation, device: device, exact: exact, logical: logical)
    }

    private func metadataEntry() throws(ImportError) -> MetadataEntry {
        let key = text(.key) ?? ""
        let value = text(.value) ?? ""
        return MetadataEntry(key: key, value: ExportValues.metadataValue(value))
    }

    /// A Record element (the current start tag) through its end.
    private func record() throws(ImportError) -> MappedRecord {
        let mark = pendingChildren.count
        let head = try recordHead()
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
        switch head.type.type {
        case .quantity(let q)?: typeCode = ObjectType.quantity(q).code
        case .category(let c)?: typeCode = ObjectType.category(c).code
        default: typeCode = nil
        }
        let sync = metadata.isEmpty ? nil : ((try? metadata.syncIdentity()) ?? nil)
        if checkOnly {
            let uuid = uuids.next()  // drawn in both passes, so the sequence stays the same
            try attachPendingChildren(from: mark, to: "Record", [MetadataEntry(key: "uuid", value: .string(uuid.uuidString))])
            return MappedRecord(sample: nil, typeCode: typeCode, syncIdentity: sync, source: head.source,
                                typeName: head.type.name, rawReason: nil, exactFingerprint: exact,
                                logicalFingerprint: head.logical, metadataCount: metadata.count, beatLists: beatLists,
                                beats: beats.count)
        }
        let (sample, reason) = makeSample(head, metadata: metadata, beats: beats)
        try attachPendingChildren(from: mark, to: "Record", [MetadataEntry(key: "uuid", value: .string(sample.uuid.uuidString))])
        return MappedRecord(sample: sample, typeCode: typeCode, syncIdentity: sync, source: head.source,
                            typeName: head.type.name, rawReason: reason,
                            exactFingerprint: exact, logicalFingerprint: head.logical, metadataCount: metadata.count,
                            beatLists: beatLists, beats: beats.count)
    }

    private func makeSample(_ head: RecordHead, metadata: Metadata, beats: [InstantaneousBeat]) -> (Sample, String?) {
        let uuid = uuids.next()
        let source = sourceValue(head.source, head.sourceVersion)
        let offsets = WrittenOffsets(start: head.start.1, end: head.end.1, creation: head.creation?.1)
        func raw(_ reason: String) -> (Sample, String?) {
            // Kept with its raw strings; an interval the model refuses (end before start)
            // is kept at its start, the end staying in the reason.
            let end = head.end.0 >= head.start.0 ? head.end : head.start
            let common = (try? SampleCommon(uuid: uuid, startDate: head.start.0, endDate: end.0, metadata: metadata,
                                            device: head.device, source: source, creationDate: head.creation?.0,
                                            writtenOffsets: WrittenOffsets(start: head.start.1, end: end.1, creation: head.creation?.1)))
                ?? (try! SampleCommon(uuid: uuid, startDate: head.start.0, endDate: head.start.0, source: source))
            return (.unrecognized(UnrecognizedSample(typeIdentifier: head.type.name,
                                                     value: head.valueText ?? head.value.map { Quantity.format($0) }, unit: head.unitText,
                                                     reason: reason, common: common)), reason)
        }
        let common: SampleCommon
        do {
            common = try SampleCommon(uuid: uuid, startDate: head.start.0, endDate: head.end.0, metadata: metadata,
                                      device: head.device, source: source, creationDate: head.creation?.0,
                                      writtenOffsets: offsets)
        } catch {
            return raw("\(error)")
        }
        switch head.type.type {
        case .quantity(let type)?:
            guard let value = head.value else { return raw(head.valueText == nil ? "no value" : "value is not a number") }
            guard let unitText = head.unitText else { return raw("no unit") }
            guard let unit = head.unit ?? nil else { return raw("unit '\(unitText)' does not parse") }
            do {
                return (.quantity(try QuantitySample(type: type, quantity: try Quantity(value, unit), common: common, beats: beats)), nil)
            } catch {
                return raw("\(error)")
            }
        case .category(let type)?:
            guard let text = head.valueText ?? head.value.map({ Quantity.format($0) }) else { return raw("no value") }
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
                return raw("\(error)")
            }
        case nil:
            return raw("unknown type")
        default:
            return raw("a Record cannot hold a \(head.type.name)")
        }
    }

    // MARK: Correlation

    private func correlation() throws(ImportError) -> MappedCorrelation {
        let mark = pendingChildren.count
        let head = try recordHead()
        var metadata = Metadata()
        var members: [MappedRecord] = []
        let depth = scanner.depth
        loop: while true {
            switch try nextToken() {
            case .endElement where scanner.depth == depth - 1: break loop
            case .endElement: continue
            case .endOfDocument: throw invalid("the document ends inside a Correlation")
            case .startElement:
                switch ExportName(rawValue: scanner.element) {
                case .MetadataEntry? where scanner.depth == depth + 1:
                    let entry = try metadataEntry()
                    metadata.append(entry.key, entry.value)
                case .Record? where scanner.depth == depth + 1:
                    let wasCheckOnly = checkOnly
                    checkOnly = false  // members are mapped in full: they decide what links
                    defer { checkOnly = wasCheckOnly }
                    members.append(try record())
                default:
                    try keepChild(below: depth)
                }
            }
        }
        let uuid = uuids.next()
        try attachPendingChildren(from: mark, to: "Correlation", [MetadataEntry(key: "uuid", value: .string(uuid.uuidString))])
        let source = sourceValue(head.source, head.sourceVersion)
        guard case .correlation(let type)? = head.type.type else {
            throw invalid("a Correlation of unknown type '\(head.type.name)'")
        }
        var linked: [QuantitySample] = []
        var fingerprints: [UInt64] = []
        var unlinked: [MappedRecord] = []
        for m in members {
            if case .quantity(let q) = m.sample, type.admits(q.type) {
                linked.append(q)
                fingerprints.append(m.exactFingerprint)
            } else {
                unlinked.append(m)
            }
        }
        do {
            let common = try SampleCommon(uuid: uuid, startDate: head.start.0, endDate: head.end.0, metadata: metadata,
                                          device: head.device, source: source, creationDate: head.creation?.0,
                                          writtenOffsets: WrittenOffsets(start: head.start.1, end: head.end.1, creation: head.creation?.1))
            let c = try Correlation(type: type, objects: linked, common: common)
            return MappedCorrelation(sample: .correlation(c), source: head.source, memberFingerprints: fingerprints,
                                     unlinked: unlinked)
        } catch {
            throw invalid("Correlation: \(error)")
        }
    }

    // MARK: Workout

    private func workout() throws(ImportError) -> MappedWorkout {
        let mark = pendingChildren.count
        var activityName = "", durationValue: Double?, durationUnit: String?
        var distance: Double?, distanceUnit: String?, energy: Double?, energyUnit: String?
        var source = 0, sourceVersion = -1, device: Device?
        var start: (Date, Int)?, end: (Date, Int)?, creation: (Date, Int)?
        for i in 0..<scanner.attributeCount {
            switch ExportName(rawValue: scanner.attributeName(i)) {
            case .workoutActivityType?: activityName = internedString(i)
            case .duration?: durationValue = try number(i, "duration")
            case .durationUnit?: durationUnit = internedString(i)
            case .totalDistance?: distance = try number(i, "totalDistance")
            case .totalDistanceUnit?: distanceUnit = internedString(i)
            case .totalEnergyBurned?: energy = try number(i, "totalEnergyBurned")
            case .totalEnergyBurnedUnit?: energyUnit = internedString(i)
            case .sourceName?: source = self.source(i)
            case .sourceVersion?: sourceVersion = version(i)
            case .device?: device = devices.value(scanner.value(i)) { ExportValues.device($0) }
            case .startDate?: start = try date(i, "startDate")
            case .endDate?: end = try date(i, "endDate")
            case .creationDate?: creation = try date(i, "creationDate")
            default: unknownAttributes["Workout@\(scanner.name(scanner.attributeName(i)))", default: 0] += 1
            }
        }
        if scanner.attributeIndex(ExportName.sourceName.id) == nil { source = sourceFor("") }
        guard let start else { throw invalid("a Workout without a startDate") }
        let end_ = end ?? start
        var metadata = Metadata()
        var events: [WorkoutEvent] = []
        var statistics: [WorkoutStatistic] = []
        var routes: [WorkoutRoute] = []
        var routePoints = 0
        let depth = scanner.depth
        loop: while true {
            switch try nextToken() {
            case .endElement where scanner.depth == depth - 1: break loop
            case .endElement: continue
            case .endOfDocument: throw invalid("the document ends inside a Workout")
            case .startElement:
                switch ExportName(rawValue: scanner.element) {
                case .MetadataEntry? where scanner.depth == depth + 1:
                    let entry = try metadataEntry()
                    metadata.append(entry.key, entry.value)
                case .WorkoutEvent? where scanner.depth == depth + 1:
                    events.append(try workoutEvent())
                case .WorkoutStatistics? where scanner.depth == depth + 1:
                    statistics.append(try workoutStatistic())
                case .WorkoutRoute? where scanner.depth == depth + 1:
                    let route = try workoutRoute()
                    routePoints += route.locations.count
                    routes.append(route)
                default:
                    try keepChild(below: depth)
                }
            }
        }
        let uuid = uuids.next()
        try attachPendingChildren(from: mark, to: "Workout", [MetadataEntry(key: "uuid", value: .string(uuid.uuidString))])
        let src = sourceValue(source, sourceVersion)
        let offsets = WrittenOffsets(start: start.1, end: end_.1, creation: creation?.1)
        do {
            let activity = try WorkoutActivityType(name: activityName)
            func seconds(_ v: Double?, _ unit: String?) throws -> Double? {
                guard let v else { return nil }
                return try Quantity(v, unit: unit ?? "min").doubleValue(for: .second)
            }
            let common = try SampleCommon(uuid: uuid, startDate: start.0, endDate: end_.0, metadata: metadata, device: device,
                                          source: src, creationDate: creation?.0, writtenOffsets: offsets, field: "workout")
            let w = try Workout(activityType: activity,
                                duration: try seconds(durationValue, durationUnit) ?? end_.0.timeIntervalSince(start.0),
                                totalEnergyBurned: try energy.map { try Quantity($0, unit: energyUnit ?? "kcal") },
                                totalDistance: try distance.map { try Quantity($0, unit: distanceUnit ?? "km") },
                                events: events, statistics: statistics, routes: routes, common: common)
            return MappedWorkout(sample: .workout(w), source: source, rawReason: nil, events: events.count,
                                 statistics: statistics.count, routes: routes.count, routePoints: routePoints)
        } catch {
            // Kept raw: the activity type and duration as written, the reason.
            let reason = "\(error)"
            let safeEnd = end_.0 >= start.0 ? end_ : start
            let common = (try? SampleCommon(uuid: uuid, startDate: start.0, endDate: safeEnd.0, metadata: metadata, device: device,
                                            source: src, creationDate: creation?.0,
                                            writtenOffsets: WrittenOffsets(start: start.1, end: safeEnd.1, creation: creation?.1)))
                ?? (try! SampleCommon(uuid: uuid, startDate: start.0, endDate: start.0, source: src))
            let raw = UnrecognizedSample(typeIdentifier: ObjectType.workoutIdentifier, value: activityName,
                                         unit: durationValue.map { "\(Quantity.format($0)) \(durationUnit ?? "")" },
                                         reason: reason, common: common)
            return MappedWorkout(sample: .unrecognized(raw), source: source, rawReason: reason, events: events.count,
                                 statistics: statistics.count, routes: routes.count, routePoints: routePoints)
        }
    }

    private func workoutEvent() throws(ImportError) -> WorkoutEvent {
        let kindName = text(.type) ?? ""
        guard let d = scanner.attributeIndex(ExportName.date.id) else { throw invalid("a WorkoutEvent without a date") }
        let date = try self.date(d, "date").0
        let duration = try optionalNumber(.duration)
        let unit = text(.durationUnit) ?? "min"
        var metadata = Metadata()
        let depth = scanner.depth
        while true {
            let token = try nextToken()
            if token == .endElement && scanner.depth == depth - 1 { break }
            if token == .startElement {
                if scanner.element == ExportName.MetadataEntry.id {
                    let entry = try metadataEntry()
                    metadata.append(entry.key, entry.value)
                } else {
                    try keepChild(below: depth - 1)  // under the Workout
                }
            }
        }
        do {
            let seconds = try duration.map { try Quantity($0, unit: unit).doubleValue(for: .second) } ?? 0
            return try WorkoutEvent(kind: try WorkoutEvent.Kind(name: kindName), date: date, duration: seconds, metadata: metadata)
        } catch {
            throw invalid("WorkoutEvent: \(error)")
        }
    }

    private func workoutStatistic() throws(ImportError) -> WorkoutStatistic {
        let type = TypeIdentifier(parsing: text(.type) ?? "")
        let start = try scanner.attributeIndex(ExportName.startDate.id).map { i throws(ImportError) in try date(i, "startDate").0 }
        let end = try scanner.attributeIndex(ExportName.endDate.id).map { i throws(ImportError) in try date(i, "endDate").0 }
        let statistic = WorkoutStatistic(type: type, startDate: start ?? .distantPast, endDate: end ?? start ?? .distantPast,
                                         average: try optionalNumber(.average), minimum: try optionalNumber(.minimum),
                                         maximum: try optionalNumber(.maximum), sum: try optionalNumber(.sum), unit: text(.unit))
        try keepChildrenToEnd(below: scanner.depth - 1)  // under the Workout
        return statistic
    }

    private func workoutRoute() throws(ImportError) -> WorkoutRoute {
        let sourceName = text(.sourceName), sourceVersion = text(.sourceVersion)
        let creation = try scanner.attributeIndex(ExportName.creationDate.id).map { i throws(ImportError) in try date(i, "creationDate").0 }
        let start = try scanner.attributeIndex(ExportName.startDate.id).map { i throws(ImportError) in try date(i, "startDate").0 }
        let end = try scanner.attributeIndex(ExportName.endDate.id).map { i throws(ImportError) in try date(i, "endDate").0 }
        var metadata = Metadata()
        var file: String?
        var locations: [RouteLocation] = []
        let depth = scanner.depth
        while true {
            let token = try nextToken()
            if token == .endElement && scanner.depth == depth - 1 { break }
            guard token == .startElement else { continue }
            switch ExportName(rawValue: scanner.element) {
            case .MetadataEntry?:
                let entry = try metadataEntry()
                metadata.append(entry.key, entry.value)
            case .FileReference?:
                file = text(.path)
            case .Location?:
                guard let d = scanner.attributeIndex(ExportName.date.id),
                      let lat = try optionalNumber(.latitude), let lon = try optionalNumber(.longitude) else {
                    throw invalid("a Location without date, latitude or longitude")
                }
                locations.append(RouteLocation(date: try date(d, "date").0, latitude: lat, longitude: lon,
                                               altitude: try optionalNumber(.altitude),
                                               horizontalAccuracy: try optionalNumber(.horizontalAccuracy),
                                               verticalAccuracy: try optionalNumber(.verticalAccuracy),
                                               course: try optionalNumber(.course), speed: try optionalNumber(.speed)))
            default:
                try keepChild(below: depth - 1)  // under the Workout
            }
        }
        if let file, locations.isEmpty {
            do {
                if let points = try routeFile(file) { locations = points } else { missingRouteFiles.append(file) }
            } catch let e as ImportError {
                throw e
            } catch {
                throw invalid("route \(file): \(error)")
            }
        }
        return WorkoutRoute(sourceName: sourceName, sourceVersion: sourceVersion, creationDate: creation, startDate: start,
                            endDate: end, fileReference: file, locations: locations, metadata: metadata)
    }

    // MARK: ActivitySummary

    private func activitySummary() throws(ImportError) -> ActivitySummary {
        let mark = pendingChildren.count
        guard let dayText = text(.dateComponents) else { throw invalid("an ActivitySummary without dateComponents") }
        let day: DateOfBirth
        do { day = try DateOfBirth(parsing: dayText) } catch { throw invalid("dateComponents '\(dayText)' is not a date") }
        var numbers = [Double?](repeating: nil, count: ActivitySummary.numberNames.count)
        var unit: String?
        var other: [MetadataEntry] = []
        for i in 0..<scanner.attributeCount {
            let name = scanner.name(scanner.attributeName(i))
            if let k = ActivitySummary.numberNames.firstIndex(of: name) {
                numbers[k] = try number(i, name)
            } else if name == "activeEnergyBurnedUnit" {
                unit = String(decoding: scanner.value(i), as: UTF8.self)
            } else if name != "dateComponents" {
                other.append(MetadataEntry(key: name, value: .string(String(decoding: scanner.value(i), as: UTF8.self))))
            }
        }
        try keepChildrenToEnd(below: scanner.depth)
        try attachPendingChildren(from: mark, to: "ActivitySummary", [MetadataEntry(key: "dateComponents", value: .string(dayText))])
        do {
            return try ActivitySummary(day: day, numbers: numbers, activeEnergyBurnedUnit: unit, otherAttributes: other)
        } catch {
            throw invalid("ActivitySummary: \(error)")
        }
    }
}

/// Sample UUIDs for an import: deterministic (the same export and import number
/// give the same UUIDs, in document order) and distinct within the import. Version 8
/// (custom) UUIDs: 64 bits from the import's seed, then 62 bits of a bijective mix of
/// the counter.
struct UUIDSequence {
    private let high: UInt64
    private let low: UInt64
    private var counter: UInt64 = 0

    init(seed: [UInt8]) {
        precondition(seed.count >= 16)
        var h: UInt64 = 0, l: UInt64 = 0
        for i in 0..<8 { h = h << 8 | UInt64(seed[i]) }
        for i in 8..<16 { l = l << 8 | UInt64(seed[i]) }
        high = (h & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_8000  // version 8
        low = l
    }

    mutating func next() -> UUID {
        counter += 1
        // A bijection on 62 bits: xor with the seed, multiply by an odd constant, xorshift.
        let mask: UInt64 = (1 << 62) - 1
        var x = (counter ^ low) & mask
        x = (x &* 0x2545_F491_4F6C_DD1D) & mask
        x ^= x >> 31
        x = (x &* 0x9E37_79B9_7F4A_7C15) & mask
        x = (x &* 0x2545_F491_4F6C_DD1D) & mask
        let l = x | 0x8000_0000_0000_0000  // variant 10
        let hb = high.bigEndian, lb = l.bigEndian
        return withUnsafeBytes(of: (hb, lb)) { raw in UUID(uuid: raw.loadUnaligned(as: uuid_t.self)) }
    }
}
