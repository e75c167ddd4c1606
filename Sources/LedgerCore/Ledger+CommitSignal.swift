import Foundation

extension Ledger {
    /// Returns true as soon as an event after `sequence` is committed (durable and
    /// readable: an import's events once it commits), false when `timeout` seconds
    /// pass first or the caller's task is cancelled. What a long poll waits on: no
    /// thread is held while it waits.
    public func waitForCommit(after sequence: UInt64, timeout: Double) async -> Bool {
        if lastCommittedSequence > sequence { return true }
        guard timeout > 0, !Task.isCancelled else { return false }
        let id = nextCommitWaiter
        nextCommitWaiter += 1
        let nanoseconds = UInt64(min(timeout, 86_400) * 1e9)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
                commitWaiters[id] = (sequence, c)
                Task { [weak self] in
                    try? await Task.sleep(nanoseconds: nanoseconds)
                    await self?.expireCommitWaiter(id)
                }
            }
        } onCancel: {
            Task { [weak self] in await self?.expireCommitWaiter(id) }
        }
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
            waiter.resume.resume(returning: true)
        }
    }

    private func expireCommitWaiter(_ id: UInt64) {
        commitWaiters.removeValue(forKey: id)?.resume.resume(returning: false)
    }
}
