import Foundation
import HealthLedger
import LedgerReporting
import LedgerTools

/// `healthledger encrypt SRC DST`: a plain ledger copied into a new encrypted one (issue 32).
enum EncryptCommand {
    static let help = """
        USAGE: healthledger --key-file PATH encrypt SRC DST [--json]

        Copy the plain ledger folder SRC into a new encrypted ledger folder DST, whose
        key-encryption key is written new to PATH (--key-file, or HEALTHLEDGER_KEY_FILE;
        0600, never overwriting a file), as `init --encrypt` writes it. SRC is read, never
        written: its whole chain is checked first. DST's first event (encryptedFrom)
        names SRC's ledger id, its chain head and how many events it had, so the copy
        points at the history it came from; every event of SRC follows at its own time,
        sealed as an encrypted ledger seals its own (a save split by key scope), held to
        the rules and folded again (an aborted import's events passed over, as replay
        does). DST's chain differs from SRC's (its bytes are ciphertext), so checkpoints
        of SRC do not carry over; SRC stays as it was, to be kept or erased (deleting its
        folder) by its owner.

        SRC's access log (who read what, `audit --reads`) is copied with it. SRC is
        checked whole before anything is made — its chain, and a replay holding every
        event to the rules. The copy is made under names of its own beside DST and PATH
        (.NAME.encrypting-PID, PATH.encrypting-PID) and only then moved to them, so a copy
        that stops part way, even killed, leaves no DST and no key file (the next encrypt
        there removes what a killed one left). A torn last write at SRC's end (what no
        read of SRC sees either) is not copied, and a warning says so.

        Exit 2 when SRC is encrypted already (use copy), DST lies inside SRC, DST is a
        link or a mount point (the copy is renamed onto it), or either is a PostgreSQL URL; 5 when DST holds a ledger or anything else, PATH exists, or
        SRC ends inside an open import (open it for writing once: its writer aborts the
        import); 6 when SRC is damaged or breaks a rule; 1 when the copy stopped part way.

        \(ExitStatus.table)
        """

    static let command = Command(name: "encrypt", abstract: "Copy a plain ledger into a new encrypted one", help: help) { args, global in
        if handledHelp(&args, help) { return }
        let source = try args.required("SRC")
        let destination = try args.required("DST")
        try args.finish()
        guard let keyFile = global.reads.location.keyFile else {
            throw CLIError.usage("encrypt needs --key-file PATH (or HEALTHLEDGER_KEY_FILE): where to write DST's new key-encryption key")
        }
        let report = try await LedgerLocation(source).encrypt(to: LedgerLocation(destination, keyFile: keyFile))
        if let tail = report.incompleteTail {
            Output.error("healthledger: warning: SRC ends with an incomplete batch (\(tail)); the copy stops before it, as every read of SRC does")
        }
        if global.json {
            var o = JSONObject()
            o.set("from", report.from)
            o.set("to", report.to)
            o.set("events", report.events)
            o.set("sourceChainHead", report.sourceChainHead)
            o.set("chainHead", report.chainHead)
            o.set("keyFile", keyFile)
            Output.line(o.string)
        } else {
            Output.line("encrypted \(report.events) events of \(report.from) into \(report.to) (source chain head \(report.sourceChainHead)); "
                        + "its key-encryption key is in \(keyFile): without it the ledger cannot be read")
        }
    }
}
