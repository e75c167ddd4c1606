import Foundation
import HealthLedger
import HealthModel
import HealthReport

/// `healthledger report`: the health and audit report as one self-contained HTML file.
enum ReportCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] report (--owner | --app ID) [--from T] [--to T] [--tz ZONE]
                            [--locale ID] [--now T] [--full-verify] [--out FILE]

        One HTML file, everything inline (CSS, SVG charts, a few lines of script), no
        network access, readable printed: the profile (age, sex, blood type, latest
        height, weight and BMI with date and source, formatted for --locale, default
        en_US); charts where there is data (body mass with its 7-day mean, BMI, heart
        rate per day as min–mean–max with resting, sleep per night by stage, workouts
        per week by activity type), each with a data table; samples per type, source
        and device; the audit timeline (registrations, requests, decisions, imports,
        deletions, characteristic changes, with sequence numbers, filterable by app);
        integrity (the log's check: framing, checksums and the hash chain over every
        byte; with --full-verify the whole `verify`, events and snapshots too; chain
        head, event count, Merkle tree head when kept, the command that rebuilds it).
        --app ID: only what that app may read, through the store like every read (no
        read answers in its timeline). --from/--to: samples overlapping [from, to).
        --tz: day boundaries and times (default: the ledger's zone, else UTC); a
        date alone for --from, --to or --now is the start of that day there.
        --now: the report's time (default: now). --out: the file (default: stdout),
        written with mode 0600 (readable by you alone, as the ledger's files: it holds
        the whole profile). A chart whose values the ledger cannot add up to finite
        numbers (values saved before they were bounded) is named as not drawn.

        \(ExitStatus.table)
        """

    static let command = Command(name: "report", abstract: "A self-contained HTML health and audit report", help: help) { args, global in
        if handledHelp(&args, help) { return }
        guard let identity = try Identity.read(&args) else { return }
        let fromText = try args.option("--from"), toText = try args.option("--to")
        var from = try fromText.map { try Parse.date($0, "--from") }
        var to = try toText.map { try Parse.date($0, "--to") }
        if let from, let to, from >= to { throw CLIError.usage("--from \(fromText!) is not before --to \(toText!)") }
        let localeText = try args.option("--locale") ?? "en_US"
        guard !localeText.isEmpty, localeText.utf8.count <= 64,
              localeText.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == "@" || $0 == "=") }) else {
            throw CLIError.invalidInput("invalidLocale: --locale '\(localeText)' is not a locale identifier (such as en_US or de_DE)")
        }
        let nowText = try args.option("--now")
        var now = try nowText.map { try Parse.date($0, "--now") } ?? Date()
        let out = try args.option("--out")
        let fullVerify = args.flag("--full-verify")
        try args.finish()

        let html = try await withStore(global, identity, closing: false) { ledger, store, owner in
            let zone = global.timeZone(ledgerZone: await ledger.ownerTimeZone)
            // A date alone is the start of that day in the report's zone (checked in UTC above).
            from = try fromText.map { try Parse.date($0, "--from", zone: zone) }
            to = try toText.map { try Parse.date($0, "--to", zone: zone) }
            if let from, let to, from >= to { throw CLIError.usage("--from \(fromText!) is not before --to \(toText!)") }
            now = try nowText.map { try Parse.date($0, "--now", zone: zone) } ?? now
            var words = ["healthledger", "--ledger", global.ledgerPath, "report"]
            switch identity {
            case .owner: words.append("--owner")
            case .app(let bundle): words += ["--app", bundle]
            }
            if let fromText { words += ["--from", fromText] }
            if let toText { words += ["--to", toText] }
            words += ["--tz", zone.identifier, "--locale", localeText, "--now", ISO8601.string(now)]
            if fullVerify { words.append("--full-verify") }
            if let out { words += ["--out", out] }
            let options = ReportOptions(from: from, to: to, timeZone: zone, locale: Locale(identifier: localeText), now: now,
                                        command: words.map(shellQuoted).joined(separator: " "), fullVerify: fullVerify)
            let viewer: ReportViewer = store.map { .app($0) } ?? .owner(owner)
            return ReportHTML.render(try await ReportGatherer.gather(viewer, options: options))
        }
        if let out, out != "-" {
            // mode 0600, as the ledger's files: the page holds the whole profile
            try PrivateFile.write(Array(html.utf8), to: out, what: "report")
        } else {
            Output.line(String(html.dropLast()))
        }
    }

    /// A word as a POSIX shell reads it back: plain when safe, else single-quoted.
    static func shellQuoted(_ word: String) -> String {
        let safe = !word.isEmpty && word.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "_./:+-=@,".unicodeScalars.contains($0)
        }
        return safe ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
