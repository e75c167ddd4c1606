import Foundation
import LedgerChecksums
import LedgerLog

/// `healthledger verify`: everything that can be checked, from the bytes up.
///
/// 1. The log: framing, checksums and the hash chain over the whole file.
/// 2. The events: each decodes completely and obeys the rules at its point in the
///    log (dense sequence numbers, unique UUIDs, permissions, deleters, sync versions).
/// 3. The snapshots: each equals a fresh replay to its position (and its stored digest
///    the fresh digest).
package enum LedgerVerifier {
    /// A snapshot that does not hold.
    package struct SnapshotFinding: Sendable, Equatable, CustomStringConvertible {
        package let file: String
        package let sequence: UInt64?
        package let problem: String
        package let difference: StateDifference?
        package var description: String {
            "\(file): \(problem)" + (difference.map { " (first difference: \($0))" } ?? "")
        }
    }

    package struct Report: Sendable {
        package let log: LogVerifier.Report
        /// The first event that does not decode or breaks a rule.
        package let eventProblem: ReplayError?
        /// The log could not be read past damage at this point.
        package let readProblem: LogError?
        package let snapshots: [SnapshotFinding]
        package let snapshotsChecked: Int
        /// Snapshots an earlier release wrote, in a format this one does not read (S1):
        /// derived data, skipped — not a problem of the ledger.
        package let olderSnapshots: [SnapshotProblem]
        /// Events checked.
        package let events: UInt64
        /// The projection digest after the last event checked.
        package let digest: SHA256Digest
        package let lastSequence: UInt64
        /// An import transaction the log ends inside (rule E11: running, or left by a
        /// process that died; the next writer aborts it): its events were decoded, not
        /// applied, and `events` stops before it. Valid history, not damage.
        package let openImport: OpenImport?
        /// The events of that open import (decoded, not applied).
        package let eventsOfOpenImport: UInt64

        package var isIntact: Bool {
            log.isIntact && !log.staleIndex && eventProblem == nil && readProblem == nil && snapshots.isEmpty
        }
    }

    package static func verify(_ fs: any LogFileSystem, progress: ((ReplayProgress) -> Void)? = nil) throws -> Report {
        // 1 runs on a thread of its own beside 2 and 3 (they share nothing but the file,
        // which all only read); its outcome comes first, as if it had run first: when it
        // throws, that is what verify throws.
        let logCheck = LogCheck(fs)
        do {
            let report = try verifyEventsAndSnapshots(fs, progress: progress)
            return report(try logCheck.report())
        } catch {
            _ = try logCheck.report()
            throw error
        }
    }

    /// `LogVerifier.verify` on a thread of its own.
    private final class LogCheck: Sendable {
        private let outcome = Locked<Result<LogVerifier.Report, any Error>?>(nil)
        private let done = DispatchGroup()

        init(_ fs: any LogFileSystem) {
            done.enter()
            let thread = Thread { [outcome, done] in
                outcome.withLock { $0 = Result { try LogVerifier.verify(fs) } }
                done.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }

        /// Waits for the check; its report, or what it threw.
        func report() throws -> LogVerifier.Report {
            done.wait()
            return try outcome.withLock { $0! }.get()
        }
    }

    /// Steps 2 and 3; the report, given step 1's.
    private static func verifyEventsAndSnapshots(_ fs: any LogFileSystem, progress: ((ReplayProgress) -> Void)?) throws
        -> (LogVerifier.Report) -> Report {
        let reader = try LogReader(fs)
        var pending: [(name: String, header: SnapshotHeader)] = []
        var findings: [SnapshotFinding] = []
        var older: [SnapshotProblem] = []
        for name in SnapshotFile.list(fs) {
            do {
                pending.append((name, try SnapshotFile.header(fs, name)))
            } catch {
                // A snapshot of an older format is skipped, not a finding (S1: derived data).
                if case .olderFormat = error { older.append(error) } else {
                    findings.append(SnapshotFinding(file: name, sequence: nil, problem: "\(error)", difference: nil))
                }
            }
        }
        pending.sort { $0.header.lastSequence < $1.header.lastSequence }
        var checked = 0
        var state = LedgerState()
        var eventProblem: ReplayError?
        var readProblem: LogError?
        // The fresh state's digest, by the last sequence it had folded: within one
        // verify the state changes only by folding an event, which moves it. A
        // snapshot at the end of the log and the report need the same digest.
        var digested: (sequence: UInt64, digest: SHA256Digest)?
        func digest(_ state: LedgerState) -> SHA256Digest {
            if let digested, digested.sequence == state.lastSequence { return digested.digest }
            let d = state.digest()
            digested = (state.lastSequence, d)
            return d
        }

        func checkSnapshots(at position: LogReader.Position, _ state: inout LedgerState) {
            while let next = pending.first, next.header.lastSequence <= state.lastSequence {
                // A snapshot written after a seal stands past the last event's batch, at
                // the seal's end: a later boundary with the same last sequence. Wait for it.
                if next.header.lastSequence == state.lastSequence, next.header.position.offset > position.offset { break }
                pending.removeFirst()
                checked += 1
                guard next.header.lastSequence == state.lastSequence, next.header.position == position else {
                    findings.append(SnapshotFinding(file: next.name, sequence: next.header.lastSequence,
                                                    problem: "does not stand at a batch boundary of the log", difference: nil))
                    continue
                }
                // Timelines in (start, end, slot) order once, here, on both cores: a
                // snapshot holds them sorted, and the comparison and the daily sums
                // would otherwise each sort copies of them (a total order: the same
                // state either way, rule-wise and digest-wise).
                state.samples.prepareForQueries()
                let known = digested.flatMap { $0.sequence == state.lastSequence ? $0.digest : nil }
                let (compared, fresh) = compare(fs, next.name, reader: reader, with: state, knownDigest: known)
                digested = (state.lastSequence, fresh)
                switch compared {
                case .success(let difference?):
                    findings.append(SnapshotFinding(file: next.name, sequence: next.header.lastSequence,
                                                    problem: "differs from a fresh replay", difference: difference))
                case .success(nil):
                    if next.header.digest != fresh {
                        findings.append(SnapshotFinding(file: next.name, sequence: next.header.lastSequence,
                                                        problem: "stored digest differs from a fresh replay's", difference: nil))
                    }
                case .failure(let error):
                    findings.append(SnapshotFinding(file: next.name, sequence: next.header.lastSequence,
                                                    problem: "\(error)", difference: nil))
                }
            }
        }

        checkSnapshots(at: reader.start, &state)
        var openImport: OpenImport?
        var eventsOfOpenImport: UInt64 = 0
        do {
            let outcome = try Replayer.replay(reader, into: &state, from: reader.start, decodeFully: true, progress: progress) { position, s in
                checkSnapshots(at: position, &s)
            }
            if let open = outcome.openImport {
                // E11: an open import applies nothing, but every event of it must decode.
                openImport = open
                try reader.forEachBatch(position: open.position) { batch in
                    batch.forEachRecord { record in
                        guard eventProblem == nil else { return }
                        do throws(EventDecodingError) {
                            _ = try EventCodec.decode(record)
                            eventsOfOpenImport += 1
                        } catch {
                            eventProblem = .undecodable(sequence: record.sequence, offset: record.offset, error)
                        }
                    }
                    return eventProblem == nil
                }
            }
        } catch let error as ReplayError {
            eventProblem = error
        } catch let error as LogError {
            readProblem = error
        }
        for remaining in pending {
            let problem = remaining.header.lastSequence == state.lastSequence && eventProblem == nil && readProblem == nil
                ? "does not stand at a batch boundary of the log"
                : "stands beyond the last valid event (\(state.lastSequence))"
            findings.append(SnapshotFinding(file: remaining.name, sequence: remaining.header.lastSequence,
                                            problem: problem, difference: nil))
        }
        let (findingsMade, snapshotsChecked) = (findings, checked + findings.filter { $0.sequence == nil }.count)
        let (lastSequence, finalDigest, problems) = (state.lastSequence, digest(state), (eventProblem, readProblem))
        let (open, openEvents, olderFound) = (openImport, eventsOfOpenImport, older)
        return { log in
            Report(log: log, eventProblem: problems.0, readProblem: problems.1, snapshots: findingsMade,
                   snapshotsChecked: snapshotsChecked, olderSnapshots: olderFound, events: lastSequence, digest: finalDigest, lastSequence: lastSequence,
                   openImport: open, eventsOfOpenImport: openEvents)
        }
    }

    /// Loads the snapshot `name` and compares it with `state` (its first difference,
    /// or why it could not be loaded). Three independent pieces of work share the
    /// cores: the daily sums made from `state` (the longest: the statistics engine over
    /// every cumulative sample, in runs on every core), and on a thread of its own the
    /// snapshot loaded and compared, then `state`'s digest (unless known). None changes
    /// the state; a snapshot that holds is then checked against the digest.
    ///
    /// The daily sums run on the calling thread, not as one of a `concurrentPerform`'s
    /// iterations: nested in one, their runs would find every worker of the pool taken
    /// and run one after another on a single core.
    private static func compare(_ fs: any LogFileSystem, _ name: String, reader: LogReader, with state: LedgerState,
                                knownDigest: SHA256Digest?) -> (Result<StateDifference?, SnapshotProblem>, SHA256Digest) {
        let loadedAndCompared = Locked<Result<(StateDifference?, DailySums), SnapshotProblem>?>(nil)
        let digest = Locked<SHA256Digest?>(knownDigest)
        let done = DispatchGroup()
        done.enter()
        let other = Thread { [state] in
            let result = Result { () throws(SnapshotProblem) -> (StateDifference?, DailySums) in
                // Mapped but checked whole: loaded or refused exactly as a read, its
                // columns read in place from the file's pages (no copy in fresh memory).
                let (_, loaded) = try SnapshotFile.load(fs, name, reader: reader, mapped: true, checkingWhole: true)
                return (StateDifference.first(state, loaded), loaded.dailySums.sums)
            }
            loadedAndCompared.withLock { $0 = result }
            if knownDigest == nil {
                let d = state.digest()
                digest.withLock { $0 = d }
            }
            done.leave()
        }
        other.stackSize = 1 << 22
        other.start()
        let freshSums = DailySums.compute(from: state)
        done.wait()
        let compared = loadedAndCompared.withLock { $0! }.map { difference, stored -> StateDifference? in
            if let difference { return difference }
            // The daily sums (not part of a state's `==`): the snapshot's, or none from
            // an older one, against those made from the replayed state.
            guard stored.lastSequence != nil,
                  let table = DailySums.difference(stored, freshSums) else { return nil }
            return StateDifference(projection: "dailySums", key: table)
        }
        return (compared, digest.withLock { $0! })
    }
}
