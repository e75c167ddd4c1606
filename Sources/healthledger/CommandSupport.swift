import Foundation
import HealthLedger
import HealthModel
import LedgerReporting
import LedgerTools

/// Who a command acts for: an app (`--app ID`) or the ledger's owner (`--owner`).
enum Identity {
    case app(String)
    case owner

    /// Reads `--app ID` / `--owner`; `required` refuses neither.
    static func read(_ args: inout ArgumentList, required: Bool = true, ownerAllowed: Bool = true) throws -> Identity? {
        let app = try args.option("--app")
        let owner = args.flag("--owner")
        if app != nil && owner { throw CLIError.usage("give --app ID or --owner, not both") }
        if owner {
            guard ownerAllowed else { throw CLIError.usage("this command acts for an app: --app ID (the owner does not save samples)") }
            return .owner
        }
        if let app { return .app(app) }
        if required { throw CLIError.usage(ownerAllowed ? "give --app ID or --owner" : "give --app ID") }
        return nil
    }

    /// Who reads, for the read view (which alone decides what an app may see).
    var viewer: Viewer {
        switch self {
        case .app(let bundle): .app(bundle)
        case .owner: .owner
        }
    }
}

enum Parse {
    static func type(_ text: String) throws -> ObjectType { try ObjectType(identifier: text) }

    /// A predicate in the `--where` language (`SamplePredicate.grammar`); a syntax
    /// error is usage (exit 2) naming the option and the column.
    static func predicate(_ text: String, _ type: ObjectType, option: String = "--where") throws -> SamplePredicate {
        do { return try SamplePredicate(parsing: text, for: type) } catch { throw CLIError.usage("\(option): \(error)") }
    }

    /// An ISO 8601 date or date-time; with `zone`, a date alone is the start of that
    /// day in the zone (the owner's day boundaries).
    static func date(_ text: String, _ what: String, zone: TimeZone? = nil) throws -> Date {
        do throws(HealthModelError) {
            if let zone { return try ISO8601.parse(text, dayStartIn: zone) }
            return try ISO8601.parse(text)
        } catch {
            guard case .invalidDate(let shown, let reason) = error else { throw error }
            throw CLIError.invalidInput("invalidDate: \(what) '\(shown)' \(reason)")
        }
    }

    /// A decimal number (`DecimalNumber`: not hexadecimal); `nan` and `inf` are
    /// `nonFiniteValue`.
    static func number(_ text: String, _ what: String) throws -> Double {
        guard let v = Double(text), DecimalNumber.isDecimal(text) || !v.isFinite else {
            throw CLIError.invalidInput("invalidValue: \(what) '\(text)' is not a number")
        }
        guard v.isFinite else { throw HealthModelError.nonFiniteValue(field: what) }
        return v
    }

    /// `KEY=VALUE`: an integer, a number, true/false, a quantity ("56 degF"), or a string;
    /// the sync identifier is always a string and the sync version must be an integer.
    static func metadata(_ pairs: [String]) throws -> Metadata {
        var m = Metadata()
        for pair in pairs {
            guard let eq = pair.firstIndex(of: "="), eq != pair.startIndex else {
                throw CLIError.usage("--meta takes KEY=VALUE, got '\(pair)'")
            }
            let key = String(pair[..<eq]), text = String(pair[pair.index(after: eq)...])
            guard m[key] == nil else { throw CLIError.usage("--meta \(key) is given twice; give each key once") }
            switch key {
            case Metadata.WellKnownKey.syncIdentifier:
                m.append(key, .string(text))  // always text, even when it looks like a number
            case Metadata.WellKnownKey.syncVersion:
                guard let version = Int64(text) else {
                    throw CLIError.invalidInput("invalidSyncVersion: --meta \(key) must be a whole number in the 64-bit range, not '\(text)'")
                }
                m.append(key, .integer(version))
            default:
                m.append(key, metadataValue(text))
            }
        }
        return m
    }

    static func metadataValue(_ text: String) -> MetadataValue {
        if let i = Int64(text) { return .integer(i) }
        if let d = DecimalNumber.parse(text) { return .number(d) }
        if text == "true" || text == "false" { return .bool(text == "true") }
        let parts = text.split(separator: " ", maxSplits: 1)
        if parts.count == 2, let v = DecimalNumber.parse(String(parts[0])), let q = try? Quantity(v, unit: String(parts[1])) {
            return .quantity(q)
        }
        return .string(text)
    }
}

/// The ledger read without the writer's lock (`ReadOnlyLedger`), as read commands
/// read it so that they work while a writer runs; its notes on stderr.
enum LedgerView {
    /// Opens the ledger as of `limit`, telling on stderr what a reader should know:
    /// snapshots skipped, an import not yet committed (shown nowhere, rule E11).
    static func open(_ global: GlobalOptions, limit: ReplayLimit = .end) throws -> ReadOnlyLedger {
        defer { Progress.finish() }
        return try global.reads.open(limit: limit, progress: Progress.replay())
    }

    /// The one read view of the ledger for `identity` (`LedgerReadView`): every read
    /// command asks it, and it alone applies what an app may see.
    static func read(_ global: GlobalOptions, as identity: Identity, limit: ReplayLimit = .end) throws -> LedgerReadView {
        do {
            defer { Progress.finish() }
            return try global.reads.view(as: identity.viewer, limit: limit, progress: Progress.replay())
        } catch RuleViolation.appNotRegistered(let bundle, _) {
            throw notRegistered(bundle)
        }
    }

    /// `ledger.read(as:)`, an unregistered app told as `read(_:as:)` tells it.
    static func read<T>(_ ledger: inout ReadOnlyLedger, as identity: Identity, _ body: (inout LedgerReadView) throws -> T) throws -> T {
        do {
            return try ledger.read(as: identity.viewer, body)
        } catch RuleViolation.appNotRegistered(let bundle, _) {
            throw notRegistered(bundle)
        }
    }

    /// The not-found error for an app that is not registered, telling how to register.
    static func notRegistered(_ bundle: String) -> CLIError {
        CLIError.notFound("appNotRegistered: \(bundle) is not registered (healthledger app register --app \(bundle) …)")
    }
}

/// Opens the ledger for writing, runs `body` with a store for the identity, closes.
/// `closing: false` (a command that only reads through the store) gives the ledger up
/// without a snapshot or seal when nothing was appended: the files stay as they were.
func withStore<T>(_ global: GlobalOptions, _ identity: Identity, closing: Bool = true,
                  _ body: (Ledger, HealthStore?, OwnerStore) async throws -> T) async throws -> T {
    let ledger = try LedgerAccess.openForWriting(global)
    let startSequence = await ledger.lastSequence
    do {
        var store: HealthStore?
        if case .app(let bundle) = identity {
            guard let registration = await ledger.registration(ofApp: bundle) else {
                throw LedgerView.notRegistered(bundle)
            }
            store = try await HealthStore(ledger: ledger, app: registration)
        }
        let result = try await body(ledger, store, OwnerStore(ledger: ledger))
        let appended = await ledger.lastSequence > startSequence
        if closing || appended { try await ledger.close() } else { ledger.abandon() }
        return result
    } catch {
        // Refused: leave the ledger exactly as it was (no seal, no snapshot), unless
        // earlier batches of this command were committed (ingest), which a clean
        // close then seals.
        if await ledger.lastSequence > startSequence { try? await ledger.close() } else { ledger.abandon() }
        throw error
    }
}

/// A sample as one line for people; a quantity in `unit` when given (and it converts).
func describe(_ s: Sample, unit: HealthUnit? = nil) -> String {
    let value: String
    switch s {
    case .quantity(let q):
        if let unit, let converted = try? q.quantity.doubleValue(for: unit) {
            value = "\(JSONObject.number(converted)) \(unit)"
        } else {
            value = "\(JSONObject.number(q.quantity.value)) \(q.quantity.unit)"
        }
    case .category(let c): value = c.type.values.first { $0.value == c.value }?.shortName ?? String(c.value)
    case .workout(let w):
        value = "\(w.activityType.shortName) \(Int(w.duration)) s"
            + (w.totalEnergyBurned.map { ", \(JSONObject.number($0.value)) \($0.unit)" } ?? "")
    case .correlation(let c): value = "\(c.objects.count) objects"
    case .unrecognized(let u): value = "\(u.value ?? "") \(u.unit ?? "")" + (u.reason.map { "  (raw: \($0))" } ?? "  (raw)")
    }
    let range = s.startDate == s.endDate ? ISO8601.string(s.startDate) : "\(ISO8601.string(s.startDate)) – \(ISO8601.string(s.endDate))"
    return "\(s.uuid.uuidString)  \(s.type.rawValue)  \(value)  \(range)  \(s.common.source?.bundleIdentifier ?? "?")"
}
