import Foundation
import HealthModel
import LedgerCore


/// Walks an export's XML and maps each top-level element to model values, or, for a
/// plain quantity or category Record, to checked parts for the direct encoding. Sample
/// UUIDs come from each element's content (`RecordIdentity`), so they are the same in
/// every export holding the same record.
///
/// A mapper is used by one thread (the pass's), and never re-entrantly: the state each
/// record touches is marked `@exclusivity(unchecked)`, sparing the dynamic exclusivity
/// check on every access (a few per record, a million records), as the scanner's and
/// the intern tables' state behind their pointers is spared it.
final class ExportMapper {
    let scanner: XMLScanner
    let file: String
    /// The content identity of the current top-level element and the export's
    /// occurrence counts. A `let`: a stored class reference that cannot change is not
    /// retained around each use (two uses per record).
    let identity: RecordIdentity
    /// Start tags are added to `identity` while a Record, Correlation or Workout is read.
    @exclusivity(unchecked) var identifying = false
    /// Encode plain quantity and category Records straight from their parts
    /// (`directParts`) instead of building a `Sample`: the same bytes, less work. Off
    /// only in tests that compare the two ways.
    @exclusivity(unchecked) var directEncoding = true
    /// The last Record the direct encoding took (`ExportItem.directRecord`).
    @exclusivity(unchecked) var direct: DirectRecord?
    /// `direct`'s type code, source, type intern id and logical fingerprint.
    var directFacts: (typeCode: UInt16, source: Int, typeId: Int, logical: UInt64) {
        let d = direct.unsafelyUnwrapped
        return (d.typeCode, d.source, d.typeId, d.logicalFingerprint)
    }

    /// Appends `direct`'s sample to `samples`.
    func appendDirect(to samples: inout EncodedSamples) {
        samples.append(direct.unsafelyUnwrapped.parts, from: partsTable)
    }
    /// The day of the last date parsed (`ExportValues.DayCache`).
    @exclusivity(unchecked) var dayCache = ExportValues.DayCache()
    /// Records the direct encoding took so far.
    @exclusivity(unchecked) var directRecords = 0
    /// Reads a route file named by a `FileReference` (nil when the export has none).
    let routeFile: (String) throws -> [RouteLocation]?

    /// Sources in order of first appearance (`sourceName` as written).
    private(set) var sources: [String] = []
    var sourceIndex: [String: Int] = [:]
    /// Distinct attribute values, parsed once.
    let types: InternTable<Int>
    let units: InternTable<Int>

    /// A unit attribute's value, parsed once (a class: a record's lookup of it is one
    /// retain, not one per field).
    final class UnitInfo {
        let text: String
        let unit: HealthUnit?
        /// Dense, in order of first appearance (keys the prepared units per type).
        let id: Int
        init(text: String, unit: HealthUnit?, id: Int) {
            self.text = text
            self.unit = unit
            self.id = id
        }
    }
    /// The interned type, unit and device values, by id (what `types`, `units` and
    /// `devices` give).
    private(set) var typeInfos: [TypeInfo] = []
    private(set) var unitInfos: [UnitInfo] = []
    private(set) var deviceInfos: [DeviceInfo] = []
    /// `deviceInfos[i].part`, beside it as plain numbers (read per record without
    /// reference counting).
    @exclusivity(unchecked) private(set) var deviceParts: [Int32] = []
    /// The units, devices and versions the direct encoding's parts refer to.
    let partsTable = SamplePartsTable()
    /// Per (type code, unit id): the unit prepared for the direct encoding (its index
    /// in `partsTable`).
    @exclusivity(unchecked) var preparedUnits: [Int: Int32] = [:]
    /// The last of them used, with its key.
    @exclusivity(unchecked) var lastPreparedUnit: (key: Int, unit: Int32)?

    /// A device attribute's value, parsed once (and encoded, `partsTable`).
    final class DeviceInfo {
        let device: Device
        /// Its index in `partsTable`.
        let part: Int32
        init(device: Device, part: Int32) {
            self.device = device
            self.part = part
        }
    }
    let sourceNames = InternTable<Int>()
    let strings = InternTable<String>()
    let devices: InternTable<Int>
    let categoryValues = InternTable<String>()
    let versionIds = InternTable<Int>()
    var versions: [String] = []
    /// `versions`' indices in `partsTable` (the direct encoding copies them).
    @exclusivity(unchecked) var versionParts: [Int32] = []
    /// Sample sources by (source index, version index + 1): one value per pair.
    var sourceValues: [Int: Source] = [:]
    /// Counts of elements with no model found inside a known element (a Record,
    /// Correlation, Workout, ActivitySummary, Me), by name: each is kept as written.
    private(set) var keptChildCounts: [String: Int] = [:]
    /// Children with no model, each as an `ExportElement` whose root names the
    /// sample (`Workout uuid=…`) or day (`ActivitySummary dateComponents=…`) it was
    /// in; the importer takes them after every item (`takeKeptChildren`).
    @exclusivity(unchecked) var keptChildren: [ExportElement] = []
    /// Subtrees of children with no model read since their element began, waiting
    /// for that element's UUID (a path of element names, then the child's nodes).
    @exclusivity(unchecked) var pendingChildren: [[ExportElement.Node]] = []
    /// Attributes this version does not read, by element and name.
    var unknownAttributes: [String: Int] = [:]
    /// Routes whose file was missing from the export.
    var missingRouteFiles: [String] = []
    /// Category values by (type code, value text), resolved once.
    @exclusivity(unchecked) var categoryCache: [String: [UInt16: Int]] = [:]

    final class TypeInfo {
        let name: String
        let type: ObjectType?
        /// Dense, in order of first appearance (its index in `typeInfos`).
        let id: Int
        init(name: String, type: ObjectType?, id: Int) {
            self.name = name
            self.type = type
            self.id = id
        }
    }
    /// The `type` attribute interned as `id`, as written.
    func typeName(_ id: Int) -> String { typeInfos[id].name }

    /// Distinct values each intern table keeps (`InternTable.limit`), and the id a
    /// value gets past it (hostile input): one scratch entry, overwritten by the next
    /// such value, valid for the record being read only — such records are never
    /// encoded directly nor counted by id, and the tables stop growing.
    let scratchId: Int

    /// `entry`'s id in `infos`: the next one, or the scratch entry once the table is full.
    private func intern<T>(_ entry: T, into infos: inout [T]) -> Int {
        if infos.count < scratchId {
            infos.append(entry)
            return infos.count - 1
        }
        if infos.count == scratchId { infos.append(entry) } else { infos[scratchId] = entry }
        return scratchId
    }

    /// Interns a `type` attribute's value not seen before; its id.
    func newType(_ name: String) -> Int {
        intern(TypeInfo(name: name, type: try? ObjectType(identifier: name), id: min(typeInfos.count, scratchId)),
               into: &typeInfos)
    }

    /// Interns a unit attribute's value not seen before; its id.
    func newUnit(_ text: String) -> Int {
        intern(UnitInfo(text: text, unit: try? HealthUnit(text), id: min(unitInfos.count, scratchId)), into: &unitInfos)
    }

    /// Interns a device attribute's value not seen before (parsed, and, unless it is
    /// the scratch entry, encoded in `partsTable`); its id.
    func newDevice(_ text: String) -> Int {
        let device = ExportValues.device(text)
        let part = deviceInfos.count < scratchId ? partsTable.add(device) : -1
        _ = intern(part, into: &deviceParts)
        return intern(DeviceInfo(device: device, part: part), into: &deviceInfos)
    }

    /// `internLimit`: distinct types, units and devices kept (tests make it small).
    /// `expectedRecords`: about how many elements the export holds (sizes the
    /// identity's occurrence table).
    init(scanner: XMLScanner, file: String, internLimit: Int = 100_000, expectedRecords: Int = 800,
         routeFile: @escaping (String) throws -> [RouteLocation]?) {
        self.scanner = scanner
        identity = RecordIdentity(expectedRecords: expectedRecords)
        self.file = file
        self.routeFile = routeFile
        scratchId = internLimit
        types = InternTable(limit: internLimit)
        units = InternTable(limit: internLimit)
        devices = InternTable(limit: internLimit)
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
                identifying = true
                identity.begin(scanner)
                defer { identifying = false }
                guard let mapped = try readRecord(member: false, direct: true) else { return .directRecord }
                return .record(mapped)
            case .Correlation?:
                identifying = true
                identity.begin(scanner)
                defer { identifying = false }
                return .correlation(try correlation())
            case .Workout?:
                identifying = true
                identity.begin(scanner)
                defer { identifying = false }
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
    func keptElement() throws(ImportError) -> ExportElement {
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
    func attributes() -> [MetadataEntry] {
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
    func keepChild(below sampleDepth: Int) throws(ImportError) {
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
    func keepChildrenToEnd(below sampleDepth: Int) throws(ImportError) {
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
    func attachPendingChildren(from mark: Int, to element: String,
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

    func nextToken() throws(ImportError) -> XMLScanner.Token {
        let token: XMLScanner.Token
        do { token = try scanner.next() } catch { throw .malformedXML(file: file, error) }
        if identifying && token == .startElement { identity.add(scanner, relativeDepth: scanner.depth - 2) }
        return token
    }

    func invalid(_ reason: String) -> ImportError {
        .invalidValue(file: file, scanner.errorAtCurrentTag(reason))
    }


    // MARK: Attribute values

    func text(_ name: ExportName) -> String? {
        scanner.attributeIndex(name.id).map { scanner.valueString($0) }
    }

    func internedString(_ i: Int) -> String { scanner.withValue(i) { strings.value($0) { $0 } } }

    func date(_ i: Int, _ what: String) throws(ImportError) -> (Date, Int) {
        guard let d = scanner.withValue(i, { $0.withUnsafeBufferPointer { ExportValues.date($0, cache: &dayCache) } }) else {
            throw invalid("\(what) '\(scanner.valueString(i))' is not a date")
        }
        return (Date(timeIntervalSinceReferenceDate: d.seconds), d.offset)
    }

    func number(_ i: Int, _ what: String) throws(ImportError) -> Double {
        guard let v = scanner.withValue(i, ExportValues.number) else {
            throw invalid("\(what) '\(scanner.valueString(i))' is not a number")
        }
        return v
    }

    func optionalNumber(_ name: ExportName) throws(ImportError) -> Double? {
        guard let i = scanner.attributeIndex(name.id) else { return nil }
        return try number(i, String(describing: name))
    }

    func source(_ i: Int?) -> Int {
        guard let i else { return sourceFor("") }
        return scanner.withValue(i) { sourceNames.value($0) { sourceFor($0) } }
    }

    func version(_ i: Int) -> Int {
        scanner.withValue(i) { value in
            versionIds.value(value) { newVersion($0) }
        }
    }

    /// The `Source` of a sample from source `index` at version `version` (−1: none).
    func sourceValue(_ index: Int, _ version: Int) -> Source {
        let key = index << 24 | (version + 1)
        if let s = sourceValues[key] { return s }
        let s = Source(bundleIdentifier: AppleHealthImporter.bundleIdentifier(for: sources[index]), name: sources[index],
                       version: version >= 0 ? versions[version] : nil)
        sourceValues[key] = s
        return s
    }

    /// Interns a source version not seen before; its index.
    func newVersion(_ text: String) -> Int {
        versions.append(text)
        versionParts.append(partsTable.add(text))
        return versions.count - 1
    }

    /// Whether a quantity type code (an index) is of a type some correlation admits
    /// as a member (blood pressure, food): such Records may repeat a correlation's
    /// members, so the importer holds them back and compares exact fingerprints.
    static let isMemberType: [Bool] = {
        var table = [Bool](repeating: false, count: 1 << 16)
        for type in ExportPass.memberTypes { table[Int(ObjectType.quantity(type).code)] = true }
        return table
    }()

    /// Whether `type` is a quantity type some correlation admits as a member.
    static func mayBeMember(_ type: ObjectType?) -> Bool {
        guard case .quantity(let q)? = type else { return false }
        return isMemberType[Int(ObjectType.quantity(q).code)]
    }


    func sourceFor(_ name: String) -> Int {
        if let k = sourceIndex[name] { return k }
        sources.append(name)
        sourceIndex[name] = sources.count - 1
        return sources.count - 1
    }
}
