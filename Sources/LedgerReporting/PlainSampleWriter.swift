import Foundation
import LedgerCore

/// Samples read in place (`PlainQuantityBytes`) written as bytes on a thread of their
/// own while the calling thread reads on: the read engine's thread hands over full
/// batches and goes back to reading; the writer thread turns each batch into bytes and
/// emits them, batch after batch, in the order they were handed over.
///
/// A 1M-sample `query --json` spent about two fifths of its CPU writing JSON; written
/// in parts over the cores after each batch was read (`PlainSampleBatch.flush`), the
/// reading thread waited for its share of every batch and the other core idled while
/// it read the next. Here reading and writing overlap.
///
/// Invariants: `emit` receives exactly the bytes that writing each handed-over sample
/// in turn gives, in order, from the writer thread only; at most `depth` batches wait,
/// so memory is a few batches whatever the answer's size; after `drain()` returns
/// every sample appended before it has been emitted, so the caller may write output
/// of its own (a sample the engine decoded, a trailer) without racing the writer.
/// The owner calls `finish()` when done (a `defer`): until then the thread waits for
/// batches.
package final class PlainSampleWriter: @unchecked Sendable {
    // @unchecked: `waiting`, `writing`, `spare` and `finished` are only touched with
    // `condition` locked; `batch` only by the calling thread; the closures are Sendable.
    private let condition = NSCondition()
    private var waiting: [[PlainQuantityBytes]] = []
    private var writing = false
    private var finished = false
    private var exited = false
    /// Emptied batches the writer hands back, their capacity kept.
    private var spare: [[PlainQuantityBytes]] = []
    private var batch: [PlainQuantityBytes] = []
    private let write: @Sendable (PlainQuantityBytes, inout [UInt8]) -> Void
    private let emit: @Sendable ([UInt8]) -> Void

    /// Samples per batch handed over.
    package static let capacity = PlainSampleBatch.capacity
    /// Batches that may wait for the writer before `append` waits.
    package static let depth = 2

    /// Starts the writer thread. `write` appends one sample's bytes; `emit` receives
    /// each batch's bytes (on the writer thread).
    package init(write: @escaping @Sendable (PlainQuantityBytes, inout [UInt8]) -> Void,
                 emit: @escaping @Sendable ([UInt8]) -> Void) {
        self.write = write
        self.emit = emit
        batch.reserveCapacity(Self.capacity)
        let thread = Thread { [self] in run() }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Holds `sample`; a full batch is handed to the writer (waiting while `depth`
    /// batches already wait).
    package func append(_ sample: consuming PlainQuantityBytes) {
        batch.append(consume sample)
        if batch.count >= Self.capacity { handOver() }
    }

    /// Hands over what is held and waits until every sample appended so far has been
    /// emitted.
    package func drain() {
        if !batch.isEmpty { handOver() }
        condition.lock()
        while !waiting.isEmpty || writing { condition.wait() }
        condition.unlock()
    }

    /// Ends the writer thread after the batches already handed over are emitted; the
    /// samples held and not handed over are dropped (a read that failed part way: the
    /// batch it was filling is not written, as before). Call `drain()` first to keep
    /// them. Idempotent.
    package func finish() {
        condition.lock()
        finished = true
        condition.broadcast()
        while !exited { condition.wait() }
        condition.unlock()
        batch.removeAll()
    }

    private func handOver() {
        condition.lock()
        while waiting.count >= Self.depth { condition.wait() }
        waiting.append(batch)
        batch = spare.popLast() ?? []
        condition.broadcast()
        condition.unlock()
        if batch.capacity < Self.capacity { batch.reserveCapacity(Self.capacity) }
    }

    private func run() {
        var bytes: [UInt8] = []
        while true {
            condition.lock()
            while waiting.isEmpty && !finished { condition.wait() }
            if waiting.isEmpty {
                exited = true
                condition.broadcast()
                condition.unlock()
                return
            }
            var next = waiting.removeFirst()
            writing = true
            condition.unlock()

            bytes.removeAll(keepingCapacity: true)
            bytes.reserveCapacity(next.count * 240)
            // Through the buffer: each sample is lent to `write`, not copied (a copy
            // retains its payload and its source's strings, and releases them after).
            unsafe next.withUnsafeBufferPointer { held in
                for i in held.indices { write(unsafe held[i], &bytes) }
            }
            emit(bytes)
            next.removeAll(keepingCapacity: true)

            condition.lock()
            writing = false
            if spare.count < Self.depth + 1 { spare.append(next) }
            condition.broadcast()
            condition.unlock()
        }
    }
}
