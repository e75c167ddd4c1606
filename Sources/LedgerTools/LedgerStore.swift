import Foundation
import LedgerLog
#if HEALTHLEDGER_POSTGRES
import LedgerPostgres
#endif

/// A place that holds ledgers: a folder of ledger folders, or a PostgreSQL database.
package struct LedgerStore: Sendable {
    /// One ledger in the store.
    package struct Entry: Sendable, Equatable {
        /// Its name in the store (the folder's name, the database's ledger ID).
        package let name: String
        /// Where to open it (`--ledger`).
        package let location: String
        /// The size of its log.
        package let bytes: UInt64
    }

    package let text: String

    package init(_ text: String) { self.text = text }

    /// The ledgers the store holds, by name. A folder that does not exist is
    /// `LogError.ledgerNotFound`; a subfolder without a regular log file is no ledger.
    package func ledgers() throws -> [Entry] {
        if LedgerLocation.isDatabaseURL(text) {
            #if HEALTHLEDGER_POSTGRES
            let location = try LedgerLocation.postgresLocation(text)
            return try PostgresStore.ledgers(location).map {
                Entry(name: $0.name, location: try location.with(ledger: $0.name).description, bytes: UInt64(clamping: $0.bytes))
            }
            #else
            _ = try LedgerLocation(text).fileSystem()  // says what this build lacks
            return []
            #endif
        }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: text, isDirectory: &isFolder), isFolder.boolValue else {
            throw LogError.ledgerNotFound(path: text)
        }
        var found: [Entry] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: text).sorted() {
            let folder = (text as NSString).appendingPathComponent(name)
            let log = (folder as NSString).appendingPathComponent(LogWriter.logFileName)
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: log),
                  (attributes[.type] as? FileAttributeType) == .typeRegular else { continue }
            found.append(Entry(name: name, location: folder, bytes: (attributes[.size] as? NSNumber)?.uint64Value ?? 0))
        }
        return found
    }
}
