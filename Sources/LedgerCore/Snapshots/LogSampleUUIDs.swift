import Foundation
import LedgerLog

/// The UUIDs of sample slots restored from a snapshot, read from the log.
///
/// A snapshot stores no UUIDs (events/FORMAT.md, snapshot version 3): the log holds each
/// sample's UUID in the record that saved it, at the sample's position, and the slot
/// says where. Nothing reads a restored slot's UUID on the way to a query's answer; it
/// is read when a lookup by UUID meets a slot whose fingerprint matches (a delete, an
/// import's duplicate check, a rare false match of a new UUID), and for the UUIDs a
/// change feed or an audit reports.
///
/// Each UUID read is checked to be the slot's sample (type, start and end as the slot
/// says, rule S11). A record read once is kept — its samples' UUIDs, types and dates,
/// 40 bytes a sample — for the life of the open ledger: a lookup in any order reads
/// each record at most once (a re-import whose order is not the log's), and a check
/// and the fold that follows it see the same answer (the fold cannot fail).
package final class LogSampleUUIDs: Sendable {
    private let reader: LogReader
    /// The snapshot's damage record (a mapped one's): a slot read from a damaged block
    /// is zeros, and the log is never read at the offset it gives (S8).
    private let damage: SnapshotDamage?
    /// Record offset → its samples, flattened, for every save read.
    private let records = Locked<[UInt64: [Known]]>([:])

    /// What a save says of one of its samples.
    struct Known: Sendable {
        let uuid: UUID
        let start: Double
        let end: Double
        let typeCode: UInt16
    }

    package init(reader: LogReader, damage: SnapshotDamage? = nil) {
        self.reader = reader
        self.damage = damage
    }

    /// How many records were read (tests: each at most once).
    var recordsRead: Int { records.withLock { $0.count } }

    /// The UUID of the sample at `position` of the save at `recordOffset`, which is
    /// `slot`'s, of type `typeCode` from `start` to `end`.
    func uuid(slot: UInt32, recordOffset: UInt64, position: UInt32, typeCode: UInt16, start: Double,
              end: Double) throws(SampleIndex.UUIDUnreadable) -> UUID {
        if let problem = damage?.problem {
            throw SampleIndex.UUIDUnreadable(slot: slot, reason: "\(problem)", cause: problem)
        }
        let samples = try samples(at: recordOffset, slot: slot)
        guard Int(position) < samples.count else {
            throw SampleIndex.UUIDUnreadable(slot: slot, reason: "the save at byte \(recordOffset) has \(samples.count) samples, "
                                             + "the index says position \(position)")
        }
        let k = samples[Int(position)]
        guard k.typeCode == typeCode, k.start.bitPattern == start.bitPattern, k.end.bitPattern == end.bitPattern else {
            throw SampleIndex.UUIDUnreadable(slot: slot, reason: "the save at byte \(recordOffset) holds another sample "
                                             + "at position \(position) than the index says")
        }
        return k.uuid
    }

    /// The flattened samples of the save at `offset`.
    private func samples(at offset: UInt64, slot: UInt32) throws(SampleIndex.UUIDUnreadable) -> [Known] {
        if let held = records.withLock({ $0[offset] }) { return held }
        func unreadable(_ reason: String, _ cause: (any Error & Sendable)? = nil) -> SampleIndex.UUIDUnreadable {
            SampleIndex.UUIDUnreadable(slot: slot, reason: reason, cause: cause)
        }
        let record: StoredRecord
        do {
            record = try reader.record(atOffset: offset)
            try SealScopes.requireSealed(kind: record.kind, inSealedLog: reader.header.allowsSealedRecords,
                                         sealed: record.sealedKeyId != nil)
        } catch {
            throw unreadable("the record at byte \(offset): \(error)", error)
        }
        guard record.kind == EventKind.samplesSaved.rawValue else {
            throw unreadable("the record at byte \(offset) is not a save (kind \(record.kind))")
        }
        var headers: [SampleCodec.Header] = []
        var strings: [String] = []
        do {
            _ = try record.payload.withUnsafeBytes { (p) throws(EventDecodingError) -> AppOrdinal in
                try EventFacts.readSave(version: record.kindVersion, payload: p, into: &headers, strings: &strings)
            }
        } catch {
            throw unreadable("the save at byte \(offset): \(error)", error)
        }
        let samples = headers.map { Known(uuid: $0.uuid, start: $0.start, end: $0.end, typeCode: $0.typeCode) }
        records.withLock { $0[offset] = samples }
        return samples
    }
}
