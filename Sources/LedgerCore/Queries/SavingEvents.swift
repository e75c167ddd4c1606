import Foundation
import HealthModel
import LedgerLog

/// The event that saved each sample: the sequence number and time of the log record
/// its index entry points at, read from the record's 32-byte header (never the
/// payload), each record once while the cache holds it. What a FHIR Provenance names.
package final class SavingEvents {
    /// A sample's saving event.
    package struct Event: Sendable, Equatable {
        /// The record's sequence number (the leaf `sequence - 1` of the Merkle tree).
        package let sequence: UInt64
        /// Where the record starts in the log (samples saved together share it).
        package let offset: UInt64
        /// When it was recorded.
        package let recorded: Date
    }

    private let index: SampleIndex
    private let file: any LogFile
    private var cache: [UInt64: Event] = [:]

    fileprivate init(index: SampleIndex, fs: any LogFileSystem, ledgerId: UUID) throws {
        self.index = index
        file = try fs.open(LogWriter.logFileName, .readOnly)
        let found: UUID
        do { found = try LogFileHeader.read(from: file, path: fs.path).ledgerId } catch {
            file.close()
            throw error
        }
        guard found == ledgerId else {
            file.close()
            throw ChangeFeedError.ledgerReplaced(path: fs.path, found: found, expected: ledgerId)
        }
    }

    deinit { file.close() }

    /// The event that saved `uuid`; nil when the ledger holds no such sample.
    package func event(of uuid: UUID) throws -> Event? {
        guard let slot = try index.slot(of: uuid) else { return nil }
        let offset = index.entry(slot).recordOffset
        if let known = cache[offset] { return known }
        var head = [UInt8](repeating: 0, count: LogFormat.recordHeaderLength)
        let got = try head.withUnsafeMutableBytes { try file.read(into: $0, at: offset) }
        guard got == head.count else {
            throw QueryError.indexDisagrees(slot: slot, reason: "the log ends before the record at byte \(offset)")
        }
        let sequence = head[8..<16].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let nanoseconds = Int64(bitPattern: head[16..<24].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        let event = Event(sequence: sequence, offset: offset, recorded: Date(timeIntervalSince1970: Double(nanoseconds) / 1e9))
        if cache.count >= 1 << 16 { cache.removeAll(keepingCapacity: true) }
        cache[offset] = event
        return event
    }
}

extension LedgerReadView {
    /// The saving events of this view's samples (`SavingEvents`).
    package func savingEvents() throws -> SavingEvents {
        try SavingEvents(index: state.samples, fs: fs, ledgerId: ledgerId)
    }

    /// The ledger's id (the log header's).
    package var ledgerIdentifier: UUID { ledgerId }
}
