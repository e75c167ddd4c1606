import Foundation
import HealthModel

/// The rules checked when the store appends an event, and never when a log is read
/// (events/FORMAT.md, "Rules"): **E13**, the importer's namespace, and
/// **E14**, a new app's bundle identifier. Logs written before them may hold events
/// they refuse (an `export:` app an earlier release let anyone register, a bundle
/// identifier with a space); such logs stay valid, so replay and `verify` do not run
/// these, while nothing appended from now on breaks them.
///
/// - E13: `export:NAME` is where an import files an export's source NAME, and the
///   `imported` flag and the imported basis of an authorization are how it marks
///   them. Only an import — inside its open transaction (rule E11) — registers,
///   renames or marks imported an app there, decides on an imported basis, or acts
///   as an imported source (saves, deletes, requests, associations, activities). The
///   owner's own acts (deleting any sample, answering for any app) stay the owner's.
/// - E14: a new app's bundle identifier is HealthKit's kind — 1 to 255 of
///   `A–Z a–z 0–9 . -` — unless it is an importer's `export:NAME` (NAME as the
///   export spells it: spaces, apostrophes, any Unicode), which E13 governs.
enum AppendRules {
    /// The bundle-identifier prefix of the sources an import brings (`export:NAME`).
    static let importedNamespace = "export:"

    /// The most bytes of a bundle identifier (as a source priority list allows, E8).
    static let maxBundleIdentifierBytes = 255

    /// Whether `registration` is an imported source: marked so, or in the importer's namespace.
    static func isImportedSource(_ registration: AppRegistration) -> Bool {
        registration.imported || registration.bundleIdentifier.hasPrefix(importedNamespace)
    }

    /// Throws the first of E13 and E14 that `facts` break in `state`.
    static func check(_ facts: EventFacts, in state: borrowing LedgerState) throws(RuleViolation) {
        let importing = state.openTransaction != nil
        switch facts {
        case .samplesSaved(let app, _, _):
            try requireImport(as: app, importing, state, "saves samples")
        case .other(let event):
            switch event {
            case .appRegistered(let ordinal, let registration):
                let bundle = registration.bundleIdentifier
                let existing = state.registry.registration(ordinal)
                if existing == nil, !bundle.hasPrefix(importedNamespace) { try checkBundleIdentifier(bundle) }
                guard isImportedSource(registration) || existing.map(isImportedSource) == true else { return }
                guard importing else {
                    throw .reservedForImports("\(bundle): only an import registers or renames an app named \(importedNamespace)NAME "
                                              + "or marks an app imported (the importer's sources)")
                }
                guard registration.imported == bundle.hasPrefix(importedNamespace) else {
                    throw .reservedForImports("\(bundle): an import's sources are named \(importedNamespace)NAME and marked imported, "
                                              + "both or neither")
                }
            case .authorizationRequested(let app, _, _):
                try requireImport(as: app, importing, state, "asks for permissions")
            case .authorizationDecided(let decision):
                if decision.basis == .imported, !importing {
                    throw .reservedForImports("\(state.registry.label(decision.app)): only an import decides on an imported basis")
                }
            case .samplesDeleted(.app(let app), _, _):
                try requireImport(as: app, importing, state, "deletes samples")
            case .samplesAssociated(let app, _, _):
                try requireImport(as: app, importing, state, "associates samples with a workout")
            case .workoutActivitiesAdded(.app(let app), _, _):
                try requireImport(as: app, importing, state, "adds workout activities")
            default:
                return
            }
        }
    }

    /// E13: an imported source acts only inside an import.
    private static func requireImport(as app: AppOrdinal, _ importing: Bool, _ state: borrowing LedgerState,
                                      _ action: String) throws(RuleViolation) {
        guard !importing, let registration = state.registry.registration(app), isImportedSource(registration) else { return }
        throw .reservedForImports("\(registration.bundleIdentifier) is an imported source: only an import \(action) as it")
    }

    /// E14: 1 to 255 of `A–Z a–z 0–9 . -`.
    static func checkBundleIdentifier(_ bundle: String) throws(RuleViolation) {
        guard bundle.utf8.count <= maxBundleIdentifierBytes else {
            throw .invalidBundleIdentifier(bundle, "has \(bundle.utf8.count) bytes, more than \(maxBundleIdentifierBytes)")
        }
        for c in bundle.unicodeScalars where !isBundleIdentifierScalar(c) {
            let shown = (0x21...0x7E).contains(c.value) ? "'\(c)'" : "U+" + String(c.value, radix: 16, uppercase: true)
            throw .invalidBundleIdentifier(bundle, "holds \(shown), which no bundle identifier does (A–Z, a–z, 0–9, '.', '-')")
        }
    }

    private static func isBundleIdentifierScalar(_ c: Unicode.Scalar) -> Bool {
        switch c.value {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2E, 0x2D: true
        default: false
        }
    }
}
