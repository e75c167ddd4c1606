import Foundation
import LedgerChecksums

/// Closing and abandoning the writer.
extension LogWriter {
    // MARK: Closing

    /// Makes everything durable, appends a seal batch (so that damage to the last
    /// batches is later told apart from a torn write), saves the checkpoint index
    /// and releases the lock. A poisoned writer only releases the lock. The seal's
    /// write and syncs run on the flusher thread, like every other.
    package func close() async throws {
        let poisoned = state.withLock { s -> Bool in
            s.closed = true
            return s.poisoned != nil
        }
        if poisoned {
            stopFlusher()
            releaseLocks()
            return
        }
        do {
            try await sync()
            try await suspendUntilFlushed { continuation in
                let wake = whileSealing {
                    state.withLock { s -> FlusherWake in
                        let (bytes, link) = BatchChain.sealBatch(firstSequence: s.nextSequence, syncedLength: s.durableLength,
                                                                 previousLink: s.link)
                        let offset = s.encodedLength
                        s.link = link
                        s.encodedLength += UInt64(bytes.count)
                        s.checkpoint.coveredLength = s.encodedLength
                        s.checkpoint.nextSequence = s.nextSequence
                        s.checkpoint.link = link
                        s.checkpoint.lastRecordedAt = s.lastRecordedAt
                        s.closing = CloseWork(bytes: bytes, offset: offset, checkpoint: s.checkpoint,
                                              expectedSize: s.physicalLength, continuation: continuation)
                        return Self.wakeFlusher(&s)
                    }
                }
                perform(wake)
            }
        } catch {
            poison(error)
            stopFlusher()
            releaseLocks()
            throw error
        }
        stopFlusher()
        releaseLocks()
    }

    /// `close`'s last step, on the flusher thread: write and sync the seal, give
    /// back the space reserved ahead of the log (a closed log ends at its seal),
    /// sync, save the checkpoint index.
    func finishClose(_ work: CloseWork) {
        do {
            try checkUnchanged(expectedSize: work.expectedSize)
            try work.bytes.withUnsafeBytes { try file.write($0, at: work.offset) }
            try file.sync()
            let end = work.offset + UInt64(work.bytes.count)
            try file.truncate(to: end)
            try file.sync()
            // I3: saved once the log is synced through the seal; before the lengths
            // are published, so that the close that waits sees it done.
            try? work.checkpoint.save(fs, ledgerId: header.ledgerId)
            publish { s in
                s.writtenLength = end
                s.durableLength = end
                s.allocatedLength = end
                s.physicalLength = end
            }
        } catch {
            poison(error)
            work.continuation.resume(throwing: error)
            return
        }
        work.continuation.resume()
    }

    /// Gives up the writer without syncing or sealing, as a crashed process would:
    /// appends that already returned `.durable` are safe; anything else may be lost.
    /// Releases the lock.
    package func abandon() {
        state.withLock { $0.closed = true }
        stopFlusher()
        releaseLocks()
    }
}
