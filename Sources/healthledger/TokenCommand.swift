import Foundation
import HealthLedger
import LedgerReporting

/// `healthledger token`: the bearer credentials `serve` accepts.
enum TokenCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] token create (--app ID | --owner) [--expires DURATION] [--name NOTE] [--json]
               healthledger [--ledger PATH] token list [--json]
               healthledger [--ledger PATH] token revoke ID [--reason TEXT]

        Credentials for `healthledger serve`: a request's identity is its bearer token
        alone. `create` prints a new token once (hl_ID_SECRET: 256 random bits); the
        ledger keeps only its SHA-256, in a credentialIssued event (rule E15), so a
        lost token cannot be shown again — revoke it and create another. --app ID is a
        registered app (not an imported source); --owner gives owner access over the
        wire. --expires takes 90s, 30m, 12h, 30d or 8w (at most ten years); without it
        the token never expires. `revoke` appends credentialRevoked: the server
        refuses the token from then on, even on a kept-alive connection. `list` shows
        every credential (id, holder, name, status), never a secret.

        These commands take the ledger's lock: while `serve` runs, manage tokens
        through it (POST /v1/tokens, GET /v1/tokens, DELETE /v1/tokens/ID with an
        owner's token).

        \(ExitStatus.table)
        """

    static let command = Command(name: "token", abstract: "Create, list and revoke bearer tokens for serve", help: help) { args, global in
        if handledHelp(&args, help) { return }
        switch args.positional() {
        case "create":
            guard let identity = try Identity.read(&args) else { return }
            let expires = try args.option("--expires")
            let name = try args.option("--name")
            try args.finish()
            let seconds = try expires.map { text -> Double in
                do { return try CredentialLifetime.seconds(text) } catch { throw CLIError.invalidInput("invalidLifetime: --expires: \(error)") }
            }
            let now = Date()
            let holder: CredentialHolder = switch identity {
            case .owner: .owner
            case .app(let bundle): .app(bundle)
            }
            let (info, token) = try await withStore(global, .owner) { _, _, owner in
                try await owner.issueCredential(for: holder, expiresAt: seconds.map { now.addingTimeInterval($0) }, name: name, now: now)
            }
            if global.json {
                var o = info.json(now: now)
                o.set("token", token)
                Output.line(o.string)
            } else {
                Output.line(token)
                Output.error("healthledger: credential \(info.id) for \(info.holder)"
                             + (info.expiresAt.map { ", expires \(ISO8601.string($0))" } ?? ", never expires")
                             + ": the token above is shown this once")
            }
        case "list":
            try args.finish()
            let list = try await withStore(global, .owner, closing: false) { _, _, owner in await owner.credentials() }
            let now = Date()
            for c in list {
                if global.json {
                    Output.line(c.json(now: now).string)
                } else {
                    Output.line([c.id.description, c.holder.description, c.status(at: now), ISO8601.string(c.issuedDate),
                                 c.expiresAt.map { ISO8601.string($0) } ?? "-", c.name ?? ""].joined(separator: "\t"))
                }
            }
        case "revoke":
            let reason = try args.option("--reason")
            guard let text = args.positional() else { throw CLIError.usage("token revoke needs the credential's ID (token list)") }
            try args.finish()
            guard let id = CredentialID(text) else { throw CLIError.usage("a credential ID is 16 hex digits, not '\(text.prefix(40))'") }
            try await withStore(global, .owner) { _, _, owner in try await owner.revokeCredential(id, reason: reason) }
            Output.line("revoked \(id)")
        case let other:
            throw CLIError.usage("token needs create, list or revoke" + (other.map { ", not '\($0)'" } ?? ""))
        }
    }
}
