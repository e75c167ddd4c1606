import Foundation
import LedgerChecksums

/// SHA-256 of buffers handed over one at a time, computed on a thread of its own while
/// the caller fills the next: `DigestWriter`'s second half once a digest outgrows one
/// buffer. The digest of a million-sample ledger hashes about 60 MB, and `replay`,
/// `verify` and every snapshot write waited for it on one core (perf: a tenth of
/// `replay --no-snapshot` at 1M events, the other core idle).
///
/// Invariants: buffers are hashed in the order handed over, each whole, by the hashing
/// thread only; at most one buffer waits or is being hashed (`hand` waits for the one
/// before), so a caller with two buffers may fill one while the other is hashed, and
/// after `hand` returns the buffer handed *before* is free again; `finish` hashes
/// nothing more, ends the thread and returns the state after every buffer.
final class BackgroundHasher: @unchecked Sendable {
    // @unchecked: `pending`, `finished` and `exited` are only touched with `condition`
    // locked; `hash` only by the hashing thread until it has exited, then by `finish`.
    private let condition = NSCondition()
    private var pending: UnsafeRawBufferPointer?
    private var finished = false
    private var exited = false
    private var hash: SHA256

    /// Starts the hashing thread, continuing from `hash` (what was hashed so far).
    init(continuing hash: SHA256) {
        self.hash = hash
        let thread = Thread { [self] in run() }
        thread.stackSize = 256 << 10
        thread.start()
    }

    /// Hands `buffer` over to be hashed after everything handed before; waits while
    /// the previous buffer is still being hashed. `buffer` must stay unchanged until
    /// the next `hand` (or `finish`) returns.
    func hand(_ buffer: UnsafeRawBufferPointer) {
        condition.lock()
        while pending != nil { condition.wait() }
        precondition(!finished, "nothing is handed over after finish")
        pending = buffer
        condition.broadcast()
        condition.unlock()
    }

    /// Waits for every buffer handed over to be hashed, ends the thread and returns
    /// the hash state. Idempotent.
    func finish() -> SHA256 {
        condition.lock()
        finished = true
        condition.broadcast()
        while !exited { condition.wait() }
        condition.unlock()
        return hash
    }

    private func run() {
        while true {
            condition.lock()
            while pending == nil && !finished { condition.wait() }
            guard let buffer = pending else {
                exited = true
                condition.broadcast()
                condition.unlock()
                return
            }
            condition.unlock()
            hash.update(buffer)
            condition.lock()
            pending = nil
            condition.broadcast()
            condition.unlock()
        }
    }
}
