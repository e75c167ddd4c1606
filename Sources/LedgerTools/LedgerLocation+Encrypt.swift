import Foundation
import Glibc
import HealthModel
import LedgerCore
import LedgerKeys
import LedgerLog

/// What `encrypt SRC DST` did.
package struct LedgerEncryptReport: Sendable {
    package let from: String
    package let to: String
    /// The source's events copied (its seals are not events).
    package let events: UInt64
    /// The source's chain head (hex), recorded in the copy's first event.
    package let sourceChainHead: String
    /// The copy's chain head (hex) once closed.
    package let chainHead: String
    /// Bytes at the source's end that no later batch proves durable (a torn last
    /// write): not copied, as no reader of the source reads them.
    package let incompleteTail: LogDamage?
}

extension LedgerLocation {
    /// Copies this plain ledger into a new encrypted ledger at `destination` (its key
    /// file made new, as `init --encrypt` makes it), event by event: the copy's first
    /// event (`encryptedFrom`, rule E17) names this ledger and its chain head; every
    /// event follows at its own time, laid out and sealed as the encrypted ledger's
    /// writer lays out its own, held to the rules and folded (an aborted import's
    /// passed over, as replay passes over it). The source is read, never written: its
    /// chain is checked first, whole.
    /// - Throws: `encryptionUnsupported` (PostgreSQL at either end — encrypt into a
    ///   folder, then `copy` it into the database — or a source already encrypted:
    ///   `copy` copies those); `ToolError.sourceOpenImport` for a source that
    ///   ends inside an import still open (open it for writing once: its writer aborts
    ///   it); what `createEncrypted` throws; a rule an event breaks (`incompleteCopy`);
    ///   `keyFileExists` or `ledgerExists` for a key file or ledger made at PATH or DST
    ///   meanwhile. The copy is made under names of its own and published whole at the
    ///   end (`publish`): stopped anywhere, even by `kill -9`, nothing stands at DST or
    ///   PATH (what a killed copy left under its own names is removed by the next).
    package func encrypt(to destination: LedgerLocation, now: Int64 = LogClock.now()) async throws -> LedgerEncryptReport {
        guard !isDatabase, !destination.isDatabase else {
            throw LedgerLocationError.encryptionUnsupported("usage: encrypt copies a ledger folder into a new folder; for PostgreSQL, encrypt into a folder, then copy that into the database")
        }
        let fs = PosixFileSystem(path: text)
        guard fs.exists(LogWriter.logFileName) else { throw LogError.ledgerNotFound(path: text) }
        let reader = try LogReader(fs, keys: .some(nil))
        guard !reader.header.allowsSealedRecords else {
            throw LedgerLocationError.encryptionUnsupported("usage: \(text) is encrypted already (copy copies it, with its keys)")
        }
        // Everything that can refuse the copy, before anything is made.
        let keyFile = try Self.checkDestination(destination, source: text)
        // The whole chain, and every event held to the rules (a replay): what is copied
        // is what the source's chain head proves and what its own replay accepts.
        var firstTime: Int64?
        var events: UInt64 = 0
        let end = try reader.forEachBatch(verifyChain: true) { batch in
            batch.forEachRecord { record in
                if firstTime == nil { firstTime = record.recordedAt }
                events += 1
            }
            return true
        }
        do {
            var scratch = LedgerState()
            let outcome = try Replayer.replay(reader, into: &scratch, from: reader.start)
            if let open = outcome.openImport { throw ToolError.sourceOpenImport(importId: open.importId) }
        }
        // Made under names of its own beside DST and the key file, and published whole
        // at the end: a copy stopped part way (`kill -9` too) never stands at DST.
        let staging = Self.staging(for: destination, keyFile: keyFile)
        let ledger: Ledger
        do {
            ledger = try staging.createEncrypted(createdAt: reader.header.createdAt)
        } catch {
            Self.remove(staging)
            throw error
        }
        do {
            try await ledger.appendCopied([.encryptedFrom(LedgerOrigin(ledgerId: reader.header.ledgerId, chainHead: end.chainHead.array,
                                                                         events: events, copiedAt: now))],
                                          recordedAt: firstTime ?? now, importId: nil, applied: true)
            try await Self.copyEvents(reader, through: end, into: ledger)
            try await ledger.snapshot()  // what a reader opens from (it would replay every event otherwise)
            try await ledger.close()
            // Who read what, with the history it was read from (`audit --reads`).
            let access = AccessLog.fileSystem(ledgerPath: text)
            if access.exists(LogWriter.logFileName) {
                _ = try LogCopy.copy(from: access, to: AccessLog.fileSystem(ledgerPath: staging.text))
            }
        } catch {
            ledger.abandon()
            Self.remove(staging)
            throw ToolError.incompleteCopy(path: destination.text, cause: "\(error)")
        }
        try Self.publish(staging, as: destination, keyFile: keyFile)
        let copy = try LogReader(try destination.fileSystem())
        let copied = try copy.forEachBatch(verifyChain: true) { _ in true }
        return LedgerEncryptReport(from: text, to: destination.text, events: events, sourceChainHead: end.chainHead.hex,
                                   chainHead: copied.chainHead.hex, incompleteTail: end.incompleteTail)
    }

    /// Refuses, before anything is made: a destination inside the source (or the source
    /// itself), one that is not an empty folder, a key file that exists (a link too).
    /// Returns the key file's path.
    static func checkDestination(_ destination: LedgerLocation, source: String) throws -> String {
        guard let keyFile = destination.keyFile else {
            throw LedgerLocationError.keyFile("usage: encrypt needs --key-file PATH (or HEALTHLEDGER_KEY_FILE): where to write the new key-encryption key")
        }
        let fm = FileManager.default
        let sourcePath = URL(fileURLWithPath: source).standardizedFileURL.resolvingSymlinksInPath().path
        let destinationURL = URL(fileURLWithPath: destination.text).standardizedFileURL
        let resolved = destinationURL.deletingLastPathComponent().resolvingSymlinksInPath()
            .appendingPathComponent(destinationURL.lastPathComponent).path
        if resolved == sourcePath { throw ToolError.ledgerExists(path: destination.text) }
        if resolved.hasPrefix(sourcePath + "/") {
            throw ToolError.destinationInsideSource(source: source, destination: destination.text)
        }
        var isFolder: ObjCBool = false
        let exists = fm.fileExists(atPath: destination.text, isDirectory: &isFolder)
        if exists {
            if PosixFileSystem(path: destination.text).exists(LogWriter.logFileName) { throw ToolError.ledgerExists(path: destination.text) }
            guard isFolder.boolValue, (try? fm.contentsOfDirectory(atPath: destination.text))?.isEmpty == true else {
                throw ToolError.destinationNotEmpty(path: destination.text)
            }
            // The copy is made beside DST and renamed onto it: DST must be a folder of
            // its parent's file system, named by itself (not a link, a mount point, `.`).
            var own = stat(), parent = stat()
            let name = destinationURL.lastPathComponent
            guard lstat(destination.text, &own) == 0, (own.st_mode & S_IFMT) == S_IFDIR, name != ".", name != "..",
                  stat(destinationURL.deletingLastPathComponent().path, &parent) == 0, parent.st_dev == own.st_dev else {
                throw LedgerLocationError.encryptionUnsupported("usage: encrypt makes DST beside it and renames it into place: \(destination.text) is a link, a mount point or not named by itself; give a new folder inside it")
            }
        }
        var info = stat()
        if lstat(keyFile, &info) == 0 { throw ToolError.keyFileExists(path: keyFile) }
        return keyFile
    }

    /// Where the copy is made before it is published: a hidden folder beside DST and a
    /// key file beside PATH, both named for this process
    /// (`.NAME.encrypting-PID`, `PATH.encrypting-PID`). Those a process no longer
    /// running left behind (`kill -9`) are removed first.
    static func staging(for destination: LedgerLocation, keyFile: String) -> LedgerLocation {
        let url = URL(fileURLWithPath: destination.text).standardizedFileURL
        let parent = url.deletingLastPathComponent().path
        let prefix = "." + url.lastPathComponent + ".encrypting-"
        let keyURL = URL(fileURLWithPath: keyFile).standardizedFileURL
        let keyPrefix = keyURL.lastPathComponent + ".encrypting-"
        /// One this user's process, no longer running, left: of this user, a real folder
        /// (or file), never a link.
        func leftBehind(_ folder: String, _ name: String, _ prefix: String, kind: mode_t) -> Bool {
            guard name.hasPrefix(prefix), let pid = Int32(name.dropFirst(prefix.count)), pid > 0 else { return false }
            var info = stat()
            guard lstat(folder + "/" + name, &info) == 0, info.st_uid == getuid(), (info.st_mode & S_IFMT) == kind else { return false }
            return kill(pid, 0) != 0 && errno == ESRCH
        }
        let fm = FileManager.default
        for name in (try? fm.contentsOfDirectory(atPath: parent)) ?? [] where leftBehind(parent, name, prefix, kind: S_IFDIR) {
            try? fm.removeItem(atPath: parent + "/" + name)
        }
        let keyFolder = keyURL.deletingLastPathComponent().path
        for name in (try? fm.contentsOfDirectory(atPath: keyFolder)) ?? [] where leftBehind(keyFolder, name, keyPrefix, kind: S_IFREG) {
            unlink(keyFolder + "/" + name)
        }
        let pid = getpid()
        return LedgerLocation(parent + "/" + prefix + String(pid), keyFile: keyFile + ".encrypting-" + String(pid))
    }

    /// Publishes the finished copy: its key file written to PATH (created new: a key
    /// file made there meanwhile refuses it), then its folder renamed to DST (which
    /// replaces only an empty folder: a ledger another process put there meanwhile
    /// refuses it, and the key file just written goes). Each step durable.
    /// - Throws: `ToolError.keyFileExists`, `ToolError.ledgerExists`; nothing of the
    ///   copy is left then.
    static func publish(_ staging: LedgerLocation, as destination: LedgerLocation, keyFile: String) throws {
        guard let stagedKey = staging.keyFile else { preconditionFailure("a staged copy has its key file") }
        // Written new (as `init --encrypt` writes one: never through a link, no hard
        // link needed), durable, before the ledger that needs it appears.
        do {
            try KeyEncryptionKey.load(from: stagedKey).write(to: keyFile)
        } catch {
            remove(staging)
            if case .keyFileExists = error { throw ToolError.keyFileExists(path: keyFile) }
            throw LedgerLocationError.keyFile("the key file \(keyFile) could not be made: \(error)")
        }
        unlink(stagedKey)
        guard rename(staging.text, destination.text) == 0 else {
            let e = errno
            unlink(keyFile)
            remove(staging)
            if e == ENOTEMPTY || e == EEXIST || e == ENOTDIR || e == EISDIR { throw ToolError.ledgerExists(path: destination.text) }
            throw ToolError.incompleteCopy(path: destination.text, cause: "the finished copy could not be renamed into place: \(String(cString: strerror(e)))")
        }
        let parent = URL(fileURLWithPath: destination.text).standardizedFileURL.deletingLastPathComponent().path
        try PosixFileSystem(path: parent).syncFolder(nil)
    }

    /// Removes a staged copy: its folder and key file.
    static func remove(_ staging: LedgerLocation) {
        try? FileManager.default.removeItem(atPath: staging.text)
        if let key = staging.keyFile { unlink(key) }
    }

    /// One source batch as the copy appends it.
    private struct CopiedBatch {
        let events: [Event]
        let recordedAt: Int64
        let importId: UUID?
        let applied: Bool
    }

    /// Copies the source's batches in chunks of about 20,000 events (read, then
    /// appended, then read on from where the reading stopped), so memory stays bounded.
    private static func copyEvents(_ reader: LogReader, through end: LogReader.ScanEnd, into ledger: Ledger) async throws {
        var position = reader.start
        var registry = AppRegistry()
        // The import transaction the records are in: its id, whether it applies, its last event.
        var transaction: (importId: UUID, applied: Bool, through: UInt64)?
        while position.offset < end.endOffset {
            var chunk: [CopiedBatch] = []
            var count = 0
            var problem: (any Error)?
            _ = try reader.forEachBatch(position: position) { batch in
                guard batch.endOffset <= end.endOffset else { return false }
                let batchStart = position
                position = batch.endPosition
                guard !batch.isSeal else { return true }
                var events: [Event] = []
                var recordedAt: Int64 = 0
                var importId: UUID?
                var applied = true
                batch.forEachRecord { record in
                    guard problem == nil else { return }
                    recordedAt = record.recordedAt
                    do {
                        let event = try EventCodec.decode(record, source: registry.source)
                        if case .appRegistered(let ordinal, let r) = event { registry.register(ordinal, r) }
                        if case .importStarted(let start) = event, start.isTransaction {
                            switch ImportBrackets.close(of: start.importId, startedAt: record.sequence, scanningFrom: batchStart, reader: reader) {
                            case .finished(let at, _)?: transaction = (start.importId, true, at)
                            case .aborted(let at, _)?: transaction = (start.importId, false, at)
                            case nil: throw ToolError.sourceOpenImport(importId: start.importId)
                            }
                        }
                        if let t = transaction {
                            importId = t.importId
                            applied = t.applied
                            if record.sequence >= t.through { transaction = nil }
                        } else {
                            importId = nil
                            applied = true
                        }
                        events.append(event)
                    } catch {
                        problem = error
                    }
                }
                if let problem { throw problem }
                chunk.append(CopiedBatch(events: events, recordedAt: recordedAt, importId: importId, applied: applied))
                count += events.count
                return count < 20_000
            }
            for b in chunk {
                try await ledger.appendCopied(b.events, recordedAt: b.recordedAt, importId: b.importId, applied: b.applied)
            }
        }
    }
}
