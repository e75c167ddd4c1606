// The writer's invariants as code: `LogWriter.checkInvariants()` copies its state
// under its lock into a `StateFacts` and checks it here, so that tests can also check
// facts no sound writer would hold and see each invariant named.

extension LogWriter {
    /// The writer's invariants, named as `checkInvariants()` reports them. Each holds
    /// whenever the writer's lock is free.
    package enum Invariant: String, CaseIterable, Sendable {
        /// `file header ≤ durableLength ≤ writtenLength ≤ encodedLength`: nothing is
        /// durable before it is written, nor written before it is encoded (W4's
        /// `syncedLength` is a `durableLength`, so it never vouches for unwritten bytes).
        case lengthsOrdered = "LogWriter.lengthsOrdered"
        /// The file is at least as long as what was written (`physicalLength`, the size
        /// W7 compares with, covers `writtenLength`).
        case fileCoversWritten = "LogWriter.fileCoversWritten"
        /// `pendingBytes` is the size of the pending buffers.
        case pendingBytesCounted = "LogWriter.pendingBytesCounted"
        /// With no flush running and the writer neither poisoned nor closed, every
        /// encoded byte is written or pending: `writtenLength + pendingBytes ==
        /// encodedLength` (a flush holds the bytes it took; poison drops them).
        case encodedIsWrittenOrPending = "LogWriter.encodedIsWrittenOrPending"
        /// A poisoned writer is quiet: nothing pending, no waiter (every waiter got the
        /// failure; W5: nothing is retried). Its flusher thread may still be on its way
        /// back to sleep: it writes nothing more (`flusherHasWork` is false).
        case poisonedIsQuiet = "LogWriter.poisonedIsQuiet"
        /// Every waiter waits for bytes that are encoded and not yet covered (a flush
        /// wakes the ones it covers in the same step).
        case waitersUncovered = "LogWriter.waitersUncovered"
        /// Sequence numbers are dense from 1 and every record is at least a record
        /// header: `nextSequence ≥ 1` and `(nextSequence − 1) × 32 ≤ encodedLength − 64`.
        case sequencesFitTheLog = "LogWriter.sequencesFitTheLog"
        /// The checkpoint is behind the writer: its covered length, next sequence and
        /// time at or before the writer's; its sparse entries ascend in sequence and
        /// offset, each a batch inside the encoded log with a sequence already given.
        case checkpointBehindWriter = "LogWriter.checkpointBehindWriter"
    }

    /// What the invariants are about: the writer's state at one moment.
    package struct StateFacts: Sendable, Equatable {
        package struct Waiting: Sendable, Equatable {
            package var end: UInt64
            package var durable: Bool
            package init(end: UInt64, durable: Bool) {
                self.end = end
                self.durable = durable
            }
        }

        package var nextSequence: UInt64
        package var lastRecordedAt: Int64
        package var encodedLength: UInt64
        package var writtenLength: UInt64
        package var durableLength: UInt64
        package var physicalLength: UInt64
        package var pendingBytes: Int
        /// The sum of the pending buffers' sizes.
        package var pendingBufferBytes: Int
        package var waiters: [Waiting]
        /// The flusher thread may be in a round (started and not asleep): it may hold
        /// buffers taken from `pending` that are not yet written.
        package var flushing: Bool
        package var poisoned: Bool
        package var closed: Bool
        package var checkpoint: LogCheckpoint

        package init(nextSequence: UInt64, lastRecordedAt: Int64, encodedLength: UInt64, writtenLength: UInt64,
                     durableLength: UInt64, physicalLength: UInt64, pendingBytes: Int, pendingBufferBytes: Int,
                     waiters: [Waiting], flushing: Bool, poisoned: Bool, closed: Bool, checkpoint: LogCheckpoint) {
            self.nextSequence = nextSequence
            self.lastRecordedAt = lastRecordedAt
            self.encodedLength = encodedLength
            self.writtenLength = writtenLength
            self.durableLength = durableLength
            self.physicalLength = physicalLength
            self.pendingBytes = pendingBytes
            self.pendingBufferBytes = pendingBufferBytes
            self.waiters = waiters
            self.flushing = flushing
            self.poisoned = poisoned
            self.closed = closed
            self.checkpoint = checkpoint
        }

        /// Every invariant these facts break (empty: none).
        package func violations() -> [InvariantViolation] {
            var out: [InvariantViolation] = []
            func fail(_ invariant: Invariant, _ found: String) { out.append(InvariantViolation(invariant, found)) }
            let header = UInt64(LogFormat.fileHeaderLength)
            if !(header <= durableLength && durableLength <= writtenLength && writtenLength <= encodedLength) {
                fail(.lengthsOrdered, "durable \(durableLength), written \(writtenLength), encoded \(encodedLength)")
            }
            if writtenLength > physicalLength {
                fail(.fileCoversWritten, "written \(writtenLength) past the file's \(physicalLength) bytes")
            }
            if pendingBytes != pendingBufferBytes {
                fail(.pendingBytesCounted, "pendingBytes \(pendingBytes), buffers \(pendingBufferBytes)")
            }
            if !flushing && !poisoned && !closed, writtenLength &+ UInt64(truncatingIfNeeded: pendingBytes) != encodedLength {
                fail(.encodedIsWrittenOrPending, "written \(writtenLength) + pending \(pendingBytes) ≠ encoded \(encodedLength)")
            }
            if poisoned && (pendingBytes != 0 || pendingBufferBytes != 0 || !waiters.isEmpty) {
                fail(.poisonedIsQuiet, "pending \(pendingBytes), \(waiters.count) waiters")
            }
            for w in waiters where w.end > encodedLength || w.end <= (w.durable ? durableLength : writtenLength) {
                fail(.waitersUncovered, "a waiter for \(w.end) (durable \(w.durable)) with durable \(durableLength), "
                     + "written \(writtenLength), encoded \(encodedLength)")
                break
            }
            let records = nextSequence == 0 ? 0 : nextSequence - 1
            if nextSequence == 0 || encodedLength < header
                || records > (encodedLength - header) / UInt64(LogFormat.recordHeaderLength) {
                fail(.sequencesFitTheLog, "next sequence \(nextSequence) in \(encodedLength) bytes")
            }
            let c = checkpoint
            var entriesAscend = true
            for (i, e) in c.entries.enumerated() {
                let previous = i > 0 ? c.entries[i - 1] : nil
                if e.offset < header || e.offset >= encodedLength || e.firstSequence < 1 || e.firstSequence >= nextSequence
                    || previous.map({ $0.offset >= e.offset || $0.firstSequence >= e.firstSequence }) ?? false {
                    entriesAscend = false
                }
            }
            if c.coveredLength > encodedLength || c.coveredLength < header || c.nextSequence > nextSequence
                || c.lastRecordedAt > lastRecordedAt || !entriesAscend {
                fail(.checkpointBehindWriter, "checkpoint covering \(c.coveredLength) bytes, next sequence \(c.nextSequence), "
                     + "time \(c.lastRecordedAt), \(c.entries.count) entries (ascending: \(entriesAscend)); writer at "
                     + "\(encodedLength) bytes, next sequence \(nextSequence), time \(lastRecordedAt)")
            }
            return out
        }
    }
}
