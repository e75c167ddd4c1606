import Foundation
import LedgerLog

extension Ledger {
    /// Returns true as soon as an event after `sequence` is committed (durable and
    /// readable: an import's events once it commits), false when `timeout` seconds
    /// pass first or the caller's task is cancelled. What a long poll waits on: no
    /// thread is held while it waits.
    ///
    /// The deadline runs on `DeadlineThread` and a cancellation resumes the waiter at
    /// once: neither needs a thread of Swift's shared cooperative pool or of Dispatch's,
    /// so work that holds those cannot delay an answer, and the caller resumes on its
    /// own task executor (a server's own threads). (Unstructured tasks for the deadline
    /// and the cancellation let a cancelled poll wait 89 s for a free pool thread; a
    /// child task sleeping until the deadline still needs a pool thread to wake: with
    /// the pool held, a 0.1 s `Task.sleep` or Dispatch timer ends after 1.0 s here, and
    /// CI saw 3.2 s.)
    public func waitForCommit(after sequence: UInt64, timeout: Double) async -> Bool {
        if lastCommittedSequence > sequence { return true }
        guard timeout > 0, !Task.isCancelled else { return false }
        let id = nextCommitWaiter
        nextCommitWaiter += 1
        let waiter = CommitWaiter()
        commitWaiters[id] = (sequence, waiter)
        // A thread of our own, not Swift's pool or Dispatch's (which wake late while
        // other work blocks them). At most a day: `wait=` is an untrusted number.
        let deadline = DeadlineThread.shared.schedule(after: timeout) { waiter.resume(false) }
        let committed = await withTaskCancellationHandler {
            await waiter.outcome()
        } onCancel: {
            waiter.resume(false)
        }
        DeadlineThread.shared.cancel(deadline)  // a no-op once it ran; otherwise it never runs
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
