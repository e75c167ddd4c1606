import Foundation
import LedgerLog

extension Ledger {
    /// Returns true as soon as an event after `sequence` is committed (durable and
    /// readable: an import's events once it commits), false when `timeout` seconds
    /// pass first or the caller's task is cancelled. What a long poll waits on: no
    /// thread is held while it waits.
    ///
    /// The deadline is a child task and a cancellation resumes the waiter at once,
    /// without a task of its own: nothing here leaves the caller's task executor (a
    /// server's own threads), so a shared cooperative pool that other work holds
    /// cannot delay an answer. (Unstructured tasks for the deadline and the
    /// cancellation let a cancelled poll wait 89 s for a free pool thread.)
    public func waitForCommit(after sequence: UInt64, timeout: Double) async -> Bool {
        if lastCommittedSequence > sequence { return true }
        guard timeout > 0, !Task.isCancelled else { return false }
        let id = nextCommitWaiter
        nextCommitWaiter += 1
        let waiter = CommitWaiter()
        commitWaiters[id] = (sequence, waiter)
        let nanoseconds = UInt64(min(timeout, 86_400) * 1e9)
        let committed = await withTaskCancellationHandler {
            await withTaskGroup(of: Bool.self) { group in
                group.addTask { await waiter.outcome() }
                group.addTask {
                    try? await Task.sleep(nanoseconds: nanoseconds)
                    waiter.resume(false)  // the deadline (a no-op once a commit or a cancellation came first)
                    return false
                }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
        } onCancel: {
            waiter.resume(false)
        }
        commitWaiters[id] = nil
        return committed
    }

    /// The last sequence a reader may see as committed: the projections' last one,
    /// but not while an import transaction is open (its events are not yet committed).
    public var lastCommittedSequence: UInt64 {
        transaction == nil ? state.lastSequence : (state.openTransaction.map { $0.startedAt - 1 } ?? state.lastSequence)
    }

    /// Resumes every waiter a commit satisfies (after each durable append and each
    /// transaction's end).
    func signalCommitted() {
        let committed = lastCommittedSequence
        for (id, waiter) in commitWaiters where committed > waiter.after {
            commitWaiters[id] = nil
            waiter.resume.resume(true)
        }
    }
}

/// One `waitForCommit`'s outcome, settled once by whichever comes first — a commit,
/// the deadline or a cancellation — from any thread, without the ledger's actor.
///
/// Invariant: `continuation` is resumed at most once, and `outcome()` returns the
/// first value given to `resume` whether it was asked before or after.
final class CommitWaiter: Sendable {
    private struct State {
        var settled: Bool?
        var continuation: CheckedContinuation<Bool, Never>?
    }
    private let state = Locked(State())

    /// Settles the outcome (the first call wins; later ones do nothing).
    func resume(_ value: Bool) {
        let waiting = state.withLock { s -> CheckedContinuation<Bool, Never>? in
            guard s.settled == nil else { return nil }
            s.settled = value
            defer { s.continuation = nil }
            return s.continuation
        }
        waiting?.resume(returning: value)
    }

    /// The settled outcome, waiting for it if it has not come yet.
    func outcome() async -> Bool {
        await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            let settled = state.withLock { s -> Bool? in
                if s.settled == nil { s.continuation = c }
                return s.settled
            }
            if let settled { c.resume(returning: settled) }
        }
    }
}
