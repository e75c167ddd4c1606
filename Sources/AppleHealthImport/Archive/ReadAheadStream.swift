import Foundation

/// Reads (and inflates, and hashes, whatever `inner` does) a stream on a thread of
/// its own, a few chunks ahead of the consumer, so that that work overlaps with
/// parsing. Memory: at most `depth` chunks of `chunkSize` bytes. Dropping the
/// stream before its end stops the thread.
final class ReadAheadStream: ByteStream {
    private let shared: Shared
    private var current: [UInt8] = []
    private var position = 0

    /// What the reading thread and the consumer share. The thread holds this, not
    /// the stream, so the stream's deinit can tell it to stop.
    private final class Shared: @unchecked Sendable {
        // @unchecked: `ready`, `done`, `failure` and `stopped` are guarded by
        // `condition`; `inner` is used only by the reading thread.
        let inner: ByteStream
        let condition = NSCondition()
        var ready: [[UInt8]] = []
        var done = false
        var failure: Error?
        var stopped = false
        let depth: Int
        let chunkSize: Int

        init(inner: ByteStream, depth: Int, chunkSize: Int) {
            self.inner = inner
            self.depth = depth
            self.chunkSize = chunkSize
        }

        func run() {
            while true {
                var chunk = [UInt8](repeating: 0, count: chunkSize)
                var filled = 0
                var error: Error?
                do {
                    while filled < chunkSize {
                        let n = try chunk.withUnsafeMutableBytes { b in
                            try inner.read(into: UnsafeMutableRawBufferPointer(rebasing: b[filled...]))
                        }
                        if n == 0 { break }
                        filled += n
                    }
                } catch let e {
                    error = e
                }
                chunk.removeLast(chunkSize - filled)
                condition.lock()
                while ready.count >= depth && !stopped { condition.wait() }
                if stopped {
                    condition.unlock()
                    return
                }
                if filled > 0 { ready.append(chunk) }
                if let error { failure = error }
                let finished = error != nil || filled < chunkSize
                if finished { done = true }
                condition.broadcast()
                condition.unlock()
                if finished { return }
            }
        }
    }

    /// Invariant: once `read` has returned 0, the thread has returned after its last
    /// read of `inner` (it set `done` under the lock), so `inner`'s state (a hash,
    /// a CRC check) is complete and visible to the consumer.
    init(_ inner: ByteStream, chunkSize: Int = 1 << 20, depth: Int = 4) {
        shared = Shared(inner: inner, depth: depth, chunkSize: chunkSize)
        let thread = Thread { [shared] in shared.run() }
        thread.name = "healthledger.import.read"
        thread.start()
    }

    deinit {
        shared.condition.lock()
        shared.stopped = true
        shared.condition.broadcast()
        shared.condition.unlock()
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if position == current.count {
            let s = shared
            s.condition.lock()
            while s.ready.isEmpty && !s.done { s.condition.wait() }
            if s.ready.isEmpty {
                let failure = s.failure
                s.condition.unlock()
                if let failure { throw failure }
                return 0
            }
            current = s.ready.removeFirst()
            position = 0
            s.condition.broadcast()
            s.condition.unlock()
        }
        let n = min(buffer.count, current.count - position)
        current.withUnsafeBytes { src in
            buffer.baseAddress!.copyMemory(from: src.baseAddress! + position, byteCount: n)
        }
        position += n
        return n
    }
}
