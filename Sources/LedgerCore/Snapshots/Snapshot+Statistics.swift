import Foundation
import HealthModel

/// The statistics projection in a snapshot (events/FORMAT.md, Part 3):
/// - section 8 `sourcePriorities` (small): count varint · (typeCode u16 · n varint ·
///   bundle string × n) × count · grantCount varint · app ordinal varint × grantCount;
/// - section 30 `statisticsValues` (column): one f64 per slot, the canonical value
///   (NaN bits for a sample that is not a quantity);
/// - section 31 `statisticsUserEntered` (column): one byte per slot, 1 for `HKWasUserEntered`.
/// A snapshot without sections 30 and 31 but with samples (written before this
/// projection existed) is not used: the loader replays instead.
extension SnapshotFile {
    static func statisticsSections(_ p: StatisticsProjection) -> (small: [UInt8], values: ColumnSource, flags: ColumnSource) {
        var w = ByteWriter(capacity: 64)
        let codes = p.priorities.keys.sorted()
        w.varint(codes.count)
        for code in codes {
            w.u16(code)
            w.varint(p.priorities[code]!.count)
            for s in p.priorities[code]! { w.string(s) }
        }
        w.varint(p.grantOrder.count)
        for o in p.grantOrder { w.varint(UInt64(o)) }
        return (w.bytes, ColumnSource(p.values), ColumnSource(p.userEntered))
    }

    /// `checkFlags`: every flag is checked to be 0 or 1 now (a mapped column is not
    /// read whole; a byte other than 0 reads as "entered by hand").
    static func readStatistics(_ small: [UInt8]?, values: Column<Double>?, flags: Column<UInt8>?, slotCount: Int,
                               checkFlags: Bool = true) throws -> StatisticsProjection {
        guard let values, let flags else {
            guard slotCount == 0 else {
                throw EventDecodingError.malformed(offset: 0, reason: "no statistics projection (written by an older version)")
            }
            return StatisticsProjection()
        }
        guard values.count == slotCount, flags.count == slotCount,
              !checkFlags || flags.withUnsafeBufferPointer({ $0.allSatisfy { $0 <= 1 } }) else {
            throw EventDecodingError.malformed(offset: 0, reason: "statistics columns do not match the slots")
        }
        var priorities: [UInt16: [String]] = [:]
        var grant: [AppOrdinal] = []
        if let small {
            try small.withUnsafeBytes { raw throws in
                var r = ByteReader(raw)
                for _ in 0..<(try r.count(limit: 1 << 16)) {
                    let code = try r.u16()
                    var list: [String] = []
                    for _ in 0..<(try r.count(limit: SourcePriority.maxSources)) { list.append(try r.string()) }
                    priorities[code] = list
                }
                for _ in 0..<(try r.count(limit: 1 << 24)) { grant.append(AppOrdinal(try r.count(limit: Int(UInt32.max)))) }
                try r.finish()
            }
        }
        return StatisticsProjection(values: values, userEntered: flags, priorities: priorities, grantOrder: grant)
    }
}
