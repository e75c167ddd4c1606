import Foundation
import HealthModel
import Synchronization

/// What the decoder remembers to read a sample cheaper, giving exactly what reading
/// it afresh gives: per save, the units and devices its samples spell
/// (`SaveMemo`); across saves, how each unit spelling converts to its type's
/// canonical unit (`CanonicalConversions`, for replay's header reader).
extension SampleCodec {
    /// The units and devices a save's samples spell, each read once per save (most of
    /// an event's samples share a handful). A unit entry is a unit's bytes as written
    /// and `HealthUnit(text)` of them, what `Quantity(_:unit:)` parses: a sample whose
    /// unit bytes equal an entry's gets that unit without reading a string or asking
    /// the global cache (a lock and a hash per sample); any other is read as `string()`
    /// reads it and parsed where the model builds the quantity, as before. A device
    /// entry is a device field's bytes and what `decodeDevice` made of them (a pure
    /// function of those bytes): equal bytes give that device, eight strings fewer.
    struct SaveMemo {
        /// A unit field as read: bytes seen before (so valid UTF-8 and parsed), or the
        /// text to parse.
        enum Read {
            /// The unit of entry `index` (bytes seen before).
            case parsed(index: Int)
            case text(String)
        }

        // Entries in parallel arrays, compared through buffers: iterating an array of
        // (bytes, unit) pairs retained and released both per entry per sample.
        private var unitKeys: [[UInt8]] = []
        private var units: [HealthUnit] = []
        private var deviceKeys: [[UInt8]] = []
        private var devices: [Device] = []
        /// Units (devices) beyond this many in one save are read as they come.
        static let limit = 8
        /// Units (devices) beyond this many are read as they come: `limit` for a memo
        /// of one save, more for one carried across saves (`EventCodec.checkSave`).
        let capacity: Int

        init(capacity: Int = SaveMemo.limit) {
            precondition(capacity >= 0, "a memo's capacity is a count")
            self.capacity = capacity
        }

        /// The index of the key equal to `raw`, if any.
        private static func find(_ raw: UnsafeRawBufferPointer, in keys: [[UInt8]]) -> Int? {
            keys.withUnsafeBufferPointer { k in
                for i in k.indices where k[i].count == raw.count {
                    let same = k[i].withUnsafeBytes { e in raw.count == 0 || memcmp(e.baseAddress!, raw.baseAddress!, raw.count) == 0 }
                    if same { return i }
                }
                return nil
            }
        }

        /// Reads a device field as `decodeDevice` reads it, with its errors.
        mutating func device(_ r: inout ByteReader) throws(EventDecodingError) -> Device {
            var probe = r
            // Framing that fails is left to `decodeDevice`, which fails the same way.
            guard let raw = try? Self.deviceBytes(&probe) else { return try decodeDevice(&r) }
            if let i = Self.find(raw, in: deviceKeys) {
                r = probe
                return devices[i]
            }
            let device = try decodeDevice(&r)
            if devices.count < capacity {
                deviceKeys.append(Array(raw))
                devices.append(device)
            }
            return device
        }

        /// The bytes of the device field at the reader (its presence byte, then each
        /// present field framed as a string), the reader moved past them.
        static func deviceBytes(_ r: inout ByteReader) throws(EventDecodingError) -> UnsafeRawBufferPointer {
            let start = r.position
            let present = try r.u8()
            for i in 0..<8 where present & (1 << UInt8(i)) != 0 { _ = try r.stringBytes() }
            return UnsafeRawBufferPointer(rebasing: r.bytes[start..<r.position])
        }

        /// Reads a unit field (what `ByteReader.string()` reads, with its errors).
        mutating func read(_ r: inout ByteReader) throws(EventDecodingError) -> Read {
            let (raw, at) = try r.stringBytes()
            if let i = Self.find(raw, in: unitKeys) { return .parsed(index: i) }
            guard let text = ByteReader.utf8String(raw) else { throw .malformed(offset: at, reason: "string is not UTF-8") }
            return .text(text)
        }

        /// The unit spelled by `raw` (a unit field's bytes): `HealthUnit(text)` as
        /// `read` then `unit` give it, remembered; throws what they throw.
        mutating func unit(bytes raw: UnsafeRawBufferPointer) throws -> HealthUnit {
            if let i = Self.find(raw, in: unitKeys) { return units[i] }
            guard let text = ByteReader.utf8String(raw) else { throw EventDecodingError.malformed(offset: 0, reason: "string is not UTF-8") }
            return try unit(.text(text))
        }

        /// The unit: `HealthUnit(text)`, remembered; throws its parse error.
        mutating func unit(_ read: Read) throws -> HealthUnit {
            switch read {
            case .parsed(let index):
                return units[index]
            case .text(let text):
                let unit = try HealthUnit(text)
                if units.count < capacity {
                    unitKeys.append(Array(text.utf8))
                    units.append(unit)
                }
                return unit
            }
        }
    }

    /// How `canonicalValue(_:unit:typeCode:)` converts a value, remembered per (type
    /// code, unit spelling, as its UTF-8 bytes): replay's header reader asks for every
    /// quantity sample, and working it out parses the unit and finds its converter
    /// through two locked, hashed caches. A converter is a function of its two units'
    /// meanings, so a remembered one gives the same number.
    ///
    /// The entries are plain data in a fixed array, appended under a lock and published
    /// by an atomic count: a lookup takes no lock, retains nothing and makes no string.
    final class CanonicalConversions: @unchecked Sendable {
        // @unchecked: an entry is written once, under `lock`, before `published` is
        // raised past it (releasing); readers read only entries below the `published`
        // they loaded (acquiring), which are never written again.
        enum Conversion {
            /// Not a quantity type, a unit that does not parse or does not convert.
            case nan
            /// Spelled as the type's canonical unit: the value as it is.
            case identity
            /// Another spelling of the canonical unit: the value, if finite.
            case identityIfFinite
            /// The value converted, if finite.
            case convert(HealthModel.UnitConverter)

            func apply(_ value: Double) -> Double {
                switch self {
                case .nan: .nan
                case .identity: value
                case .identityIfFinite: value.isFinite ? value : .nan
                case .convert(let converter): value.isFinite ? converter.convert(value) : .nan
                }
            }
        }

        static let shared = CanonicalConversions()
        /// Spellings beyond this many (or longer than `Key.capacity` bytes) are worked
        /// out on every call (hostile logs may spell millions).
        static let limit = 256
        private let lock = NSLock()
        private let published = Atomic<Int>(0)
        private let entries = UnsafeMutablePointer<Entry>.allocate(capacity: CanonicalConversions.limit)
        /// The few conversions that are not a multiply-add (sound pressure levels), by entry.
        private let levels = UnsafeMutablePointer<HealthModel.UnitConverter?>.allocate(capacity: CanonicalConversions.limit)

        deinit {
            let n = published.load(ordering: .acquiring)
            entries.deinitialize(count: n)
            entries.deallocate()
            levels.deinitialize(count: n)
            levels.deallocate()
        }

        /// A remembered spelling: the type code and the unit's UTF-8 bytes, inline.
        private struct Key: Equatable {
            static let capacity = 32
            let code: UInt16
            let count: Int
            private var bytes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

            init?(_ code: UInt16, _ unit: UnsafeRawBufferPointer) {
                guard unit.count <= Self.capacity else { return nil }
                self.code = code
                count = unit.count
                withUnsafeMutableBytes(of: &bytes) { $0.copyMemory(from: unit) }
            }

            static func == (a: Key, b: Key) -> Bool {
                a.code == b.code && a.count == b.count && a.bytes.0 == b.bytes.0 && a.bytes.1 == b.bytes.1
                    && a.bytes.2 == b.bytes.2 && a.bytes.3 == b.bytes.3
            }
        }

        /// A conversion as plain data: `Conversion` with a linear converter as its scale
        /// and offset (`convert` is then `value * scale + offset`, the same expression).
        private struct Entry {
            enum Kind: UInt8 { case nan, identity, identityIfFinite, linear, level }
            let key: Key
            let kind: Kind
            let scale: Double
            let offset: Double
        }

        /// `value` in the type's canonical unit, the unit given as the bytes of its
        /// spelling; nil when those bytes are not UTF-8 (not a string: the caller's
        /// error). Remembered spellings are compared as bytes: no string is made.
        func value(_ value: Double, unit: UnsafeRawBufferPointer, typeCode: UInt16) -> Double? {
            let key = Key(typeCode, unit)
            if let key {
                let n = published.load(ordering: .acquiring)
                for i in 0..<n where entries[i].key == key {
                    let e = entries[i]
                    switch e.kind {
                    case .nan: return .nan
                    case .identity: return value
                    case .identityIfFinite: return value.isFinite ? value : .nan
                    case .linear: return value.isFinite ? value * e.scale + e.offset : .nan
                    case .level: return Conversion.convert(levels[i]!).apply(value)
                    }
                }
            }
            guard let text = ByteReader.utf8String(unit) else { return nil }
            let found = Self.workOut(unit: text, typeCode: typeCode)
            if let key { remember(key, found) }
            return found.apply(value)
        }

        private func remember(_ key: Key, _ conversion: Conversion) {
            lock.withLock {
                let n = published.load(ordering: .relaxed)
                guard n < Self.limit, !(0..<n).contains(where: { entries[$0].key == key }) else { return }
                let entry: Entry
                var level: HealthModel.UnitConverter?
                switch conversion {
                case .nan: entry = Entry(key: key, kind: .nan, scale: 0, offset: 0)
                case .identity: entry = Entry(key: key, kind: .identity, scale: 0, offset: 0)
                case .identityIfFinite: entry = Entry(key: key, kind: .identityIfFinite, scale: 0, offset: 0)
                case .convert(let converter) where converter.isLinear:
                    entry = Entry(key: key, kind: .linear, scale: converter.scale, offset: converter.offset)
                case .convert(let converter):
                    entry = Entry(key: key, kind: .level, scale: 0, offset: 0)
                    level = converter
                }
                (entries + n).initialize(to: entry)
                (levels + n).initialize(to: level)
                published.store(n + 1, ordering: .releasing)
            }
        }

        /// What the general path does: `unit == canonical spelling ? value :
        /// Quantity(value, HealthUnit(unit)).doubleValue(for: canonical)`, NaN where
        /// that throws (a value that is not finite, a unit that does not parse or convert).
        static func workOut(unit: String, typeCode: UInt16) -> Conversion {
            guard case .quantity(let type)? = ObjectType(code: typeCode) else { return .nan }
            let canonical = type.canonicalUnit
            if unit == canonical.spelling { return .identity }
            guard let u = try? HealthUnit(unit) else { return .nan }
            if canonical == u { return .identityIfFinite }
            guard let converter = try? u.converter(to: canonical) else { return .nan }
            return .convert(converter)
        }
    }
}
