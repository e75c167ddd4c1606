import Foundation
import HealthModel
import LedgerLog

/// What `SampleParts` refer to by index, made once each and kept by whoever makes
/// the parts (the importer's mapper): units prepared per (type, spelling), devices and
/// strings (source versions) in their encoding. The parts stay plain values — copied
/// as bytes, never retained — and `EncodedSamples.append(_:from:)` reads the pieces here.
/// Append-only: an index, once given, names the same piece for the table's life.
package final class SamplePartsTable {
    private var units: [PreparedUnit] = []
    /// `units`, unretained (`withUnit`).
    private var unownedUnits: [Unmanaged<PreparedUnit>] = []
    /// Every piece's bytes, one after another; piece `i` is `pieces[i]` of them. Raw
    /// storage: lending a piece to the encoder takes no reference.
    private var bytes: UnsafeMutablePointer<UInt8>
    private var capacity = 4096
    private var count = 0
    private var pieces: UnsafeMutablePointer<(start: Int, length: Int)>
    private var pieceCapacity = 256
    private var pieceCount = 0
    /// Per unit, its spelling's piece.
    private var unitSpellings: [Int32] = []

    package init() {
        bytes = .allocate(capacity: capacity)
        pieces = .allocate(capacity: pieceCapacity)
    }

    deinit {
        bytes.deallocate()
        pieces.deallocate()
    }

    private func addPiece(_ encoded: [UInt8]) -> Int32 {
        if count + encoded.count > capacity {
            var bigger = capacity * 2
            while bigger < count + encoded.count { bigger *= 2 }
            let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: bigger)
            grown.update(from: bytes, count: count)
            bytes.deallocate()
            bytes = grown
            capacity = bigger
        }
        if pieceCount == pieceCapacity {
            let grown = UnsafeMutablePointer<(start: Int, length: Int)>.allocate(capacity: pieceCapacity * 2)
            grown.update(from: pieces, count: pieceCount)
            pieces.deallocate()
            pieces = grown
            pieceCapacity *= 2
        }
        encoded.withUnsafeBufferPointer { (bytes + count).update(from: $0.baseAddress!, count: $0.count) }
        pieces[pieceCount] = (count, encoded.count)
        count += encoded.count
        pieceCount += 1
        return Int32(pieceCount - 1)
    }

    /// Adds a prepared unit; its index.
    package func add(_ unit: PreparedUnit) -> Int32 {
        units.append(unit)
        unownedUnits.append(Unmanaged.passUnretained(unit))
        unitSpellings.append(addPiece(unit.spelling))
        return Int32(units.count - 1)
    }

    /// Adds a device, encoded (presence bits, then the fields); its index.
    package func add(_ device: Device) -> Int32 {
        var w = PayloadWriter(capacity: 64)
        SampleCodec.encodeDevice(device, into: &w)
        return addPiece(w.bytes)
    }

    /// Adds a string, encoded (`varint length · UTF-8`); its index.
    package func add(_ string: String) -> Int32 {
        var w = PayloadWriter(capacity: string.utf8.count + 2)
        w.string(string)
        return addPiece(w.bytes)
    }

    /// `body` on the prepared unit at `index`, lent without reference counting (it
    /// runs per sample): `units` keeps every one alive as long as the table.
    @inline(__always)
    func withUnit<R>(_ index: Int32, _ body: (PreparedUnit) throws -> R) rethrows -> R {
        try unownedUnits[Int(index)]._withUnsafeGuaranteedRef(body)
    }

    /// The encoded bytes of piece `index` (empty for −1), valid until the next `add`.
    @inline(__always)
    func piece(_ index: Int32) -> UnsafeRawBufferPointer {
        guard index >= 0 else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        let p = pieces[Int(index)]
        return UnsafeRawBufferPointer(start: bytes + p.start, count: p.length)
    }

    /// The encoded spelling of unit `index` (empty for −1).
    @inline(__always)
    func spelling(ofUnit index: Int32) -> UnsafeRawBufferPointer {
        index >= 0 ? piece(unitSpellings[Int(index)]) : piece(-1)
    }
}

/// A quantity type's unit as written, prepared once per (type, spelling): the unit,
/// its encoded spelling, and how a value converts to the type's canonical unit (what
/// the statistics projection keeps), the same number `SampleCodec.canonicalValue` gives.
package final class PreparedUnit: Sendable {
    package let type: QuantityType
    package let unit: HealthUnit
    /// The spelling as the encoding writes it (`varint length · UTF-8`).
    let spelling: [UInt8]
    /// The spelling is the canonical unit's, or the units are equal: the value as it is.
    private let same: Bool
    /// Else the conversion to the canonical unit (nil: none; the statistics projection keeps NaN).
    private let converter: HealthModel.UnitConverter?
    /// Whether the type admits the unit (`QuantityType.validateUnit`: the same for every value).
    private let unitAllowed: Bool

    package init(type: QuantityType, unit: HealthUnit) {
        self.type = type
        self.unit = unit
        var w = PayloadWriter(capacity: unit.spelling.utf8.count + 2)
        w.string(unit.spelling)
        spelling = w.bytes
        let canonical = type.canonicalUnit
        // The branches of `SampleCodec.canonicalValue(_:typeCode:)` and `Quantity.doubleValue(for:)`.
        same = unit.spelling == canonical.spelling || unit == canonical
        converter = same ? nil : try? unit.converter(to: canonical)
        unitAllowed = (try? type.validateUnit(unit)) != nil
    }

    /// `value` (in this unit) in the type's canonical unit.
    @inline(__always)
    package func canonicalValue(_ value: Double) -> Double {
        if same { return value }
        return converter?.convert(value) ?? .nan
    }

    /// Throws what `QuantitySample(type:quantity:common:)` throws for `value` in this
    /// unit (its `Quantity` first: a value that is not finite), nothing else.
    @inline(__always)
    package func validate(_ value: Double) throws {
        guard value.isFinite else { throw HealthModelError.nonFiniteValue(field: "quantity value") }
        if !unitAllowed { try type.validateUnit(unit) }  // throws what validate(value:unit:) would
        try type.validateValue(value, unit: unit, canonical: canonicalValue(value))
    }
}

/// A quantity or category sample as parts, made only when the model's checks accept
/// them (the same checks, in the same order, as building the `Sample` would run), so
/// an `EncodedSamples` never holds a sample the model refuses. Plain values only: the
/// unit, device and source version are indices into a `SamplePartsTable`.
package struct SampleParts: Sendable {
    enum Body: Sendable {
        case quantity(value: Double, canonical: Double)
        case category(Int)
    }

    let kind: SampleCodec.Kind
    let typeCode: UInt16
    let uuid: UUID
    let start: Double
    let end: Double
    let body: Body
    /// The prepared unit's index (a quantity), else −1.
    let unitIndex: Int32
    /// The device's index, or −1 for none.
    let device: Int32
    let creation: Double?
    /// The source version's index (a string), or −1 for none.
    let sourceVersion: Int32
    let offsets: WrittenOffsets?

    /// A quantity sample with no metadata and no beats, its unit the table's prepared unit `unit` (`withUnit`):
    /// throws what `SampleCommon(…)` then `QuantitySample(type:quantity:common:)` would.
    package init(quantity value: Double, unit: Int32, in table: SamplePartsTable, uuid: UUID, start: Date, end: Date,
                 creation: Date?, offsets: WrittenOffsets?, device: Int32, sourceVersion: Int32) throws {
        try SampleCommon.check(startDate: start, endDate: end, metadata: Self.noMetadata, creationDate: creation,
                               writtenOffsets: offsets)
        let (code, canonical) = try table.withUnit(unit) { prepared throws in
            try prepared.validate(value)
            return (ObjectType.quantity(prepared.type).code, prepared.canonicalValue(value))
        }
        kind = .quantity
        typeCode = code
        body = .quantity(value: value, canonical: canonical)
        unitIndex = unit
        self.uuid = uuid
        self.start = start.timeIntervalSinceReferenceDate
        self.end = end.timeIntervalSinceReferenceDate
        self.creation = creation?.timeIntervalSinceReferenceDate
        self.offsets = offsets
        self.device = device
        self.sourceVersion = sourceVersion
    }

    /// A category sample with no metadata: throws what `SampleCommon(…)` then
    /// `CategorySample(type:value:common:)` would.
    package init(category type: CategoryType, value: Int, uuid: UUID, start: Date, end: Date, creation: Date?,
                 offsets: WrittenOffsets?, device: Int32, sourceVersion: Int32) throws {
        try SampleCommon.check(startDate: start, endDate: end, metadata: Self.noMetadata, creationDate: creation,
                               writtenOffsets: offsets)
        try type.validate(value)
        kind = .category
        typeCode = ObjectType.category(type).code
        body = .category(value)
        unitIndex = -1
        self.uuid = uuid
        self.start = start.timeIntervalSinceReferenceDate
        self.end = end.timeIntervalSinceReferenceDate
        self.creation = creation?.timeIntervalSinceReferenceDate
        self.offsets = offsets
        self.device = device
        self.sourceVersion = sourceVersion
    }

    /// The same parts with another UUID (the model's checks do not look at it).
    package func with(uuid: UUID) -> SampleParts { SampleParts(self, uuid: uuid) }

    private init(_ p: SampleParts, uuid: UUID) {
        kind = p.kind
        typeCode = p.typeCode
        self.uuid = uuid
        start = p.start
        end = p.end
        body = p.body
        unitIndex = p.unitIndex
        device = p.device
        creation = p.creation
        sourceVersion = p.sourceVersion
        offsets = p.offsets
    }

    private static let noMetadata = Metadata()
}
