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
        let buffers = Mutex([[UInt8]](repeating: [], count: parts))
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            let from = all.count * part / parts, to = all.count * (part + 1) / parts
            var bytes: [UInt8] = []
            bytes.reserveCapacity((to - from) * 240)
            for i in from..<to { write(all[i], &bytes) }
            buffers.withLock { $0[part] = bytes }
        }
        buffers.withLock { parts in
            for part in parts { out.append(contentsOf: part) }
        }
    }
}
