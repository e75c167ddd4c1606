import Foundation
import HealthModel

/// A quantity sample read in place from its encoded bytes (FORMAT.md, *sample*), for
/// writers that print many samples (`query --json`) without building a `Sample`: no
/// model object, no string, no allocation per sample.
///
/// Only the common shape is read so; `read` answers nil for anything else, and the
/// caller decodes that sample in full (`SampleCodec.decode`), which also names what is
/// wrong with bytes that are. The shape: kind quantity, the type the query asked
/// for, flags among metadata, creation date, source version, replaces, sync and
/// written offsets (no device, no beats), every string printable ASCII without `"`
/// or `\` (so JSON and CSV take its bytes as they are), metadata values among
/// string, integer, number, bool and date (no quantity). `read` checks every field's
/// bytes as the full decoder does (dates in years 1…9999 and end ≥ start, finite
/// numbers, counts within the bytes, presence and bool bytes, offsets within
/// ±23:59); `passesModelChecks` then runs the model's checks the decoder runs (the
/// unit parses and fits the type, the metadata validates, the sync identity matches),
/// so what is read in place is exactly what the decoder accepts.
///
/// Invariant: every range lies within `payload`, and the value, dates and creation
/// are finite and within the ranges above.
package struct PlainQuantityBytes: Sendable {
    /// The bytes the ranges index: the record's payload, or a copy of the sample's.
    package let payload: [UInt8]
    package let uuid: UUID
    package let typeCode: UInt16
    /// Seconds since 2001-01-01T00:00:00Z (`Date`'s reference date).
    package let start: Double
    package let end: Double
    package let value: Double
    /// The unit as the saver spelled it (`SampleCodec`: `HealthUnit.spelling`).
    package let unit: Range<Int>
    /// The bundle identifier of the saving app's source (the event's actor), nil
    /// without one. Only the identifier: every writer prints just that, and a whole
    /// `Source` (four references) was retained and released with every copy of every
    /// sample read in place.
    package let bundleIdentifier: String?
    package let sourceVersion: Range<Int>?
    package let creation: Double?
    /// The metadata section after its count (`metadataCount` entries), when present.
    package let metadata: Range<Int>?
    package let metadataCount: Int
    /// The metadata section from its count (as `SampleCodec.decodeMetadata` reads it).
    let metadataSection: Range<Int>?
    /// The sync identity the sample's flags carry (flag 32): its identifier's bytes and
    /// version, which must equal the metadata's.
    let sync: (identifier: Range<Int>, version: Int64)?

    /// One metadata value, its strings as ranges of `payload`.
    package enum MetadataValue: Sendable {
        case string(Range<Int>)
        case integer(Int64)
        case number(Double)
        case bool(Bool)
        /// Seconds since the reference date.
        case date(Double)
    }

    /// Calls `body` with each metadata entry's key and value, in stored order.
    package func forEachMetadata(_ body: (Range<Int>, MetadataValue) -> Void) {
        guard let metadata else { return }
        payload.withUnsafeBytes { p in
            var r = ByteReader(UnsafeRawBufferPointer(rebasing: p[metadata]))
            r.base = metadata.lowerBound
            // The bytes were read once by `read` and are unchanged (`payload` is a
            // value): this pass cannot fail; were it to, it stops.
            do {
                for _ in 0..<metadataCount {
                    let key = try Self.plainString(&r)!
                    let tag = try r.u8()
                    switch tag {
                    case 1: body(key, .string(try Self.plainString(&r)!))
                    case 2: body(key, .integer(try r.zigzag()))
                    case 3: body(key, .number(try r.finite()))
                    case 4: body(key, .bool(try r.u8() == 1))
                    default: body(key, .date(try r.date().timeIntervalSinceReferenceDate))
                    }
                }
            } catch {
                assertionFailure("metadata read twice gave \(error)")
            }
        }
    }

    /// The sample encoded at `range` of `payload` (its length prefix, then its bytes,
    /// as a save lists it) when it has the common shape (above) and type `typeCode`,
    /// else nil. `bundleIdentifier`: the saving app's source's (nil: it has none).
    /// `version`: the save's (`samplesSaved` version 1 knows no flag above 32, as
    /// `SampleCodec.readFrame` holds it).
    package static func read(_ payload: [UInt8], _ range: Range<Int>, typeCode expected: UInt16, bundleIdentifier: String?,
                             version: UInt16 = EventKind.samplesSaved.currentVersion) -> PlainQuantityBytes? {
        precondition(range.lowerBound >= 0 && range.upperBound <= payload.count, "sample range outside its payload")
        return payload.withUnsafeBytes { p -> PlainQuantityBytes? in
            var outer = ByteReader(UnsafeRawBufferPointer(rebasing: p[range]))
            outer.base = range.lowerBound
            guard var r = try? outer.lengthPrefixed(), outer.isAtEnd,
                  let f = fields(&r, typeCode: expected, version: version) else { return nil }
            return PlainQuantityBytes(payload: payload, uuid: f.uuid, typeCode: f.typeCode, start: f.start, end: f.end,
                                      value: f.value, unit: f.unit, bundleIdentifier: bundleIdentifier, sourceVersion: f.sourceVersion,
                                      creation: f.creation, metadata: f.metadata, metadataCount: f.metadataCount,
                                      metadataSection: f.metadataSection, sync: f.sync)
        }
    }

    /// Whether the sample whose bytes (after its length prefix) are `sample` is one the
    /// full decoder accepts, shown without building it: it has the common shape, of
    /// any quantity type, and passes the model's checks (`read`, then
    /// `passesModelChecks`). False says nothing either way: the caller decodes it in
    /// full, which accepts it or names what is wrong. Replay's check of every save
    /// (`EventCodec.checkSave`) takes this path first.
    static func provesValid(_ sample: UnsafeRawBufferPointer, version: UInt16, memo: inout SampleCodec.SaveMemo,
                            valid: inout ValidMetadata) -> Bool {
        var r = ByteReader(sample)
        guard let f = fields(&r, typeCode: nil, version: version) else { return false }
        return passesModelChecks(sample, f, memo: &memo, valid: &valid)
    }

    /// The fields of a sample in the common shape, as ranges of what `r` reads; nil for
    /// any other sample or bytes the decoder would refuse.
    struct Fields {
        var uuid: UUID
        var typeCode: UInt16
        var start: Double
        var end: Double
        var value: Double
        var unit: Range<Int>
        var sourceVersion: Range<Int>?
        var creation: Double?
        var metadata: Range<Int>?
        var metadataCount: Int
        var metadataSection: Range<Int>?
        var sync: (identifier: Range<Int>, version: Int64)?
    }

    /// Reads the sample `r` holds exactly (no length prefix) when it has the common
    /// shape and type `expected` (nil: any quantity type), checking every field's bytes
    /// as the full decoder does; nil otherwise. Ranges are `r`'s absolute positions.
    static func fields(_ r: inout ByteReader, typeCode expected: UInt16?, version: UInt16) -> Fields? {
        do {
            guard try r.u8() == SampleCodec.Kind.quantity.rawValue else { return nil }
            let uuid = try r.uuid()
            let typeCode = try r.u16()
            guard typeCode == expected ?? typeCode, case .quantity? = ObjectType(code: typeCode) else { return nil }
            let start = try r.date().timeIntervalSinceReferenceDate
            let end = try r.date().timeIntervalSinceReferenceDate
            guard end >= start else { return nil }
            let flags = try r.u8()
            guard flags & ~Self.readableFlags == 0, version >= 2 || flags & ~0x3F == 0 else { return nil }
            if flags & 16 != 0 { _ = try r.uuid() }
            var sync: (identifier: Range<Int>, version: Int64)?
            if flags & 32 != 0 {
                guard let identifier = try plainString(&r) else { return nil }
                sync = (identifier, try r.zigzag())
            }
            let value = try r.finite()
            guard let unit = try plainString(&r) else { return nil }
            var metadata: Range<Int>?, metadataSection: Range<Int>?
            var metadataCount = 0
            if flags & 1 != 0 {
                let sectionStart = r.absolutePosition
                metadataCount = try r.count(limit: r.remaining)
                let from = r.absolutePosition
                for _ in 0..<metadataCount {
                    guard try plainString(&r) != nil else { return nil }
                    switch try r.u8() {
                    case 1: guard try plainString(&r) != nil else { return nil }
                    case 2: _ = try r.zigzag()
                    case 3: _ = try r.finite()
                    case 4: guard try r.u8() <= 1 else { return nil }
                    case 5: _ = try r.date()
                    default: return nil
                    }
                }
                metadata = from..<r.absolutePosition
                metadataSection = sectionStart..<r.absolutePosition
            }
            let creation = flags & 4 != 0 ? try r.date().timeIntervalSinceReferenceDate : nil
            var sourceVersion: Range<Int>?
            if flags & 8 != 0 {
                guard let v = try plainString(&r) else { return nil }
                sourceVersion = v
            }
            if flags & 64 != 0 {
                let limit = Int64(ISO8601.maxOffsetSeconds)
                for _ in 0..<(creation != nil ? 3 : 2) {
                    guard try r.zigzag().magnitude <= UInt64(limit) else { return nil }  // not abs: abs(Int64.min) traps
                }
            }
            guard r.isAtEnd else { return nil }
            return Fields(uuid: uuid, typeCode: typeCode, start: start, end: end, value: value, unit: unit,
                          sourceVersion: sourceVersion, creation: creation, metadata: metadata, metadataCount: metadataCount,
                          metadataSection: metadataSection, sync: sync)
        } catch {
            return nil  // the full decoder reads it again and names the fault
        }
    }

    /// Whether the sample passes the model's checks the full decoder makes beyond the
    /// bytes `read` checked — the unit parses and fits the type (`QuantityType.validate`,
    /// ranges unchecked as on every read), the metadata validates, the sync identity
    /// equals the metadata's — by the same functions, so that a sample read in place is
    /// one the decoder accepts (a damaged log whose CRCs were made to fit is refused
    /// the same way: the caller decodes what fails here, and the decoder names why).
    /// `memo` remembers units by their bytes; `valid`, metadata that passed (the check
    /// is a pure function of the metadata's bytes and the sync identity's).
    func passesModelChecks(memo: inout SampleCodec.SaveMemo, valid: inout ValidMetadata) -> Bool {
        let f = Fields(uuid: uuid, typeCode: typeCode, start: start, end: end, value: value, unit: unit,
                       sourceVersion: sourceVersion, creation: creation, metadata: metadata, metadataCount: metadataCount,
                       metadataSection: metadataSection, sync: sync)
        return payload.withUnsafeBytes { p in Self.passesModelChecks(p, f, memo: &memo, valid: &valid) }
    }

    /// `passesModelChecks` of the fields `f` read from `p` (its ranges index `p`).
    static func passesModelChecks(_ p: UnsafeRawBufferPointer, _ f: Fields, memo: inout SampleCodec.SaveMemo,
                                  valid: inout ValidMetadata) -> Bool {
        guard case .quantity(let type)? = ObjectType(code: f.typeCode) else { return false }
        do {
            let unit = try memo.unit(bytes: UnsafeRawBufferPointer(rebasing: p[f.unit]))
            try type.validate(value: f.value, unit: unit, checkingRange: false)
            guard f.metadataSection != nil || f.sync != nil else { return true }
            let metadataBytes = f.metadataSection.map { p[$0] } ?? p[0..<0]
            let syncBytes = f.sync.map { p[$0.identifier] }
            if valid.contains(metadataBytes, syncBytes, f.sync?.version) { return true }
            var metadata = Metadata()
            if let section = f.metadataSection {
                var r = ByteReader(UnsafeRawBufferPointer(rebasing: p[section]))
                metadata = try SampleCodec.decodeMetadata(&r)
                guard r.isAtEnd else { return false }
            }
            if let sync = f.sync {
                guard let identity = try metadata.syncIdentity(),
                      identity.identifier.utf8.elementsEqual(p[sync.identifier]), identity.version == sync.version
                else { return false }
            }
            try SampleCommon.check(startDate: Date(timeIntervalSinceReferenceDate: f.start),
                                   endDate: Date(timeIntervalSinceReferenceDate: f.end), metadata: metadata,
                                   creationDate: f.creation.map { Date(timeIntervalSinceReferenceDate: $0) }, writtenOffsets: nil)
            valid.insert(metadataBytes, syncBytes, f.sync?.version)  // only what passed: a refusal is decoded every time, to be named
            return true
        } catch {
            return false
        }
    }

    /// Metadata known to pass the model's checks (`passesModelChecks`), by its bytes
    /// and the sync identity's: a few distinct sections cover most samples
    /// (`HKWasUserEntered: true`, a motion context). The most recently passed first, at
    /// most `capacity`, each at most `maxBytes`; a hit compares bytes, allocates nothing.
    struct ValidMetadata {
        static let capacity = 16
        static let maxBytes = 512
        private var entries: [(metadata: [UInt8], sync: [UInt8]?, version: Int64?)] = []

        func contains(_ metadata: Slice<UnsafeRawBufferPointer>, _ sync: Slice<UnsafeRawBufferPointer>?,
                      _ version: Int64?) -> Bool {
            entries.contains { e in
                e.version == version && e.metadata.count == metadata.count && e.metadata.elementsEqual(metadata)
                    && (e.sync.map { s in sync.map { s.elementsEqual($0) } ?? false } ?? (sync == nil))
            }
        }

        mutating func insert(_ metadata: Slice<UnsafeRawBufferPointer>, _ sync: Slice<UnsafeRawBufferPointer>?,
                             _ version: Int64?) {
            guard metadata.count + (sync?.count ?? 0) <= Self.maxBytes else { return }
            if entries.count == Self.capacity { entries.removeLast() }
            entries.insert((Array(metadata), sync.map(Array.init), version), at: 0)
        }
    }

    /// Flags `read` takes: metadata 1, creation 4, sourceVersion 8, replaces 16, sync 32, offsets 64.
    static let readableFlags: UInt8 = 1 | 4 | 8 | 16 | 32 | 64

    /// A string field's range when every byte is printable ASCII other than `"` and
    /// `\`, else nil (the field read past either way).
    private static func plainString(_ r: inout ByteReader) throws(EventDecodingError) -> Range<Int>? {
        let (bytes, _) = try r.stringBytes()
        let end = r.absolutePosition
        for b in bytes where b < 0x20 || b >= 0x7F || b == 0x22 || b == 0x5C { return nil }
        return (end - bytes.count)..<end
    }
}
