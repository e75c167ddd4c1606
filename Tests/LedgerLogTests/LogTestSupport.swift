import Foundation
import LedgerLog
@_exported import TestSupport

/// Reads every record of a ledger folder.
func allRecords(_ fs: any LogFileSystem) throws -> [StoredRecord] {
    var out: [StoredRecord] = []
    try LogReader(fs).forEachRecord { out.append(try $0.stored()); return true }
    return out
}

