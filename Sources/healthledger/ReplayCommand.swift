import Foundation
import HealthLedger
import LedgerTools
import HealthModel
import LedgerReporting

/// `healthledger replay`: rebuild the projections, now or as of a point in the log.
enum ReplayCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] replay [--to SEQ | --as-of TIME] [--no-snapshot]
                                                   [--write-snapshot] [--json]

        Rebuild every projection from the log and print the profile, the latest sample
        of every type, authorization, the owner's source priorities, and the projection
        digest. (`statistics --as-of TIME` gives the totals of the state as of TIME.)

          --to SEQ          the state right after event SEQ
          --as-of TIME      the state an app saw at TIME (ISO 8601, e.g. 2026-03-01T12:00Z):
                            every event recorded at or before it
          --no-snapshot     replay from the first event, ignoring snapshots
          --write-snapshot  save a snapshot of the result (derived data; speeds up opening)

        Progress goes to stderr when it is a terminal. Reads without locking.

        \(ExitStatus.table)
        """

    static let command = Command(name: "replay", abstract: "Rebuild projections (as of any event or time)", help: help) { args, global in
        if handledHelp(&args, help) { return }
        let to = try args.option("--to")
        let asOf = try args.option("--as-of")
        let noSnapshot = args.flag("--no-snapshot")
        let writeSnapshot = args.flag("--write-snapshot")
        try args.finish()
        if to != nil && asOf != nil { throw CLIError.usage("give --to or --as-of, not both") }
        let limit: ReplayLimit
        if let to { limit = .sequence(try LedgerAccess.sequence(to, "--to")) } else if let asOf { limit = .instant(try LedgerAccess.instant(asOf)) } else { limit = .end }
        if writeSnapshot && limit != .end { throw CLIError.usage("--write-snapshot takes the whole log (no --to or --as-of)") }

        let started = Date()
        // The replayed instant: --as-of's, event N's time for --to N, else now.
        let instant: Date?
        switch limit {
        case .instant(let ns): instant = Date(timeIntervalSince1970: Double(ns) / 1e9)
        case .sequence: instant = nil
        case .end: instant = Date()
        }
        let r = try global.reads.replay(limit: limit, useSnapshots: !noSnapshot, at: instant, writeSnapshot: writeSnapshot,
                                        progress: Progress.replay())
        Progress.finish()
        for warning in r.warnings { Output.error("healthledger: warning: \(warning)") }
        let seconds = Date().timeIntervalSince(started)
        if let name = r.writtenSnapshot { Output.error("healthledger: wrote \(name)") }
        if global.json {
            Output.line(ReplayReport.json(r))
            return
        }
        let profile = r.profile
        let source = r.snapshot.map { "snapshot \($0) + \(r.replayed) events" } ?? "\(r.replayed) events from the start"
        Output.line("replayed to event \(r.lastSequence) (\(source)) in \(String(format: "%.3f", seconds)) s")
        if let at = r.lastRecordedAt {
            Output.line("last event recorded at \(ISO8601.string(at))")
        }
        Output.line("digest \(r.digest.hex)")
        Output.line("")
        Output.line("profile")
        Output.line("  date of birth   \(profile.dateOfBirth?.description ?? "not set")")
        Output.line("  biological sex  \(profile.biologicalSex.displayName)")
        Output.line("  blood type      \(profile.bloodType.displayName)")
        Output.line("  height          \(profile.height.map { "\($0.quantity.value) \($0.quantity.unit)" } ?? "none")")
        Output.line("  weight          \(profile.weight.map { "\($0.quantity.value) \($0.quantity.unit)" } ?? "none")")
        Output.line("  BMI             \(profile.bodyMassIndex.map(BodyMassIndex.formatted) ?? "none")")
        Output.line("")
        Output.line("latest sample per type")
        for s in r.latest {
            let value: String
            switch s {
            case .quantity(let q): value = "\(q.quantity.value) \(q.quantity.unit)"
            case .category(let c): value = c.type.values.first { $0.value == c.value }?.shortName ?? String(c.value)
            case .workout(let w): value = "\(w.activityType.shortName), \(Int(w.duration)) s"
            case .correlation(let c): value = "\(c.objects.count) objects"
            case .unrecognized(let u): value = u.value ?? ""
            }
            Output.line("  \(s.type.rawValue)  \(value)  \(ISO8601.string(s.startDate))  \(s.common.source?.bundleIdentifier ?? "?")")
        }
        Output.line("")
        Output.line("authorization")
        for a in r.authorization {
            let p = a.permission
            Output.line("  \(a.app)  \(ObjectType(code: a.typeCode)?.shortName ?? String(a.typeCode))  share \(p.share.name)  read \(p.read.map { $0 ? "granted" : "denied" } ?? "notDetermined")")
        }
        // The owners' source orders in force (`statistics --as-of` gives their totals).
        if !r.sourcePriorities.isEmpty {
            Output.line("")
            Output.line("source priority")
            for (code, sources) in r.sourcePriorities {
                Output.line("  \(ObjectType(code: code)?.shortName ?? String(code))  \(sources.joined(separator: " > "))")
            }
        }
    }
}
