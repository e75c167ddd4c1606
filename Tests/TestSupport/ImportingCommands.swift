import Foundation
import LedgerCore

extension Ledger {
    /// Appends `commands` as an import does: inside an import transaction (rule E11)
    /// that then commits, so that what only an import may do (rule E13: register an
    /// `export:` source or an imported app, decide on an imported basis, save as an
    /// imported source) is allowed. All or nothing: the first refusal aborts the
    /// transaction and is thrown. Returns the commands' events.
    @discardableResult
    package func importing(_ commands: [LedgerCommand], importId: UUID = UUID()) async throws -> [StoredEvent] {
        let t = try await beginImport(ExportImportStart(importId: importId, exportDate: nil, locale: nil, exportVersion: nil,
                                                        sourcePath: "tests", me: []))
        var stored: [StoredEvent] = []
        for result in try await appendBestEffort(commands, keepingEvents: true, in: t).results {
            switch result {
            case .success(let events): stored += events
            case .failure(let violation):
                try await abortImport(t, reason: "\(violation)")
                throw violation
            }
        }
        try await commitImport(t, absence: nil, finish: ExportImportFinish(importId: importId, counts: [],
                                                                         contentSHA256: [UInt8](repeating: 0, count: 32)))
        return stored
    }
}
