import Foundation
import LedgerCore
import Synchronization

/// Samples read in place (`PlainQuantityBytes`) waiting to be written, in order, and
/// written over the machine's cores: the reads stay on one thread (the read engine's
/// order), the writing — three quarters of a plain sample's cost — is shared.
///
/// Invariant: `flush` appends exactly what writing each sample in turn on one
/// thread appends; the parts are contiguous slices, each written into its own
/// buffer by one thread, joined in order after every part is written.
package struct PlainSampleBatch: Sendable {
    package private(set) var samples: [PlainQuantityBytes] = []
    /// Samples held before a flush: enough for every core to have a long run, few
    /// enough that the batch's bytes stay in cache (about 60 bytes of record each).
    package static let capacity = 8192
    /// Each part's buffer, kept from flush to flush: a megabyte allocated anew for every
    /// part of every flush was mapped and zeroed by the kernel each time (a fifth of a
    /// 1M-sample query's time, `perf`: `clear_page_erms`).
    private let partBuffers = PartBuffers()
    /// Below this a batch is written on the calling thread (handing out costs more).
    static let parallelThreshold = 1024

    package init() {}

    /// Holds `s`; true when the batch is full (the caller flushes).
    package mutating func append(_ s: PlainQuantityBytes) -> Bool {
        samples.append(s)
        return samples.count >= Self.capacity
    }

    package var isEmpty: Bool { samples.isEmpty }

    /// Appends every held sample as `write` writes it, in order, to `out`, and empties
    /// the batch. `write` runs on several threads at once, each on its own buffer.
    package mutating func flush(into out: inout [UInt8],
                                _ write: @Sendable (PlainQuantityBytes, inout [UInt8]) -> Void) {
        defer { samples.removeAll(keepingCapacity: true) }
        let parts = min(ProcessInfo.processInfo.activeProcessorCount, 8)
        guard parts > 1, samples.count >= Self.parallelThreshold else {
            for s in samples { write(s, &out) }
            return
        }
        let all = samples
        let buffers = partBuffers
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            let from = all.count * part / parts, to = all.count * (part + 1) / parts
            var bytes = buffers.take(part)
            bytes.reserveCapacity((to - from) * 240)
            // Through the buffer: each sample is lent to `write`, not copied (a copy
            // retains its payload and its source's strings, and releases them after).
            unsafe all.withUnsafeBufferPointer { held in
                for i in from..<to { write(unsafe held[i], &bytes) }
            }
            buffers.put(bytes, at: part)
        }
        buffers.appendAll(parts, to: &out)
    }
}

/// The buffers of a batch's parts, lent to one thread at a time and kept, emptied, for
/// the next flush.
private final class PartBuffers: Sendable {
    private let held = Mutex<[[UInt8]]>([])

    /// Part `part`'s buffer, empty (with the capacity it had), taken out of the set.
    func take(_ part: Int) -> [UInt8] {
        held.withLock { buffers in
            guard part < buffers.count else { return [] }
            var taken: [UInt8] = []
            swap(&taken, &buffers[part])
            taken.removeAll(keepingCapacity: true)
            return taken
        }
    }

    /// Puts part `part`'s buffer back, written.
    func put(_ bytes: consuming [UInt8], at part: Int) {
        held.withLock { buffers in
            while buffers.count <= part { buffers.append([]) }
            buffers[part] = bytes
        }
    }

    /// Appends parts 0..<`count`, in order, to `out`.
    func appendAll(_ count: Int, to out: inout [UInt8]) {
        held.withLock { buffers in
            for part in 0..<min(count, buffers.count) { out.append(contentsOf: buffers[part]) }
        }
    }
}
