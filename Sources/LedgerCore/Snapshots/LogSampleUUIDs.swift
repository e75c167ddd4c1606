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
/// says) and kept: a UUID read once is never read again, so a check and the fold that
/// follows it see the same answer. The last record read is kept too, so that a walk in
/// slot order (an import of the same export again) reads each record once.
package final class LogSampleUUIDs: Sendable {
    private let reader: LogReader
    /// slot → UUID, for every slot read.
    private let known = Locked<[UInt32: UUID]>([:])
    /// The last save read: its offset and its samples' headers, flattened.
    private let lastRecord = Locked<(offset: UInt64, headers: [SampleCodec.Header])?>(nil)

    package init(reader: LogReader) { self.reader = reader }

    /// The UUID of the sample at `position` of the save at `recordOffset`, which is
    /// `slot`'s, of type `typeCode` from `start` to `end`.
    func uuid(slot: UInt32, recordOffset: UInt64, position: UInt32, typeCode: UInt16, start: Double,
              end: Double) throws(SampleIndex.UUIDUnreadable) -> UUID {
        if let uuid = known.withLock({ $0[slot] }) { return uuid }
        let headers = try headers(at: recordOffset, slot: slot)
        guard Int(position) < headers.count else {
            throw SampleIndex.UUIDUnreadable(slot: slot, reason: "the save at byte \(recordOffset) has \(headers.count) samples, "
                                             + "the index says position \(position)")
        }
        let h = headers[Int(position)]
        guard h.typeCode == typeCode, h.start.bitPattern == start.bitPattern, h.end.bitPattern == end.bitPattern else {
            throw SampleIndex.UUIDUnreadable(slot: slot, reason: "the save at byte \(recordOffset) holds another sample "
                                             + "at position \(position) than the index says")
        }
        known.withLock { $0[slot] = h.uuid }
        return h.uuid
    }

    /// The flattened sample headers of the save at `offset`.
    private func headers(at offset: UInt64, slot: UInt32) throws(SampleIndex.UUIDUnreadable) -> [SampleCodec.Header] {
        if let held = lastRecord.withLock({ $0 }), held.offset == offset { return held.headers }
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
        lastRecord.withLock { $0 = (offset, headers) }
        return headers
    }
}
