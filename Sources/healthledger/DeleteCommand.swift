import Foundation
import HealthLedger
import HealthModel

/// `healthledger delete`.
enum DeleteCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] delete (--app ID | --owner) [--reason TEXT] UUID...

        Delete objects, all or nothing. An app deletes only objects it saved, and only
        while it holds share permission for their type; the owner may delete anything.
        Deletion leaves a tombstone (the UUID and any sync identity) forever.
        A UUID listed twice is a usage error (exit 2): nothing is deleted.

        \(ExitStatus.table)
        """

    static let command = Command(name: "delete", abstract: "Delete objects (an app its own, the owner anything)", help: help) { args, global in
        if handledHelp(&args, help) { return }
        guard let identity = try Identity.read(&args) else { return }
        let reason = try args.option("--reason")
        let uuids = try args.remainingPositionals().map { text -> UUID in
            guard let u = UUIDText.parse(text) else { throw CLIError.invalidInput("invalidUUID: '\(text)'") }
            return u
        }
        try args.finish()
        guard !uuids.isEmpty else { throw CLIError.usage("delete needs at least one UUID") }
        var seen = Set<UUID>()
        for u in uuids where !seen.insert(u).inserted {
            throw CLIError.usage("\(u.uuidString) is listed twice; list each object once")
        }
        try await withStore(global, identity) { _, store, owner in
            if let store { try await store.delete(uuids, reason: reason) } else { try await owner.delete(uuids, reason: reason) }
        }
        Output.line(global.json ? "{\"deleted\":\(uuids.count)}" : "deleted \(uuids.count) object\(uuids.count == 1 ? "" : "s")")
    }
}
