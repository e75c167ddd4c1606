import Foundation
import HealthModel

extension SnapshotFile {
    /// Section 33, only when some cumulative type has a live sample: the daily sums
    /// (`DailySums`, events/FORMAT.md S9), computed from the state being written —
    /// varint n · n × (u16 type code · string zone · f64 minStart · f64 maxEnd ·
    /// varint m days · (m + 1) × f64 border · m × f64 sum · (m + 1) × u8 flags), by
    /// type code, then zone. Read back as standing for the snapshot's last sequence.
    static let dailySumsSection = SnapshotSectionCodec(section: .dailySums, encode: { source, w in
        let sums = DailySums.compute(from: source.state)
        guard !sums.tables.isEmpty else { return false }
        writeDailySums(sums.tables, &w)
        return true
    }, decode: { r, contents in
        contents.dailySums = try readDailySums(&r)
    }, required: false)

    /// Section 33's payload for `tables`.
    static func writeDailySums(_ tables: [DailySums.Table], _ w: inout ByteWriter) {
        w.varint(tables.count)
        for t in tables {
            w.u16(t.typeCode)
            w.string(t.zone)
            w.f64(t.minStart)
            w.f64(t.maxEnd)
            w.varint(t.sums.count)
            for b in t.borders { w.f64(b) }
            for s in t.sums { w.f64(s) }
            for f in t.flags { w.u8(f) }
        }
    }

    /// The tables of section 33, every count and value range-checked: each type a
    /// cumulative quantity type, tables in (code, zone) order and distinct, extents and
    /// borders finite, borders ascending, the extent inside them, flags of two bits
    /// and no day after the last border.
    static func readDailySums(_ r: inout ByteReader) throws(EventDecodingError) -> [DailySums.Table] {
        let start = r.position
        func malformed(_ reason: String) -> EventDecodingError { .malformed(offset: start, reason: "daily sums: \(reason)") }
        var tables: [DailySums.Table] = []
        for _ in 0..<(try r.count(limit: 1 << 16)) {
            let code = try r.u16()
            guard case .quantity(let type)? = ObjectType(code: code), type.aggregationStyle == .cumulative else {
                throw malformed("type \(code) is not a cumulative quantity type")
            }
            let zone = try r.string()
            let minStart = try r.finite(), maxEnd = try r.finite()
            // Each day takes at least 17 bytes: a count beyond the bytes left is damage.
            let days = try r.count(limit: min(StatisticsBuckets.limit, r.remaining / 17))
            var borders: [Double] = [], sums: [Double] = [], flags: [UInt8] = []
            borders.reserveCapacity(days + 1)
            sums.reserveCapacity(days)
            flags.reserveCapacity(days + 1)
            for _ in 0...days { borders.append(try r.finite()) }
            for _ in 0..<days { sums.append(try r.f64()) }
            for _ in 0...days { flags.append(try r.u8()) }
            guard zip(borders, borders.dropFirst()).allSatisfy({ $0 <= $1 }),
                  minStart <= maxEnd, borders[0] <= minStart, maxEnd < borders[days],
                  flags.allSatisfy({ $0 & ~(DailySums.Table.present | DailySums.Table.quiet) == 0 }),
                  flags[days] & DailySums.Table.present == 0 else { throw malformed("inconsistent table") }
            if let previous = tables.last, (previous.typeCode, previous.zone) >= (code, zone) {
                throw malformed("tables out of order")
            }
            tables.append(DailySums.Table(typeCode: code, zone: zone, minStart: minStart, maxEnd: maxEnd, borders: borders,
                                          sums: sums, flags: flags))
        }
        return tables
    }
}
