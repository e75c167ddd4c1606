import LedgerLog
import LedgerCore

extension ReadSession {
    /// Verify's verdict on the ledger (`IntegrityReport`): the log, every event and
    /// rule, the snapshots, the access log; with `checkpointPath`, that the ledger
    /// extends that checkpoint (its signature checked by the verifier key given as
    /// `verifierKey`, text or file, else the ledger's own `keys/checkpoint.pub`).
    package func integrity(checkpointPath: String?, verifierKey: String?,
                           progress: ((ReplayProgress) -> Void)? = nil) throws -> IntegrityReport {
        let fs = try fileSystem()  // first: a location that cannot open is the error to tell
        let claim = try checkpointPath.map { path -> IntegrityReport.CheckpointClaim in
            let (note, checkpoint) = try TransparencyLog.readCheckpoint(path)
            return IntegrityReport.CheckpointClaim(note: note, checkpoint: checkpoint,
                                                   verifier: try CheckpointKeys.verifier(localFolder: location.localFolder(),
                                                                                         option: verifierKey))
        }
        return try IntegrityReport.check(fs, checkpoint: claim, accessLogFolder: { try self.location.localFolder() },
                                         progress: progress)
    }

    /// `verify --structure`: the log's bytes, the tree and a checkpoint, without
    /// decoding any event (no key needed for an encrypted ledger).
    package func structure(checkpointPath: String?, verifierKey: String?) throws
        -> (log: LogVerifier.Report, problems: [IntegrityReport.Problem], notes: [String]) {
        let fs = try fileSystem()
        let claim = try checkpointPath.map { path -> IntegrityReport.CheckpointClaim in
            let (note, checkpoint) = try TransparencyLog.readCheckpoint(path)
            return IntegrityReport.CheckpointClaim(note: note, checkpoint: checkpoint,
                                                   verifier: try CheckpointKeys.verifier(localFolder: location.localFolder(),
                                                                                         option: verifierKey))
        }
        return try IntegrityReport.checkStructure(fs, checkpoint: claim)
    }
}
