import AppleHealthImport
import Foundation
import LedgerCore
import LedgerLog

/// An Apple Health export imported into a ledger at a location, as a transaction:
/// what is refused is refused before anything is written, and a failed import leaves
/// the ledger as it was (an existing one keeps the aborted import, append-only; one
/// this import created in a folder is removed; a new PostgreSQL ledger keeps the
/// aborted import).
package enum AppleHealthLedgerImport {
    /// Into an existing ledger. What the import refuses (an older export, another
    /// person's) is refused before the ledger is opened for writing — over
    /// projections loaded without a writer —, since opening for writing writes (it
    /// aborts a killed import, rule E11): a refused import leaves every byte as it
    /// was. The importer checks again once it holds the lock. A failure before the
    /// import appended anything gives the ledger up without a seal (`abandon`); one
    /// after (its `importAborted` durable) closes it. An existing ledger keeps an
    /// aborted import (append-only), and every projection as it was.
    package static func intoExisting(_ source: ExportSource, options: ImportOptions, location: LedgerLocation,
                                      open: () throws -> Ledger) async throws -> ImportSummary {
        try await checkRefusal(source, options: options, fs: location.fileSystem())
        let ledger = try open()
        let opened = await ledger.lastSequence
        do {
            let summary = try await AppleHealthImporter.run(source, into: ledger, options: options)
            try await ledger.close()
            return summary
        } catch {
            if await ledger.lastSequence == opened {
                // Nothing of this import was written: no seal either. What opening wrote
                // (a killed import's abort) is made durable; it would be written again anyway.
                try? await ledger.sync()
                ledger.abandon()
            } else {
                try? await ledger.close()
            }
            throw error
        }
    }

    /// Throws the import's refusal, judged over the ledger's projections loaded
    /// without a writer (mapped: no more read than a query reads). A refusal over a
    /// mapped snapshot found damaged is not trusted: the writer's own check decides.
    static func checkRefusal(_ source: ExportSource, options: ImportOptions, fs: any LogFileSystem) async throws {
        guard !options.force else { return }
        try await AppleHealthImporter.refusal(source, over: try ReadOnlyLedger(fs, reader: try LogReader(fs)), options: options)
    }

    /// Into a new ledger, created here. If the import fails, the ledger is removed —
    /// the folder, if this command made it, else every entry the folder did not hold
    /// before (an empty folder is left empty) — **while this command still holds its
    /// lock**: a writer waiting for the lock then finds no ledger, rather than one it
    /// writes into (acknowledged) just before it is removed.
    package static func intoNew(_ source: ExportSource, options: ImportOptions, location: LedgerLocation) async throws -> ImportSummary {
        let fs = try location.fileSystem()
        var createdIn: (folder: String, entriesBefore: Set<String>?)?
        if fs is PosixFileSystem {
            createdIn = (fs.path, fs.folderExists() ? Set(try FileManager.default.contentsOfDirectory(atPath: fs.path)) : nil)
        }
        let ledger = try Ledger.create(fs)
        do {
            let summary = try await AppleHealthImporter.run(source, into: ledger, options: options)
            try await ledger.close()
            return summary
        } catch {
            if let createdIn {
                testPauseBeforeRemovingCreatedLedger()
                Self.removeCreatedLedger(createdIn.folder, entriesBefore: createdIn.entriesBefore)
                ledger.abandon()  // the lock released only now, with nothing left to lock
            } else {
                try? await ledger.close()
            }
            throw error
        }
    }

    /// Tests: with `HEALTHLEDGER_TEST_PAUSE_BEFORE_REMOVING_CREATED_LEDGER` set, says so
    /// on stderr and waits until standard input ends.
    static func testPauseBeforeRemovingCreatedLedger() {
        guard ProcessInfo.processInfo.environment["HEALTHLEDGER_TEST_PAUSE_BEFORE_REMOVING_CREATED_LEDGER"] != nil else { return }
        FileHandle.standardError.write(Data("healthledger: test pause: removing the ledger this import created\n".utf8))
        _ = FileHandle.standardInput.readDataToEndOfFile()
    }

    /// Removes the ledger a failed import created in `folder`: the folder itself when
    /// it did not exist before (`entriesBefore` nil), else the entries it did not hold.
    static func removeCreatedLedger(_ folder: String, entriesBefore: Set<String>?) {
        guard let before = entriesBefore else {
            try? FileManager.default.removeItem(atPath: folder)
            return
        }
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where !before.contains(entry) {
            try? FileManager.default.removeItem(atPath: folder + "/" + entry)
        }
    }
}
