import Foundation
import HealthLedger
import HealthModel
import LedgerReporting

/// `healthledger init`: a new, empty ledger folder.
enum InitCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] [--tz ZONE] [--key-file PATH] init [--encrypt] [--json]

        Create a new, empty ledger (folder mode 0700, files 0600). Refuses a folder that
        already holds a ledger. The owner's time zone (age, "today", day boundaries) is
        recorded as an event when --tz or $TZ names one; `timezone ZONE` changes it.

        --encrypt     An encrypted ledger: every event holding health content (samples,
                      their metadata and devices, characteristics, activity summaries,
                      an import's <Me> and kept elements) is sealed (ChaCha20-Poly1305)
                      under a data key kept in keys/keys.bin, itself sealed under a new
                      key-encryption key written to --key-file PATH (or
                      $HEALTHLEDGER_KEY_FILE), mode 0600, never overwriting a file.
                      Every later command on this ledger needs that file the same way;
                      a copy of the ledger folder without it reveals no health content.
                      Keep the key file outside the ledger folder.

        \(ExitStatus.table)
        """

    static let command = Command(name: "init", abstract: "Create a new, empty ledger", help: help) { args, global in
        if handledHelp(&args, help) { return }
        let encrypt = args.flag("--encrypt")
        try args.finish()
        let ledger = encrypt ? try global.reads.location.createEncrypted() : try global.reads.location.create()
        if let zone = global.timeZoneOverride?.identifier ?? GlobalOptions.environmentTimeZone {
            try await OwnerStore(ledger: ledger).setTimeZone(zone)
        }
        try await ledger.close()
        if global.json {
            var o = JSONObject()
            o.set("ledger", global.ledgerPath)
            o.set("ledgerId", ledger.ledgerId.uuidString)
            if encrypt { o.set("encrypted", true) }
            Output.line(o.string)
        } else {
            Output.line("created \(encrypt ? "encrypted " : "")ledger \(ledger.ledgerId.uuidString) at \(global.ledgerPath)")
            if encrypt, let keyFile = global.reads.location.keyFile {
                Output.line("its key-encryption key is in \(keyFile): without it the ledger cannot be read")
            }
        }
    }
}
