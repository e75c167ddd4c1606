import Foundation
import HealthLedger
import HealthModel
import LedgerReporting

/// `healthledger authorize` (the owner's decisions) and `healthledger status`.
enum AuthorizeCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] authorize --app ID [--share T,...] [--read T,...]
                                                 [--deny-share T,...] [--deny-read T,...]
               healthledger [--ledger PATH] authorize --app ID --requested

        The owner's decisions for an app, one event per type answered. A decision can
        be changed or revoked later; revocation takes effect from its event on. As in
        HealthKit's Settings, only types the app asked for (healthledger --app ID
        request) can be answered: another is refused (exit 5), naming the type.
        --requested grants everything the app asked for that is not answered yet.
        Types: HealthKit identifiers or short forms (bodyMass, HKQuantityTypeIdentifierHeight,
        sleepAnalysis, workout, dateOfBirth, …).

        \(ExitStatus.table)
        """

    static func types(_ list: [String]) throws -> [ObjectType] {
        try list.flatMap { $0.split(separator: ",") }.map { try Parse.type(String($0)) }
    }

    /// The answers per type. A type granted and denied the same permission
    /// (`--share X --deny-share X`, also through two spellings of X) is a usage error,
    /// never "the last one wins"; the same answer given twice is one answer.
    static func decisions(share: [ObjectType], denyShare: [ObjectType], read: [ObjectType], denyRead: [ObjectType]) throws
        -> [ObjectType: (share: Answer?, read: Answer?)] {
        var decisions: [ObjectType: (share: Answer?, read: Answer?)] = [:]
        for (types, answer, isShare) in [(share, Answer.granted, true), (denyShare, .denied, true),
                                         (read, .granted, false), (denyRead, .denied, false)] {
            for t in types {
                let earlier = isShare ? decisions[t]?.share : decisions[t]?.read
                if let earlier, earlier != answer {
                    let (grant, deny) = isShare ? ("--share", "--deny-share") : ("--read", "--deny-read")
                    throw CLIError.usage("\(t.identifier) is in both \(grant) and \(deny); give one answer per type")
                }
                if isShare { decisions[t, default: (nil, nil)].share = answer } else { decisions[t, default: (nil, nil)].read = answer }
            }
        }
        return decisions
    }

    static let command = Command(name: "authorize", abstract: "The owner grants or denies an app per type", help: help) { args, global in
        if handledHelp(&args, help) { return }
        guard let bundle = try args.option("--app") else { throw CLIError.usage("authorize needs --app ID") }
        let share = try types(try args.options("--share")), read = try types(try args.options("--read"))
        let denyShare = try types(try args.options("--deny-share")), denyRead = try types(try args.options("--deny-read"))
        let requested = args.flag("--requested")
        try args.finish()
        let decisions = try AuthorizeCommand.decisions(share: share, denyShare: denyShare, read: read, denyRead: denyRead)
        guard requested || !decisions.isEmpty else { throw CLIError.usage("authorize needs --share, --read, --deny-share, --deny-read or --requested") }
        let events = try await withStore(global, .owner) { ledger, _, owner in
            let before = await ledger.lastSequence
            if requested { try await owner.grantRequested(app: bundle) }
            if !decisions.isEmpty {
                try await owner.decide(app: bundle, decisions.keys.sorted().map { ($0, decisions[$0]!.share, decisions[$0]!.read) },
                                       requestedOnly: true)
            }
            return await ledger.lastSequence - before
        }
        Output.line(global.json ? "{\"app\":\(JSONObject.quote(bundle)),\"events\":\(events)}" : "recorded \(events) decision\(events == 1 ? "" : "s") for \(bundle)")
    }
}
