import Foundation
import LedgerChecksums

/// The writer's flusher thread: the one thread that writes and syncs the log.
extension LogWriter {
    // MARK: The flusher thread

    /// What a caller must do, outside the state lock, after giving the flusher work.
    enum FlusherWake {
        case none
        case signal
        case start
    }

    /// Decides (under the state lock) how the flusher learns of new work: it is
    /// started the first time, signalled when asleep, and otherwise sees the work
    /// when it next looks (it looks under the lock before it sleeps).
    static func wakeFlusher(_ s: inout State) -> FlusherWake {
        if !s.flusherStarted {
            s.flusherStarted = true
            return .start
        }
        if s.flusherAsleep {
            s.flusherAsleep = false
            return .signal
        }
        return .none
    }

    func perform(_ wake: FlusherWake) {
        switch wake {
        case .none: break
        case .signal: state.signal()
        case .start: startFlusher()
        }
    }

    /// Starts the writer's own thread for writes and syncs. It holds the writer
    /// only while it works, so a writer dropped without closing ends it (`deinit`).
    func startFlusher() {
        let state = self.state
        let thread = Thread { [weak self] in
            // Set from the thread itself: Linux keeps at most 15 bytes of a thread's name.
            Thread.current.name = LogWriter.flusherThreadName
            while true {
                let stop = state.wait(until: { s in
                    if s.flusherStopping || s.flusherHasWork {
                        s.flusherAsleep = false
                        return true
                    }
                    s.flusherAsleep = true
                    return false
                }, then: { s in s.flusherStopping })
                guard !stop, let writer = self else { return }
                writer.flushUntilIdle()
            }
        }
        thread.start()
    }

    /// The flusher thread's name (what `top -H` and a debugger show).
    package static let flusherThreadName = "ledger.flusher"

    struct FlushWork {
        let buffers: [[UInt8]]
        let offset: UInt64
        let sync: Bool
        let allocate: UInt64?
        /// The file size this writer left: anything else means someone else wrote (W7).
        let expectedSize: UInt64
    }

    enum FlushStep {
        case idle
        case write(FlushWork)
        case close(CloseWork)
    }

    /// The group-commit loop, on the flusher thread: write everything pending, sync
    /// if anyone waits for durability, resume whoever is covered, repeat until there
    /// is nothing to do. Only this thread writes to the file while the writer is open.
    func flushUntilIdle() {
        while true {
            let step = state.withLock { s -> FlushStep in
                if s.poisoned != nil { return .idle }
                if let closing = s.closing, s.pending.isEmpty {
                    s.closing = nil
                    return .close(closing)
                }
                let needSync = s.needsSync
                if s.pending.isEmpty && !needSync {
                    s.writeBehindRequested = false
                    return .idle
                }
                let buffers = s.pending
                s.pending = []
                s.pendingBytes = 0
                s.writeBehindRequested = false
                let end = s.writtenLength + UInt64(buffers.reduce(0) { $0 + $1.count })
                var allocate: UInt64?
                if end > s.allocatedLength, allocationChunk > 0, !s.allocationFailed {
                    let target = (end + allocationChunk - 1) / allocationChunk * allocationChunk
                    allocate = target
                    s.allocatedLength = target
                }
                return .write(FlushWork(buffers: buffers, offset: s.writtenLength, sync: needSync, allocate: allocate,
                                        expectedSize: s.physicalLength))
            }
            switch step {
            case .idle:
                return
            case .close(let work):
                finishClose(work)
            case .write(let work):
                do {
                    try flush(work)
                } catch {
                    poison(error)
                    return
                }
            }
        }
    }

    /// One round: reserve, write, publish the written length (waking readers and
    /// deferred waiters before the sync), sync, publish the durable length.
    func flush(_ work: FlushWork) throws {
        // W7: before writing, the log must be exactly as this writer left it (one
        // fstat); a change means another writer or a truncation, and writing now
        // could overwrite acknowledged bytes.
        try checkUnchanged(expectedSize: work.expectedSize)
        var physical = work.expectedSize
        var reservationFailed = false
        if let target = work.allocate {
            do {
                try file.allocate(upTo: target)
                physical = max(physical, target)
            } catch LogError.noSpace {
                // A nearly full disk: append without reserving (the appends may
                // still fit). A partial reservation reads as zeros (Z1).
                physical = try file.size()
                reservationFailed = true
            }
        }
        var offset = work.offset
        for buffer in work.buffers {
            try buffer.withUnsafeBytes { try file.write($0, at: offset) }
            offset += UInt64(buffer.count)
        }
        physical = max(physical, offset)
        let written = offset
        // Only now, with the bytes in the file, is the written length published.
        publish { s in
            s.writtenLength = written
            s.physicalLength = physical
            if reservationFailed {
                s.allocationFailed = true
                s.allocatedLength = physical
            }
        }
        if work.sync {
            try file.sync()
            publish { s in s.durableLength = written }
        } else if written > work.offset {
            file.beginWriteback(offset: work.offset, length: written - work.offset)
        }
    }

    /// Changes the published lengths and resumes, outside the lock, every waiter
    /// they now cover.
    func publish(_ change: (inout State) -> Void) {
        let covered = state.withLock { s -> [Waiter] in
            change(&s)
            precondition(s.durableLength <= s.writtenLength && s.writtenLength <= s.encodedLength,
                         "durableLength ≤ writtenLength ≤ encodedLength")
            let (written, durable) = (s.writtenLength, s.durableLength)
            var covered: [Waiter] = []
            s.waiters.removeAll { w in
                guard (w.durable ? durable : written) >= w.end else { return false }
                covered.append(w)
                return true
            }
            return covered
        }
        for w in covered { w.continuation.resume() }
    }

    /// W7: throws `exclusiveAccessLost` unless the log file has the size this writer left.
    func checkUnchanged(expectedSize: UInt64) throws {
        let size = try file.size()
        guard size == expectedSize else {
            throw LogError.exclusiveAccessLost(path: fs.path + "/" + Self.logFileName,
                                               reason: "the log is \(size) bytes where this writer left \(expectedSize)")
        }
    }

    /// Stops the writer after a failed write or sync: the appends waiting on that
    /// flush (and a close waiting for its seal) get `error` itself (e.g. `noSpace`),
    /// every later call `writerPoisoned`.
    func poison(_ error: Error) {
        // The file system throws `LogError`s; anything else is kept by its description.
        let cause = error as? LogError ?? .io(operation: String(describing: error), path: fs.path + "/" + Self.logFileName, errno: 0)
        let (waiters, closing) = state.withLock { s -> ([Waiter], CloseWork?) in
            s.poisoned = cause
            s.pending = []
            s.pendingBytes = 0
            s.writeBehindRequested = false
            defer {
                s.waiters = []
                s.closing = nil
            }
            return (s.waiters, s.closing)
        }
        for w in waiters { w.continuation.resume(throwing: error) }
        closing?.continuation.resume(throwing: error)
    }

    /// Ends the flusher thread (after its current round).
    func stopFlusher() {
        state.withLock { $0.flusherStopping = true }
        state.signal()
    }

    /// Releases the log's lock and the folder's.
    func releaseLocks() {
        file.unlock()
        lock.release()
    }
}
