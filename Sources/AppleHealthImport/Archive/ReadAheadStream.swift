import Foundation
import LedgerLog  // BoundedHandOff

/// Reads (and inflates, and hashes, whatever `inner` does) a stream on a thread of
/// its own, a few chunks ahead of the consumer, so that that work overlaps with
/// parsing. Memory: at most `depth` chunks of `chunkSize` bytes, plus the one being
/// read and the one being filled. Dropping the stream before its end stops the thread.
///
/// Chunks the consumer is done with go back to the reading thread (`spares`) to be
/// filled again: a chunk is larger than the CLI's mmap threshold, so a fresh one per
/// megabyte would be mapped, faulted in and zeroed by the kernel each time.
final class ReadAheadStream: ByteStream {
    private let queue: BoundedHandOff<[UInt8]>
    private let spares: Locked<[[UInt8]]>
    private var current: [UInt8] = []
    private var position = 0
    /// The reading thread's end: an error, or a chunk shorter than `chunkSize`.
    private var ended = false

    /// What the reading thread holds (not the stream, so the stream's deinit can stop it).
    private struct Reader: @unchecked Sendable {
        // @unchecked: `inner` is used only by the reading thread.
        let inner: ByteStream
        let queue: BoundedHandOff<[UInt8]>
        let spares: Locked<[[UInt8]]>
        let chunkSize: Int

        func run() {
            while true {
                // A spare of the full size is overwritten (only the last chunk is shorter).
                var chunk = spares.withLock { $0.popLast() } ?? []
                if chunk.count != chunkSize { chunk = [UInt8](repeating: 0, count: chunkSize) }
                var filled = 0
                do {
                    while filled < chunkSize {
                        let n = try chunk.withUnsafeMutableBytes { b in
                            try inner.read(into: UnsafeMutableRawBufferPointer(rebasing: b[filled...]))
                        }
                        if n == 0 { break }
                        filled += n
                    }
                } catch {
                    if filled > 0 { chunk.removeLast(chunkSize - filled); _ = queue.put(chunk) }
                    return queue.finish(throwing: error)
                }
                chunk.removeLast(chunkSize - filled)
                if filled > 0, !queue.put(chunk) { return }
                if filled < chunkSize { return queue.finish() }
            }
        }
    }

    /// Invariant: once `read` has returned 0, the thread has returned after its last
    /// read of `inner` (it finished the hand-off), so `inner`'s state (a hash, a CRC
    /// check) is complete and visible to the consumer.
    init(_ inner: ByteStream, chunkSize: Int = 1 << 20, depth: Int = 4) {
        queue = BoundedHandOff(capacity: depth)
        spares = Locked([])
        let reader = Reader(inner: inner, queue: queue, spares: spares, chunkSize: chunkSize)
        let thread = Thread { reader.run() }
        thread.name = "healthledger.import.read"
        thread.start()
    }

    deinit { queue.cancel() }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if position == current.count {
            guard !ended, let next = try queue.next() else {
                ended = true
                return 0
            }
            var done = next
            swap(&done, &current)
            if !done.isEmpty { spares.withLock { $0.append(done) } }  // refilled whole, never read as it is
            position = 0
        }
        let n = min(buffer.count, current.count - position)
        current.withUnsafeBytes { src in
            buffer.baseAddress!.copyMemory(from: src.baseAddress! + position, byteCount: n)
        }
        position += n
        return n
    }
}
