/// Where a data key belongs: one key per (source, type, UTC month).
///
/// Why this scope (DESIGN.md, "Keys and erasure"): every erasure the owner may ask for
/// is a set of whole scopes, or a set of whole scopes plus the re-keying of a few:
/// - a source (an app, or one import): every scope with that `source`;
/// - a type: every scope with that `type`;
/// - a range of days: the scopes of the months it touches; the months only partly
///   inside the range are re-keyed (their surviving records sealed under a new key of
///   the same scope, `KeyStore.rotate`) before the old key is destroyed;
/// - the whole person: every key.
///
/// Invariant: a scope is plain data; two scopes are the same scope exactly when their
/// four fields are equal. Its stored form is 23 bytes (`KeyStoreFile`).
package struct KeyScope: Hashable, Sendable, CustomStringConvertible {
    /// The app or import whose records the key seals.
    package var source: KeySource
    /// The record's type code (the ledger's u16 type ordinal; the lead's mapping).
    package var type: UInt16
    /// The UTC month of the record's start date.
    package var month: UTCMonth

    package init(source: KeySource, type: UInt16, month: UTCMonth) {
        self.source = source
        self.type = type
        self.month = month
    }

    package var description: String { "\(source)/type \(type)/\(month)" }
}

/// A source of records: an app (by the ledger's ordinal for it, or any 16-byte id the
/// ledger gives it) or one import (its 16-byte import id).
///
/// Invariant: the id is exactly 16 bytes, held as two little-endian words (bytes 0–7
/// and 8–15), so a source hashes and compares without an allocation.
package struct KeySource: Hashable, Sendable, CustomStringConvertible {
    /// What kind of source; its raw value is the byte stored in the file.
    package enum Kind: UInt8, Sendable {
        /// An app writing through the store API (or the owner's own writes).
        case app = 1
        /// One Apple Health import (or another bulk import) as a whole: its own events
        /// (the export's `<Me>`, the elements it kept).
        case importRun = 2
        /// One app's records brought by one import: the id is the import id's first 8
        /// bytes, then the app's ordinal (u64 LE). So erasing an imported source, or
        /// one import, is whole keys either way.
        case importedApp = 3
    }

    package let kind: Kind
    /// Bytes 0–7 of the id, little-endian.
    let low: UInt64
    /// Bytes 8–15 of the id, little-endian.
    let high: UInt64

    /// Bytes in a source id.
    package static let idByteCount = 16

    /// A source from its kind and 16-byte id.
    /// - Throws: `KeyStoreError.badSourceID` for any other count.
    package init(kind: Kind, id: some Collection<UInt8>) throws(KeyStoreError) {
        let bytes = Array(id)
        guard bytes.count == Self.idByteCount else { throw .badSourceID(byteCount: bytes.count) }
        self.init(kind: kind, low: ByteCursor.word64(bytes, at: 0), high: ByteCursor.word64(bytes, at: 8))
    }

    init(kind: Kind, low: UInt64, high: UInt64) {
        self.kind = kind
        self.low = low
        self.high = high
    }

    /// An app by the ledger's ordinal for it: the id is the ordinal, little-endian, then
    /// eight zero bytes.
    package static func app(ordinal: UInt64) -> KeySource {
        KeySource(kind: .app, low: ordinal, high: 0)
    }

    /// One app's records brought by the import `importId` (its 16 bytes; the first 8
    /// are kept) .
    package static func importedApp(importId: some Collection<UInt8>, ordinal: UInt64) -> KeySource {
        KeySource(kind: .importedApp, low: ByteCursor.word64(Array(importId), at: 0), high: ordinal)
    }

    /// The app ordinal of an `app` or `importedApp` source (nil for an import's own).
    package var appOrdinal: UInt64? {
        switch kind {
        case .app: low
        case .importedApp: high
        case .importRun: nil
        }
    }

    /// Whether this source's records came with the import `importId`: its own events,
    /// or an app's records it brought.
    package func belongs(toImport importId: some Collection<UInt8>) -> Bool {
        let bytes = Array(importId)
        guard bytes.count == Self.idByteCount else { return false }
        switch kind {
        case .app: return false
        case .importRun: return low == ByteCursor.word64(bytes, at: 0) && high == ByteCursor.word64(bytes, at: 8)
        case .importedApp: return low == ByteCursor.word64(bytes, at: 0)
        }
    }

    /// The 16 bytes of the id.
    package var id: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(Self.idByteCount)
        ByteWriter.append(low, to: &out)
        ByteWriter.append(high, to: &out)
        return out
    }

    package var description: String {
        let digits = Array("0123456789abcdef".utf8)
        let hex = String(decoding: id.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
        return (kind == .app ? "app:" : kind == .importRun ? "import:" : "imported:") + hex
    }
}

/// A month of the UTC calendar (proleptic Gregorian), as `year * 12 + (month - 1)`.
///
/// Invariant: `index` is any UInt32; `year` is `index / 12` and `month` is
/// `index % 12 + 1`, so every index is a valid month of years 0 to 357,913,941.
package struct UTCMonth: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// `year * 12 + (month - 1)`.
    package let index: UInt32

    package init(index: UInt32) { self.index = index }

    /// The month `month` (1–12) of `year` (0 or later).
    /// - Throws: `KeyStoreError.badMonth` for a month outside 1–12 or a year outside the range.
    package init(year: Int, month: Int) throws(KeyStoreError) {
        guard (1...12).contains(month), year >= 0, year <= Int(UInt32.max / 12) - 1 else {
            throw .badMonth(year: year, month: month)
        }
        index = UInt32(year * 12 + month - 1)
    }

    /// The UTC month holding the instant `nanoseconds` after 1970-01-01T00:00:00Z (the
    /// log's time unit). Every Int64 is in years 1677–2262, so this cannot fail.
    package init(containingNanoseconds nanoseconds: Int64) {
        self.init(daysSince1970: nanoseconds >= 0 ? nanoseconds / 86_400_000_000_000 : (nanoseconds + 1) / 86_400_000_000_000 - 1)
    }

    /// The UTC month holding the day `day` days after 1970-01-01 (negative: before);
    /// days of years 0 to 357,913,941 (about ±130 billion days) only.
    package init(daysSince1970 day: Int64) {
        // Days to civil date (H. Hinnant, "chrono-compatible low-level date algorithms").
        let z = day + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        assert(year >= 0 && (1...12).contains(month))
        index = UInt32(year * 12 + month - 1)
    }

    /// The first day of the month, in days since 1970-01-01 (proleptic Gregorian, as
    /// `init(daysSince1970:)` reads them; H. Hinnant's days-from-civil).
    package var firstDaySince1970: Int64 {
        let m = Int64(month), y = Int64(year) - (m <= 2 ? 1 : 0)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    package var year: Int { Int(index / 12) }
    package var month: Int { Int(index % 12) + 1 }

    package static func < (a: UTCMonth, b: UTCMonth) -> Bool { a.index < b.index }

    /// `2026-12`.
    package var description: String {
        let m = month
        let y = String(year)
        return String(repeating: "0", count: max(0, 4 - y.count)) + y + (m < 10 ? "-0" : "-") + String(m)
    }
}
