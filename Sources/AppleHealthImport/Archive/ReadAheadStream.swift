import Foundation

/// Reads (and inflates) a stream on a thread of its own, a few chunks ahead of the
/// consumer, so that decompression and copying overlap with parsing. Memory: at
/// most `depth` chunks of `chunkSize` bytes.
final class ReadAheadStream: ByteStream, @unchecked Sendable {
    // @unchecked: `ready`, `done`, `failure` and `stopped` are guarded by `condition`;
    // `inner` is used only by the reading thread once started.
    private let inner: ByteStream
    private let condition = NSCondition()
    private var ready: [[UInt8]] = []
    private var done = false
    private var failure: Error?
    private var stopped = false
    private var current: [UInt8] = []
    private var position = 0
    private let depth: Int
    private let chunkSize: Int

    init(_ inner: ByteStream, chunkSize: Int = 1 << 20, depth: Int = 4) {
        self.inner = inner
        self.chunkSize = chunkSize
        self.depth = depth
        let thread = Thread { [self] in run() }
        thread.name = "healthledger.import.read"
        thread.start()
    }

    deinit {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private func run() {
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

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if position == current.count {
            condition.lock()
            while ready.isEmpty && !done { condition.wait() }
            if ready.isEmpty {
                let failure = self.failure
                condition.unlock()
                if let failure { throw failure }
                return 0
            }
            current = ready.removeFirst()
            position = 0
            condition.broadcast()
            condition.unlock()
        }
        let n = min(buffer.count, current.count - position)
        current.withUnsafeBytes { src in
            buffer.baseAddress!.copyMemory(from: src.baseAddress! + position, byteCount: n)
        }
        position += n
        return n
    }
}
