import Foundation
import HealthLedger
import HealthModel
import LedgerReporting
#if canImport(Glibc)
import Glibc
#endif

/// `healthledger workout build`: HKWorkoutBuilder driven by steps read as JSON Lines,
/// committed at `finish` in one go (`WorkoutBuilder` with `.atFinish`).
enum WorkoutBuildCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] workout build --app ID [--file PATH] [--json]

        Build a workout as an app builds one with HKWorkoutBuilder, from steps read as
        JSON Lines (one object per line) on stdin or from --file, and commit it at the
        `finish` step in one go: the samples added, the workout (its duration less the
        paused time, its total energy and distance from the samples added), their
        association with it, its activities and its route. Nothing is written if any
        step is refused or the steps do not end with `finish`. Prints the workout's
        UUID; with --json the workout as `query --json` shows it.

        Steps (the "step" field names it; times are ISO 8601, a date alone is the start
        of that day in the owner's time zone; lines are strict JSON as for `ingest`;
        unknown fields are refused; blank lines are skipped):
          {"step":"begin","activityType":"running","date":T}      beginCollection
          {"step":"addSample", …}     add(_:): a quantity or category sample, with the
                                      fields of an `ingest` line (type, value, unit,
                                      start, end, uuid, metadata, device)
          {"step":"addEvent","type":"pause","date":T}             addWorkoutEvents
                                      (optional "duration" in seconds, "metadata")
          {"step":"addActivity","activityType":"swimming","start":T,"end":T}
                                      addWorkoutActivity: a segment (optional "uuid",
                                      "events" as addEvent's without "step", "metadata")
          {"step":"addRoute","locations":[{"date":T,"latitude":N,"longitude":N}]}
                                      HKWorkoutRouteBuilder.insertRouteData (optional
                                      altitude, horizontalAccuracy, verticalAccuracy,
                                      course, speed)
          {"step":"addMetadata","metadata":{…}}                   addMetadata
          {"step":"end","date":T}                                 endCollection
          {"step":"finish"}                                       finishWorkout (last)
        A refused step is named: `line N (STEP): REASON; nothing was written`.

        \(ExitStatus.table)
        """

    /// The most steps one build takes.
    static let maxSteps = 100_000

    /// Each step's fields besides "step".
    static let fields: [String: [String]] = [
        "begin": ["activityType", "date"],
        "addSample": IngestCommand.fields,
        "addEvent": ["type", "date", "duration", "metadata"],
        "addActivity": ["activityType", "start", "end", "uuid", "events", "metadata"],
        "addRoute": ["locations"],
        "addMetadata": ["metadata"],
        "end": ["date"],
        "finish": [],
    ]
    static let stepOrder = ["begin", "addSample", "addEvent", "addActivity", "addRoute", "addMetadata", "end", "finish"]
    static let locationFields = ["date", "latitude", "longitude", "altitude", "horizontalAccuracy", "verticalAccuracy",
                                 "course", "speed"]

    struct Step {
        let line: Int
        let name: String
        /// The object without its "step" member.
        let fields: JSONValue
    }

    static func run(_ args: inout ArgumentList, _ global: GlobalOptions) async throws {
        if handledHelp(&args, help) { return }
        guard case .app(let bundle)? = try Identity.read(&args, ownerAllowed: false) else { return }
        let file = try args.option("--file")
        try args.finish()
        let steps = try readSteps(file)
        guard let last = steps.last, last.name == "finish" else {
            throw CLIError.invalidInput("missingFinish: the steps do not end with {\"step\":\"finish\"}; nothing was written")
        }
        let workout = try await withStore(global, .app(bundle)) { ledger, store, _ in
            let zone = global.timeZone(ledgerZone: await ledger.ownerTimeZone)
            var builder: WorkoutBuilder?
            let route = WorkoutRouteBuilder()
            var finished: Workout?
            for step in steps {
                do {
                    if step.name != "begin", builder == nil {
                        throw CLIError.invalidInput("outOfOrder: the first step is begin")
                    }
                    switch step.name {
                    case "begin":
                        guard builder == nil else { throw CLIError.invalidInput("outOfOrder: begin is given once") }
                        guard let text = try IngestCommand.string(step.fields, "activityType") else { throw IngestCommand.missing("activityType") }
                        let b = WorkoutBuilder(store: store!, activityType: try WorkoutActivityType(name: text), saving: .atFinish)
                        try await b.beginCollection(at: try date(step.fields, "date", zone))
                        builder = b
                    case "addSample":
                        try await builder!.add([try IngestCommand.sample(step.fields, zone: zone)])
                    case "addEvent":
                        try await builder!.addWorkoutEvents([try event(step.fields, zone)])
                    case "addActivity":
                        try await builder!.addWorkoutActivity(try activity(step.fields, zone))
                    case "addRoute":
                        try await route.insertRouteData(try locations(step.fields, zone))
                    case "addMetadata":
                        guard step.fields["metadata"] != nil else { throw IngestCommand.missing("metadata") }
                        try await builder!.addMetadata(try IngestCommand.metadata(step.fields["metadata"]))
                    case "end":
                        try await builder!.endCollection(at: try date(step.fields, "date", zone))
                    default:  // finish, the last step
                        let points = await route.locations
                        finished = try await builder!.finishWorkout(route: points.isEmpty ? nil : try await route.route())
                    }
                } catch {
                    let (status, message) = describe(error)
                    throw CLIError(status: status, message: "line \(step.line) (\(step.name)): \(message); nothing was written")
                }
            }
            return finished!
        }
        if global.json { Output.line(SampleJSON.object(.workout(workout)).string) } else { Output.line(workout.uuid.uuidString) }
    }

    /// The steps, parsed and checked for their fields' names, before the ledger opens.
    static func readSteps(_ file: String?) throws -> [Step] {
        var fd: Int32 = 0
        if let file {
            fd = open(file, O_RDONLY)
            guard fd >= 0 else {
                let e = errno
                if e == ENOENT { throw CLIError.notFound("notFound: --file \(file): no such file") }
                throw CLIError(status: ExitStatus.failure, message: "inputFailed: --file \(file): \(String(cString: strerror(e)))")
            }
        }
        defer { if fd != 0 { close(fd) } }
        var reader = LineReader(fd: fd)
        var steps: [Step] = []
        var lineNumber = 0
        while true {
            let next: ArraySlice<UInt8>?
            do { next = try reader.next() } catch {
                if case .lineTooLong = error {
                    throw CLIError.invalidInput("line \(lineNumber + 1): \(error.description); nothing was written")
                }
                throw CLIError(status: ExitStatus.failure, message: "\(error.description) (after line \(lineNumber)); nothing was written")
            }
            guard let bytes = next else { break }
            lineNumber += 1
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            do {
                guard steps.count < maxSteps else { throw CLIError.invalidInput("tooManySteps: more than \(maxSteps) steps") }
                let value: JSONValue
                do { value = try JSONValue.parse(bytes) } catch { throw CLIError.invalidInput("invalidJSON: \(error)") }
                steps.append(try step(value, line: lineNumber))
            } catch {
                let (status, message) = describe(error)
                throw CLIError(status: status, message: "line \(lineNumber): \(message); nothing was written")
            }
            if steps.count >= 2, steps[steps.count - 2].name == "finish" {
                throw CLIError.invalidInput("line \(lineNumber): outOfOrder: finish is the last step; nothing was written")
            }
        }
        return steps
    }

    /// One line as a step: an object whose "step" names a known step and whose other
    /// members are that step's fields.
    static func step(_ value: JSONValue, line: Int) throws -> Step {
        guard case .object(let members) = value else { throw IngestCommand.wrongType("a step", "a JSON object", value) }
        guard let name = try IngestCommand.string(value, "step") else { throw IngestCommand.missing("step") }
        guard let allowed = fields[name] else {
            throw CLIError.invalidInput("unknownStep: \"\(name)\" (steps: \(stepOrder.joined(separator: ", ")))")
        }
        let rest = members.filter { $0.0 != "step" }
        for (field, _) in rest where !allowed.contains(field) {
            throw CLIError.invalidInput("unknownField: \"\(field)\" in a \(name) step (fields: \(allowed.isEmpty ? "none" : allowed.joined(separator: ", ")))")
        }
        return Step(line: line, name: name, fields: .object(rest))
    }

    static func date(_ object: JSONValue, _ field: String, _ zone: TimeZone) throws -> Date {
        guard let text = try IngestCommand.string(object, field) else { throw IngestCommand.missing(field) }
        return try Parse.date(text, field, zone: zone)
    }

    static func number(_ object: JSONValue, _ field: String) throws -> Double? {
        guard let v = object[field] else { return nil }
        guard case .number(let d, _) = v else { throw IngestCommand.wrongType("\"\(field)\"", "a number", v) }
        return d
    }

    static func event(_ object: JSONValue, _ zone: TimeZone) throws -> WorkoutEvent {
        guard case .object(let members) = object else { throw IngestCommand.wrongType("an event", "a JSON object", object) }
        for (field, _) in members where !fields["addEvent"]!.contains(field) {
            throw CLIError.invalidInput("unknownField: \"\(field)\" in an event (fields: \(fields["addEvent"]!.joined(separator: ", ")))")
        }
        guard let type = try IngestCommand.string(object, "type") else { throw IngestCommand.missing("type") }
        return try WorkoutEvent(kind: try WorkoutEvent.Kind(name: type), date: try date(object, "date", zone),
                                duration: try number(object, "duration") ?? 0, metadata: try IngestCommand.metadata(object["metadata"]))
    }

    static func activity(_ object: JSONValue, _ zone: TimeZone) throws -> WorkoutActivity {
        guard let type = try IngestCommand.string(object, "activityType") else { throw IngestCommand.missing("activityType") }
        var uuid = UUID()
        if let text = try IngestCommand.string(object, "uuid") {
            guard let parsed = UUIDText.parse(text) else { throw CLIError.invalidInput("invalidUUID: \"uuid\" '\(text)'") }
            uuid = parsed
        }
        var events: [WorkoutEvent] = []
        if let list = object["events"] {
            guard case .array(let items) = list else { throw IngestCommand.wrongType("\"events\"", "an array", list) }
            events = try items.map { try event($0, zone) }
        }
        return try WorkoutActivity(activityType: try WorkoutActivityType(name: type), start: try date(object, "start", zone),
                                   end: try date(object, "end", zone), events: events,
                                   metadata: try IngestCommand.metadata(object["metadata"]), uuid: uuid)
    }

    static func locations(_ object: JSONValue, _ zone: TimeZone) throws -> [RouteLocation] {
        guard let list = object["locations"] else { throw IngestCommand.missing("locations") }
        guard case .array(let items) = list else { throw IngestCommand.wrongType("\"locations\"", "an array", list) }
        return try items.map { item in
            guard case .object(let members) = item else { throw IngestCommand.wrongType("a location", "a JSON object", item) }
            for (field, _) in members where !locationFields.contains(field) {
                throw CLIError.invalidInput("unknownField: \"\(field)\" in a location (fields: \(locationFields.joined(separator: ", ")))")
            }
            guard let latitude = try number(item, "latitude") else { throw IngestCommand.missing("latitude") }
            guard let longitude = try number(item, "longitude") else { throw IngestCommand.missing("longitude") }
            guard (-90...90).contains(latitude), (-180...180).contains(longitude) else {
                throw CLIError.invalidInput("invalidValue: a location at latitude \(latitude), longitude \(longitude) is not on Earth")
            }
            let when = try date(item, "date", zone)
            try ISO8601.checkRange(when, field: "location date")
            return RouteLocation(date: when, latitude: latitude, longitude: longitude,
                                 altitude: try number(item, "altitude"), horizontalAccuracy: try number(item, "horizontalAccuracy"),
                                 verticalAccuracy: try number(item, "verticalAccuracy"), course: try number(item, "course"),
                                 speed: try number(item, "speed"))
        }
    }
}
