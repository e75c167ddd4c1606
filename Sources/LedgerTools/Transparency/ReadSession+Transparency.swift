import LedgerCore
import LedgerLog

extension ReadSession {
    /// The ledger's origin line (`healthledger/<ledger id>`), from its header.
    package func origin() throws -> String {
        TreeCheckpoint.origin(of: try reader().1)
    }

    /// The ledger's transparency log, brought up to the log's end.
    package func transparencyLog() throws -> TransparencyLog {
        let (fs, reader) = try reader()
        return try TransparencyLog(fs, reader: reader, note: note)
    }
}

extension ReadSession {
    /// The sequence number of the record at byte `offset` of the log (a sample's
    /// saving event, from the sample index's offset).
    package func sequence(ofRecordAt offset: UInt64) throws -> UInt64 {
        try reader().1.record(atOffset: offset).sequence
    }
}
