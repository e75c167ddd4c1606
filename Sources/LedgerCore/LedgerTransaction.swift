import Foundation
import LedgerLog

/// An import transaction open on a ledger (rule E11): what its importer holds and
/// passes to the calls that work inside it. Everyone else waits until it ends.
package struct ImportTransaction: Sendable, Hashable {
    /// The import (its `importStarted`).
    package let importId: UUID
    /// The sequence number of its `importStarted`.
    package let startedAt: UInt64
}

/// Why a transactional call was refused.
package enum ImportTransactionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The call named a transaction that is not the one open (ended, or never began).
    case notOpen(UUID)

    package var description: String {
        switch self {
        case .notOpen(let id): "importTransactionNotOpen: import \(id.uuidString) is not the open import transaction [E11]"
        }
    }
}

extension Ledger {
    /// Waits while an import transaction runs (another caller's).
    func admit() async {
        while transaction != nil {
            await withCheckedContinuation { waitingForTransaction.append($0) }
        }
    }

    private func endTransaction() {
        transaction = nil
        let waiting = waitingForTransaction
        waitingForTransaction = []
        for continuation in waiting { continuation.resume() }
        signalCommitted()
    }

    private func require(_ t: ImportTransaction) throws(ImportTransactionError) {
        guard transaction == t else { throw .notOpen(t.importId) }
    }

    /// Begins an import transaction: appends `start` (a transaction's, version 2) as a
    /// batch of its own. Until `commitImport` or `abortImport`, only the calls that
    /// take the returned transaction run; every other read and write of this ledger
    /// waits, and no other process's replay applies anything of it (rule E11).
    /// Throws `RuleViolation` (an id seen before) or a log error; nothing begins then.
    package func beginImport(_ start: ExportImportStart) async throws -> ImportTransaction {
        precondition(start.isTransaction, "an import transaction begins with a version 2 importStarted")
        await admit()
        // The transaction is open from the moment its start is folded, before the
        // first suspension: a caller let in while the start is waited for would land
        // its events inside the import (and an abort would drop them).
        let enqueued = try enqueueDecided([.startImport(start)], allOrNothing: true, keepEvents: false)
        guard let ticket = enqueued.ticket, ticket.sequences.count == 1 else {
            preconditionFailure("an import's start is one event")
        }
        let t = ImportTransaction(importId: start.importId, startedAt: ticket.sequences.lowerBound)
        transaction = t
        do {
            try await wait(for: ticket, durability: .deferred)
        } catch {
            // The ledger has failed (it refuses every write): end the transaction so that
            // readers are let in; the start stays unapplied for them (see abortImport).
            forgetFailedImport()
            endTransaction()
            throw error
        }
        return t
    }

    /// `appendBestEffort` inside the transaction `t`: its events apply for other
    /// readers only when it commits.
    package func appendBestEffort(_ commands: [LedgerCommand], durability: Durability = .deferred,
                                  keepingEvents: Bool = false, in t: ImportTransaction) async throws -> GroupOutcome {
        try require(t)
        return try await appendAdmitted(commands, durability: durability, keepEvents: keepingEvents)
    }

    /// Reads the projections inside the transaction `t`: its own events included.
    package func read<T>(in t: ImportTransaction, _ body: (inout LedgerState) throws -> T) throws -> T {
        try require(t)
        return try readAdmitted(body)
    }

    /// Commits the transaction `t`: its `absentFromExport` (when given) and
    /// `importFinished` in one batch, durable. From then on the import's events apply
    /// for every reader. Throws a `RuleViolation` (the transaction stays open: abort
    /// it) or a log error.
    @discardableResult
    package func commitImport(_ t: ImportTransaction, absence: ExportAbsence?, finish: ExportImportFinish) async throws
        -> [StoredEvent] {
        try require(t)
        precondition(finish.importId == t.importId && absence.map { $0.importId == t.importId } ?? true,
                     "a transaction commits its own import")
        var commands: [LedgerCommand] = []
        if let absence { commands.append(.removeAbsent(absence)) }
        commands.append(.finishImport(finish))
        // All or nothing, without `appendAllOrNothing`'s copy of the projections (the
        // absence may delete thousands of samples): the two commands do not depend on
        // each other's effects, so each is first decided against the state as it is.
        for command in commands { _ = try LedgerDecider.decide(command, state) }
        var stored: [StoredEvent] = []
        let results = try await appendAdmitted(commands, durability: .durable, keepEvents: true).results
        for r in results {
            switch r {
            case .success(let events): stored += events
            case .failure(let violation): throw violation
            }
        }
        endTransaction()
        return stored
    }

    /// Aborts the transaction `t`: appends `importAborted`, durable, and rebuilds the
    /// projections without the import (none of its events applies, rule E11). The
    /// events stay in the log (append-only: others may have read them). Throws a log
    /// error (the ledger then fails; its next open aborts the import again).
    package func abortImport(_ t: ImportTransaction, reason: String) async throws {
        try require(t)
        defer { endTransaction() }
        if let failure {
            forgetFailedImport()
            throw LedgerError.failed(cause: failure)
        }
        do {
            try await appendAbort(ExportImportAbort(importId: t.importId, reason: reason))
        } catch {
            forgetFailedImport()
            throw error
        }
        try reloadState()
    }
}
