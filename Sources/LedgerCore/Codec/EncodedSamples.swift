import Foundation
import HealthModel
import LedgerLog

/// Samples already encoded as the body of a `samplesSaved` payload (`n × (varint
/// length · sample)`, events/FORMAT.md, "sample"), with the facts the rules and the
/// projections fold (their headers): what a bulk writer — the Apple Health importer —
/// hands the ledger (`LedgerCommand.saveEncoded`), so that no `Sample` is built,
/// copied, encoded again or taken apart again on the ledger's side.
///
/// Filled by `append(_:)`, from a model value (encoded by `SampleCodec.encode`, its
/// headers as `EventFacts` takes them), or `append(_: SampleParts)`, from parts the
/// model's own checks accepted when the `SampleParts` was made (`SampleCommon.check`,
/// `QuantityType.validate`, `CategoryType.validate`): the bytes are those
/// `SampleCodec.encode` writes for the same sample (tests hold the two ways to the
/// same bytes over whole exports).
///
/// Invariants: `frameEnds` and `headerEnds` have one entry per top-level sample and
/// increase strictly; the last of each is `body.count` and `headers.count`; a
/// header's `memberOf` names the top-level header of its own sample; a header's
/// `syncIndex` indexes `syncIdentifiers`; no sample replaces anything until the
/// ledger decides it does (`replacing(_:)`).
public struct EncodedSamples: Sendable {
    /// `n × (varint length · sample)`, n = `count`.
    private(set) var body = PayloadWriter(capacity: 0)
    /// Per top-level sample, where its frame (length prefix included) ends in `body`.
    private(set) var frameEnds: [Int] = []
    /// The samples' headers in flattened order (a correlation's members after it).
    private(set) var headers: [SampleCodec.Header] = []
    /// Per top-level sample, where its headers end in `headers`.
    private(set) var headerEnds: [Int] = []
    /// The sync identifiers the headers' `syncIndex` count into.
    private(set) var syncIdentifiers: [String] = []

    /// No samples; `samples` and `bytes` are hints for the room to reserve.
    public init(reservingSamples samples: Int = 0, bytes: Int = 0) {
        body = PayloadWriter(capacity: bytes)
        frameEnds.reserveCapacity(samples)
        headerEnds.reserveCapacity(samples)
        headers.reserveCapacity(samples)
    }

    /// Top-level samples (a correlation's members are part of it).
    public var count: Int { frameEnds.count }
    public var isEmpty: Bool { frameEnds.isEmpty }
    /// Bytes of the encoded samples (the payload is this plus its actor and count).
    package var byteCount: Int { body.count }

    // MARK: Filling

    /// Appends `sample` (top-level; a correlation with its members), encoded as a
    /// save of it writes it (no replacement: the ledger decides that).
    package mutating func append(_ sample: Sample) {
        body.lengthPrefixed { SampleCodec.encode(sample, replaces: nil, into: &$0) }
        EventFacts.appendHeaders(sample, replaces: nil, memberOf: nil, into: &headers, strings: &syncIdentifiers)
        frameEnds.append(body.count)
        headerEnds.append(headers.count)
    }

    /// Appends a quantity or category sample from its checked parts (their units,
    /// devices and versions in `table`), as `SampleCodec.encode` writes the same sample
    /// (flags 2, 4, 8, 64 as present).
    package mutating func append(_ p: SampleParts, from table: SamplePartsTable) {
        var flags = SampleCodec.Flags()
        if p.device >= 0 { flags.insert(.device) }
        if p.creation != nil { flags.insert(.creationDate) }
        if p.sourceVersion >= 0 { flags.insert(.sourceVersion) }
        if p.offsets != nil { flags.insert(.writtenOffsets) }
        let creationOffset = p.creation != nil ? Int64(p.offsets?.creation ?? 0) : nil
        do {
            let unit = table.spelling(ofUnit: p.unitIndex), device = table.piece(p.device), version = table.piece(p.sourceVersion)
            var length = 36  // kind, uuid, type, start, end, flags
            switch p.body {
            case .quantity: length += 8 + unit.count
            case .category(let value): length += Self.varintLength(Self.zigzag(Int64(value)))
            }
            length += device.count
            if p.creation != nil { length += 8 }
            length += version.count
            if let o = p.offsets {
                length += Self.varintLength(Self.zigzag(Int64(o.start))) + Self.varintLength(Self.zigzag(Int64(o.end)))
                if let c = creationOffset { length += Self.varintLength(Self.zigzag(c)) }
            }
            let total = Self.varintLength(UInt64(length)) + length
            // Written on the stack, then appended in one copy (no zero-fill of the tail).
            withUnsafeTemporaryAllocation(byteCount: total, alignment: 8) { out in
                var w = RawWriter(out)
                w.varint(UInt64(length))
                w.u8(p.kind.rawValue)
                withUnsafeBytes(of: p.uuid.uuid) { w.bytes($0) }
                w.u16(p.typeCode)
                w.f64(p.start)
                w.f64(p.end)
                w.u8(flags.rawValue)
                switch p.body {
                case .quantity(let value, _):
                    w.f64(value)
                    w.bytes(unit)
                case .category(let value):
                    w.varint(Self.zigzag(Int64(value)))
                }
                w.bytes(device)
                if let c = p.creation { w.f64(c) }
                w.bytes(version)
                if let o = p.offsets {
                    w.varint(Self.zigzag(Int64(o.start)))
                    w.varint(Self.zigzag(Int64(o.end)))
                    if let c = creationOffset { w.varint(Self.zigzag(c)) }
                }
                precondition(w.written == total, "a sample's parts encode to the length computed for them")
                body.append(contentsOf: UnsafeRawBufferPointer(out))
            }
        }
        var h = SampleCodec.Header(kind: p.kind, uuid: p.uuid, typeCode: p.typeCode, start: p.start, end: p.end, replaces: nil,
                                   syncIndex: -1, syncVersion: 0, memberOf: nil)
        if case .quantity(_, let canonical) = p.body { h.value = canonical }
        headers.append(h)
        frameEnds.append(body.count)
        headerEnds.append(headers.count)
    }

    /// Empties it, keeping its storage (when not shared) for the next samples.
    package mutating func removeAll() {
        body.removeAll()
        frameEnds.removeAll(keepingCapacity: true)
        headers.removeAll(keepingCapacity: true)
        headerEnds.removeAll(keepingCapacity: true)
        syncIdentifiers.removeAll(keepingCapacity: true)
    }

    // MARK: Reading

    private func headerIndex(ofSample i: Int) -> Int { i == 0 ? 0 : headerEnds[i - 1] }
    private func frameStart(ofSample i: Int) -> Int { i == 0 ? 0 : frameEnds[i - 1] }

    /// The UUID of top-level sample `i`.
    package func uuid(ofSample i: Int) -> UUID { headers[headerIndex(ofSample: i)].uuid }

    /// The type code of top-level sample `i` (0 for a record kept raw).
    package func typeCode(ofSample i: Int) -> UInt16 { headers[headerIndex(ofSample: i)].typeCode }

    /// The sync identity of top-level sample `i`, if its metadata has one.
    package func syncIdentity(ofSample i: Int) -> (identifier: String, version: Int64)? {
        let h = headers[headerIndex(ofSample: i)]
        guard h.syncIndex >= 0 else { return nil }
        return (syncIdentifiers[Int(h.syncIndex)], h.syncVersion)
    }

    /// The type identifier of top-level sample `i` as its save names it: the model's
    /// identifier, or for a record kept raw (type code 0) the identifier it was written with.
    package func typeIdentifier(ofSample i: Int) -> String {
        let code = typeCode(ofSample: i)
        if code != 0 { return ObjectType(code: code)?.identifier ?? "type \(code)" }
        // Our own frame: length · kind · uuid · type · start · end · flags · [replaces] ·
        // [sync] · typeIdentifier · … (it reads; a failure would be a bug, not input).
        return body.withWrittenBytes { all in
            var outer = ByteReader(UnsafeRawBufferPointer(rebasing: all[frameStart(ofSample: i)..<frameEnds[i]]))
            do {
                var r = try outer.lengthPrefixed()
                let flags = try SampleCodec.readFrame(&r, version: EventKind.samplesSaved.currentVersion, asMember: false).5
                if flags.contains(.replaces) { _ = try r.uuid() }
                if flags.contains(.sync) { try r.skipString(); _ = try r.zigzag() }
                return try r.string()
            } catch {
                preconditionFailure("an encoded sample reads back: \(error)")
            }
        }
    }

    /// The headers and sync identifiers as a save's facts (`EventFacts`).
    func facts(app: AppOrdinal) -> EventFacts {
        .samplesSaved(app: app, headers: headers[...], syncIdentifiers: syncIdentifiers[...])
    }

    /// Writes a `samplesSaved` payload (current version) of these samples by `app`.
    func writePayload(app: AppOrdinal, into w: inout PayloadWriter) {
        w.varint(UInt64(app))
        w.varint(count)
        body.withWrittenBytes { w.append(contentsOf: $0) }
    }

    // MARK: Deriving

    /// The samples `keep` keeps (by top-level index), in order, with their headers
    /// (members' `memberOf` and sync indices renumbered).
    package func filtered(keeping keep: (Int) -> Bool) -> EncodedSamples {
        var out = EncodedSamples(reservingSamples: count, bytes: body.count)
        body.withWrittenBytes { all in
            for i in 0..<count where keep(i) {
                out.body.append(contentsOf: UnsafeRawBufferPointer(rebasing: all[frameStart(ofSample: i)..<frameEnds[i]]))
                out.copyHeaders(of: i, from: self, replaces: nil)
                out.frameEnds.append(out.body.count)
                out.headerEnds.append(out.headers.count)
            }
        }
        return out
    }

    /// These samples with top-level sample `i` replacing `replacements[i]` where one is
    /// given: its frame gains the replaced UUID after its flags (flag 16) and its header
    /// names it, exactly as `SampleCodec.encode` writes a sample that replaces another.
    func replacing(_ replacements: [Int: UUID]) -> EncodedSamples {
        guard !replacements.isEmpty else { return self }
        var out = EncodedSamples(reservingSamples: count, bytes: body.count + 17 * replacements.count)
        body.withWrittenBytes { all in
            for i in 0..<count {
                let frame = UnsafeRawBufferPointer(rebasing: all[frameStart(ofSample: i)..<frameEnds[i]])
                if let replaced = replacements[i] {
                    var r = ByteReader(frame)
                    // Our own frames: the prefix reads (a failure here is a bug, not input).
                    guard let sample = try? r.lengthPrefixed().bytes else { preconditionFailure("an encoded frame reads back") }
                    precondition(sample.count > 36 && sample[35] & SampleCodec.Flags.replaces.rawValue == 0,
                                 "a sample is given its replacement once")
                    out.body.lengthPrefixed { w in
                        w.append(contentsOf: UnsafeRawBufferPointer(rebasing: sample[0..<35]))
                        w.append(sample[35] | SampleCodec.Flags.replaces.rawValue)
                        withUnsafeBytes(of: replaced.uuid) { w.append(contentsOf: $0) }
                        w.append(contentsOf: UnsafeRawBufferPointer(rebasing: sample[36...]))
                    }
                } else {
                    out.body.append(contentsOf: frame)
                }
                out.copyHeaders(of: i, from: self, replaces: replacements[i])
                out.frameEnds.append(out.body.count)
                out.headerEnds.append(out.headers.count)
            }
        }
        return out
    }

    /// Appends sample `i`'s headers from `source`, renumbered for this list.
    private mutating func copyHeaders(of i: Int, from source: EncodedSamples, replaces: UUID?) {
        let first = source.headerIndex(ofSample: i)
        let top = headers.count
        for k in first..<source.headerEnds[i] {
            var h = source.headers[k]
            if h.memberOf != nil { h.memberOf = top }
            if k == first { h.replaces = replaces }
            if h.syncIndex >= 0 {
                syncIdentifiers.append(source.syncIdentifiers[Int(h.syncIndex)])
                h.syncIndex = Int32(syncIdentifiers.count - 1)
            }
            headers.append(h)
        }
    }

    // MARK: Primitives

    @inline(__always) static func zigzag(_ v: Int64) -> UInt64 { UInt64(bitPattern: (v << 1) ^ (v >> 63)) }

    @inline(__always) static func varintLength(_ v: UInt64) -> Int {
        var n = 1, x = v
        while x >= 0x80 { x >>= 7; n += 1 }
        return n
    }

    /// Writes the encoding's primitives into memory sized for them beforehand.
    private struct RawWriter {
        let base: UnsafeMutableRawBufferPointer
        var written = 0
        init(_ base: UnsafeMutableRawBufferPointer) { self.base = base }
        @inline(__always) mutating func u8(_ v: UInt8) { base[written] = v; written += 1 }
        @inline(__always) mutating func u16(_ v: UInt16) {
            base.storeBytes(of: v.littleEndian, toByteOffset: written, as: UInt16.self)
            written += 2
        }
        @inline(__always) mutating func f64(_ v: Double) {
            base.storeBytes(of: v.bitPattern.littleEndian, toByteOffset: written, as: UInt64.self)
            written += 8
        }
        @inline(__always) mutating func varint(_ value: UInt64) {
            var v = value
            while v >= 0x80 { u8(UInt8(truncatingIfNeeded: v) | 0x80); v >>= 7 }
            u8(UInt8(v))
        }
        @inline(__always) mutating func bytes(_ b: UnsafeRawBufferPointer) {
            guard b.count > 0 else { return }
            precondition(written + b.count <= base.count, "a sample's parts encode to the length computed for them")
            (base.baseAddress! + written).copyMemory(from: b.baseAddress!, byteCount: b.count)
            written += b.count
        }
    }
}

/// What `SampleParts` refer to by index, made once each and kept by whoever makes
/// the parts (the importer's mapper): units prepared per (type, spelling), devices and
/// strings (source versions) in their encoding. The parts stay plain values — copied
/// as bytes, never retained — and `EncodedSamples.append(_:from:)` reads the pieces here.
/// Append-only: an index, once given, names the same piece for the table's life.
package final class SamplePartsTable {
    private var units: [PreparedUnit] = []
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

    /// The prepared unit at `index`.
    package func unit(_ index: Int32) -> PreparedUnit { units[Int(index)] }

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
        try type.validateValue(value, unit: unit)
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

    /// A quantity sample with no metadata and no beats, its unit `table.unit(unit)`:
    /// throws what `SampleCommon(…)` then `QuantitySample(type:quantity:common:)` would.
    package init(quantity value: Double, unit: Int32, in table: SamplePartsTable, uuid: UUID, start: Date, end: Date,
                 creation: Date?, offsets: WrittenOffsets?, device: Int32, sourceVersion: Int32) throws {
        try SampleCommon.check(startDate: start, endDate: end, metadata: Self.noMetadata, creationDate: creation,
                               writtenOffsets: offsets)
        let prepared = table.unit(unit)
        try prepared.validate(value)
        kind = .quantity
        typeCode = ObjectType.quantity(prepared.type).code
        body = .quantity(value: value, canonical: prepared.canonicalValue(value))
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
