import Foundation
import HealthLedger
import HealthModel
import LedgerReporting

/// `healthledger query`: reading samples as an app (or the owner).
enum QueryCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] query (--app ID | --owner) TYPE [--from T] [--to T]
                                        [--strict-start] [--strict-end] [--limit N] [--after UUID]
                                        [--sort start|end|duration|energy|distance] [--ascending] [--source BUNDLE]... [--where EXPR] [--json]
                                        [--member 'MEMBERTYPE: EXPR']...   (food, bloodPressure)
                                        [--unit U] [--locale ID]
               healthledger [--ledger PATH] query --owner --raw [IDENTIFIER] [same options]

        HKSampleQuery: samples of TYPE whose interval matches [--from, --to) — overlapping
        it, or with --strict-start its start inside, with --strict-end its end inside.
        A date alone (YYYY-MM-DD) is the start of that day in the owner's time zone
        (`timezone`; --tz overrides it). Lines for people show quantities in --unit,
        else in the preferred unit (`preferred-unit`: the owner's choice, else
        --locale's, default en_US); --json lines keep the stored value and unit and,
        with --unit, add "converted" and "convertedUnit".
        No --limit (or 0) means all, as in HealthKit. Sorted by start date, newest first
        (--sort end, --ascending to change); ties go by the other date, then by log
        order (where the sample was saved), all in the same direction, so --ascending
        prints exactly the reverse. Workouts also sort by duration, energy (total
        energy burned) or distance (total distance): a workout without that total
        sorts as the smallest (first with --ascending, last without), ties then by
        start, end and log order in the same direction. An app without read permission sees only its own
        samples. --json prints one sample per line (uuid, type, value, unit, start, end,
        source, …). Results are written as they are read (memory does not grow with
        the answer).

        Paging: when --limit cut the answer short, the last line on stderr is
        `next: UUID` (the page's last sample); pass --after UUID with the same query
        for the next page. No such line: that was the last page. Pages see every
        sample exactly once, even while a writer appends.

        Records kept raw (a type this version does not know, such as
        HKDataTypeSleepDurationGoal, or a record HealthKit would refuse) are the
        owner's only: `--owner --raw` lists them all, `--owner --raw IDENTIFIER` (or
        `--owner IDENTIFIER` for an identifier this version does not know) those with
        that identifier as written, each with its raw value, unit and reason.

        HKCorrelationQuery: for a correlation type (food, bloodPressure), each
        --member 'MEMBERTYPE: EXPR' (repeatable; EXPR in the --where language) keeps
        the correlations holding at least one MEMBERTYPE member that matches EXPR —
        all of them must hold, as must --where on the correlation itself. An app
        sees others' correlations through the member types it may read, holding
        only those members, and its member predicates see only those members. A bad
        EXPR is exit 2 with its column counted from just after the colon.
        e.g. query --owner food --member 'dietaryEnergyConsumed: value > 500 kcal'

        \(SamplePredicate.grammar)

        \(ExitStatus.table)
        """

    static func print(_ samples: [Sample], json: Bool) {
        for s in samples { print(s, json: json) }
        flush()
    }

    /// Writes a sample's line into stdout's buffer (JSON written straight to bytes),
    /// through `Output`, the one place where stdout's failures are checked.
    static func print(_ sample: Sample, json: Bool, unit: HealthUnit? = nil) {
        Output.line { bytes in
            if json, let unit, case .quantity(let q) = sample, let converted = try? q.quantity.doubleValue(for: unit) {
                var o = SampleJSON.object(sample)
                o.set("converted", converted)
                o.set("convertedUnit", unit.canonicalString)
                bytes.append(contentsOf: o.string.utf8)
            } else if !json {
                bytes.append(contentsOf: describe(sample, unit: unit).utf8)
            } else if case .unrecognized(let u) = sample {
                var o = SampleJSON.object(sample)
                o.set("reason", u.reason)
                bytes.append(contentsOf: o.string.utf8)
            } else {
                SampleJSONWriter.append(sample, to: &bytes)
            }
        }
    }

    /// Writes what is buffered to stdout (a page's lines before its `next:` cursor).
    static func flush() {
        Output.flush()
    }

    static let command = Command(name: "query", abstract: "Samples of a type (HKSampleQuery)", help: help) { args, global in
        if handledHelp(&args, help) { return }
        guard let identity = try Identity.read(&args) else { return }
        let fromText = try args.option("--from"), toText = try args.option("--to")
        let strictStart = args.flag("--strict-start"), strictEnd = args.flag("--strict-end")
        let limitText = try args.option("--limit")
        let afterText = try args.option("--after")
        let sortText = try args.option("--sort") ?? "start"
        let ascending = args.flag("--ascending")
        let sources = try args.options("--source")
        let raw = args.flag("--raw")
        let whereText = try args.option("--where")
        let memberTexts = try args.options("--member")
        let unitOption = try args.option("--unit").map { try HealthUnit($0) }
        let locale = try args.option("--locale") ?? "en_US"
        let typeText = raw ? args.positional() : try args.required("TYPE")
        try args.finish()
        guard let limit = Int(limitText ?? "0"), limit >= 0 else { throw CLIError.usage("--limit takes a whole number ≥ 0") }
        let sortKeys: [String: SampleSortKey] = ["start": .startDate, "end": .endDate, "duration": .workoutDuration,
                                                 "energy": .workoutEnergy, "distance": .workoutDistance]
        guard let key = sortKeys[sortText] else { throw CLIError.usage("--sort takes start, end, duration, energy or distance") }
        var after: UUID?
        if let afterText {
            guard let u = UUIDText.parse(afterText) else { throw CLIError.usage("--after takes the UUID printed as `next:`") }
            after = u
        }
        let sort = [SampleSortDescriptor(key, ascending: ascending)]
        defer { flush() }
        let next: UUID?
        var type: ObjectType?
        if !raw {
            do {
                type = try Parse.type(typeText!)
            } catch let error as HealthModelError {
                // An identifier this version does not know: the owner may have raw records of it.
                guard case .owner = identity else { throw error }
            }
        }
        var view = try LedgerView.read(global, as: identity)
        // A date alone is a day boundary in the owner's time zone.
        let zone = global.timeZone(ledgerZone: view.ownerTimeZone)
        let from = try fromText.map { try Parse.date($0, "--from", zone: zone) }
        let to = try toText.map { try Parse.date($0, "--to", zone: zone) }
        let predicate = from == nil && to == nil && !strictStart && !strictEnd ? nil
            : DatePredicate(start: from, end: to, strictStartDate: strictStart, strictEndDate: strictEnd)
        do {
            if let type {
                if key.isWorkoutField && type != .workout {
                    throw CLIError.usage("--sort \(sortText) applies to workouts only")
                }
                let filter = try whereText.map { try Parse.predicate($0, type) }
                if !memberTexts.isEmpty {
                    guard case .correlation(let correlationType) = type else {
                        throw CLIError.usage("--member applies to correlation types (food, bloodPressure)")
                    }
                    var members: [QuantityType: SamplePredicate] = [:]
                    for text in memberTexts {
                        guard let colon = text.firstIndex(of: ":") else {
                            throw CLIError.usage("--member takes 'MEMBERTYPE: EXPR', e.g. 'dietaryEnergyConsumed: value > 500 kcal'")
                        }
                        let name = text[..<colon].trimmingCharacters(in: .whitespaces)
                        guard case .quantity(let memberType) = try Parse.type(name), correlationType.admits(memberType) else {
                            throw CLIError.usage("--member: \(name) is not a member type of \(correlationType.shortName)")
                        }
                        // columns count from just after the colon
                        let predicate = try Parse.predicate(String(text[text.index(after: colon)...]), .quantity(memberType),
                                                            option: "--member \(name)")
                        // two predicates on one member type: one member must satisfy both
                        members[memberType] = members[memberType].map { .and([$0, predicate]) } ?? predicate
                    }
                    let query = CorrelationQuery(type: correlationType, predicate: predicate, filter: filter, memberPredicates: members,
                                                 limit: limit, sort: sort, sources: sources.isEmpty ? nil : Set(sources))
                    next = try view.forEach(query, after: after) { print($0, json: global.json) }
                    flush()
                    if let next { Output.error("next: \(next.uuidString)") }
                    return
                }
                let query = SampleQuery(type: type, predicate: predicate, limit: limit, sort: sort,
                                        sources: sources.isEmpty ? nil : Set(sources), filter: filter)
                var unit: HealthUnit?
                if case .quantity(let q) = type {
                    unit = unitOption ?? (global.json ? nil : view.preferredUnit(for: q, locale: locale))
                    if let unit, !unit.isCompatible(with: q.canonicalUnit) {
                        throw CLIError.usage("--unit \(unit) does not fit \(q.shortName) (\(q.dimension))")
                    }
                } else if unitOption != nil {
                    throw CLIError.usage("--unit applies to quantity types")
                }
                if global.json && unit == nil {
                    // The common shape printed straight from its stored bytes, the same
                    // line, written in batches on a thread of its own while the engine
                    // reads on; the order is the engine's. A sample the engine decoded
                    // is printed here once everything before it is out.
                    let writer = PlainSampleWriter(write: { s, bytes in
                        SampleJSONWriter.append(s, to: &bytes)
                        bytes.append(0x0A)
                    }, emit: { bytes in
                        Output.writeLines(bytes)
                    })
                    defer { writer.finish() }
                    next = try view.forEach(query, after: after, plain: { (s: consuming PlainQuantityBytes) in
                        writer.append(consume s)
                    }) { sample in
                        writer.drain()
                        print(sample, json: true)
                    }
                    writer.drain()
                } else {
                    next = try view.forEach(query, after: after) { print($0, json: global.json, unit: unit) }
                }
            } else {
                guard case .owner = identity else { throw CLIError.usage("--raw is for the owner: apps never see raw records") }
                guard !key.isWorkoutField else { throw CLIError.usage("--sort \(sortText) applies to workouts only") }
                guard sources.isEmpty, whereText == nil, memberTexts.isEmpty else { throw CLIError.usage("--source, --where and --member do not apply to raw records") }
                let query = SampleQuery(type: .workout, predicate: predicate, limit: limit, sort: sort)
                let identifier = typeText
                let known = identifier.flatMap { try? Parse.type($0) }.map(TypeIdentifier.known)
                var found = false
                next = try view.forEachRaw(matching: { u in
                    guard let identifier else { return true }
                    return u.typeIdentifier == identifier || (known != nil && TypeIdentifier(parsing: u.typeIdentifier) == known)
                }, query, after: after) { sample in
                    found = true
                    print(sample, json: global.json)
                }
                if !found, next == nil, after == nil, let identifier, known == nil {
                    throw HealthModelError.dataTypeNotAvailable(identifier: identifier)
                }
            }
        } catch QueryError.invalidCursor(let text) {
            throw CLIError.invalidInput("invalidCursor: --after \(text) names no sample this query can see")
        }
        flush()
        if let next { Output.error("next: \(next.uuidString)") }
    }
}
