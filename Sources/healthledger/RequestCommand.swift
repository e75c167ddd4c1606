import Foundation
import HealthLedger
import HealthModel
import LedgerReporting

/// `healthledger --app ID request` (HealthKit's requestAuthorization(toShare:read:))
/// and `request-status` (getRequestStatusForAuthorization(toShare:read:)).
enum RequestCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] --app ID request [--share T,...] [--read T,...]

        The app asks the owner for permission to share (write) and read types, as
        requestAuthorization(toShare:read:). The app must be registered with the
        purpose string each non-empty set needs (--share-purpose, --read-purpose of
        `app register`), as HealthKit demands. Types already asked for or answered are
        left out. Success means the request is recorded, not that it is granted: the
        owner answers with `authorize`.

        \(ExitStatus.table)
        """

    static let statusHelp = """
        USAGE: healthledger [--ledger PATH] --app ID request-status [--share T,...] [--read T,...] [--json]

        getRequestStatusForAuthorization(toShare:read:): shouldRequest when some type
        was never asked for nor answered (a request would show the person something),
        else unnecessary.

        \(ExitStatus.table)
        """

    static func sets(_ args: inout ArgumentList) throws -> (share: Set<ObjectType>, read: Set<ObjectType>) {
        let share = Set(try AuthorizeCommand.types(try args.options("--share")))
        let read = Set(try AuthorizeCommand.types(try args.options("--read")))
        guard !share.isEmpty || !read.isEmpty else { throw CLIError.usage("give --share T,... and/or --read T,...") }
        return (share, read)
    }

    static let command = Command(name: "request", abstract: "An app asks for permission to share and read types", help: help) { args, global in
        if handledHelp(&args, help) { return }
        guard case .app(let bundle)? = try Identity.read(&args, ownerAllowed: false) else { throw CLIError.usage("give --app ID") }
        let (share, read) = try sets(&args)
        try args.finish()
        let events = try await withStore(global, .app(bundle)) { ledger, store, _ in
            let before = await ledger.lastSequence
            try await store?.requestAuthorization(toShare: share, read: read)
            return await ledger.lastSequence - before
        }
        Output.line(global.json ? "{\"app\":\(JSONObject.quote(bundle)),\"events\":\(events)}"
                    : events == 0 ? "nothing new to ask for \(bundle)" : "recorded the request of \(bundle)")
    }

    static let statusCommand = Command(name: "request-status", abstract: "Whether an app's request would ask anything new", help: statusHelp) { args, global in
        if handledHelp(&args, statusHelp) { return }
        guard case .app(let bundle)? = try Identity.read(&args, ownerAllowed: false) else { throw CLIError.usage("give --app ID") }
        let (share, read) = try sets(&args)
        try args.finish()
        let status = try await withStore(global, .app(bundle)) { _, store, _ in
            try await store?.requestStatus(toShare: share, read: read) ?? .unknown
        }
        Output.line(global.json ? "{\"app\":\(JSONObject.quote(bundle)),\"status\":\"\(status.name)\",\"rawValue\":\(status.rawValue)}" : status.name)
    }
}
