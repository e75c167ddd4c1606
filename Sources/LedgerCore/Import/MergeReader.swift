import Foundation
import HealthModel

/// Where an import's merge reads the ledger's projections: the ledger itself (inside
/// the import's transaction once it has begun: its own events included), or
/// projections loaded without a writer (a dry run; the check an importer makes before
/// it opens a ledger for writing). The importer asks its questions here and never
/// holds the projections: what it may learn of them is these methods.
package struct MergeReader: Sendable {
    private enum Source: Sendable {
        case ledger(Ledger)
        case loaded(LoadedProjections)
    }
    private let source: Source

    /// The ledger, read through its actor (`Ledger.read`, or `read(in:)` inside a
    /// transaction).
    package init(_ ledger: Ledger) { source = .ledger(ledger) }

    /// Projections loaded without a writer (nil: no ledger yet — an empty one).
    package init(loadedFrom ledger: consuming ReadOnlyLedger?) {
        source = .loaded(LoadedProjections(ledger?.projections() ?? LedgerState()))
    }

    /// The ledger this reader reads, when it is one (nil: loaded projections).
    package var ledger: Ledger? {
        if case .ledger(let ledger) = source { return ledger }
        return nil
    }

    private func read<T: Sendable>(in transaction: ImportTransaction?,
                                   _ body: @Sendable (inout LedgerState) throws -> T) async throws -> T {
        switch source {
        case .ledger(let ledger):
            if let transaction { return try await ledger.read(in: transaction, body) }
            return try await ledger.read(body)
        case .loaded(let holder):
            return try body(&holder.state)
        }
    }

    /// The imports so far, in log order, and the next event's sequence number.
    package func imports(in transaction: ImportTransaction? = nil) async throws -> (imports: [ImportEntry], nextSequence: UInt64) {
        try await read(in: transaction) { ($0.imports, $0.lastSequence + 1) }
    }

    /// A merge against the ledger as it is now (its samples so far are the ones an
    /// export may have in common or leave absent).
    package func startMerge(in transaction: ImportTransaction? = nil) async throws -> ImportMerge {
        ImportMerge(priorSlots: try await read(in: transaction) { $0.samples.count })
    }

    /// Whether the ledger holds anything a merge could remove: a live sample of an
    /// imported source, or an activity summary.
    package func holdsLiveImports() async throws -> Bool {
        try await read(in: nil) { ImportMerge.holdsLiveImports(in: $0) }
    }

    /// `commands` without what the ledger already holds (`ImportMerge.filter`); the
    /// merge counts and marks what it met.
    package func filter(_ commands: [LedgerCommand], by merge: ImportMerge,
                        in transaction: ImportTransaction? = nil) async throws -> [LedgerCommand] {
        try await read(in: transaction) { state in try merge.filter(commands, in: state) }
    }

    /// What the export no longer holds, once every batch was filtered: the samples of
    /// imported sources not met, and the activity-summary days not in the export.
    package func absences(of merge: ImportMerge, in transaction: ImportTransaction? = nil) async throws
        -> (objects: [DeletedObject], days: [DateOfBirth]) {
        try await read(in: transaction) { state in try merge.absences(in: state) }
    }

    /// Whether an earlier import had the same content (the export's SHA-256).
    package func holdsImport(ofContent hash: [UInt8], in transaction: ImportTransaction? = nil) async throws -> Bool {
        try await read(in: transaction) { !$0.imports(ofContent: hash).isEmpty }
    }

    /// Whether loaded projections are intact (a mapped snapshot found damaged is not:
    /// rule S8). Always true of a ledger read through its actor.
    package func projectionsAreIntact() async -> Bool {
        (try? await read(in: nil) { state in try state.checkIntact() }) != nil
    }
}

/// Projections read by one task at a time (a dry run's, an importer's check).
private final class LoadedProjections: @unchecked Sendable {
    var state: LedgerState
    init(_ state: LedgerState) { self.state = state }
}
