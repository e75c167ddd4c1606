import Foundation
import LedgerLog
@testable import LedgerPostgres
import Testing
import TestSupport

/// One writer per ledger, enforced by the database; acknowledged means committed.
@Suite(.enabled(if: PGTest.enabled, PGTest.reason))
struct PostgresWriterTests {
    /// A payload naming its writer and its number, so the log says who won each position.
    static func tagged(_ worker: Int, _ n: Int) -> [LogRecord] {
        [LogRecord(kind: 1, kindVersion: 1, payload: Array("worker \(worker) append \(n)".utf8) + payload(seed: UInt64(worker * 100_000 + n), length: 40))]
    }

    /// Two writers that both opened at the same position: the first commit wins, the
    /// second gets `ledgerLocked` from the keys and nothing of it is stored.
    // P2: two writers after the same position collide on a key; one commits.
    @Test func aForkedAppendIsRefusedByTheKeysAndStoresNothing() async throws {
        let cache = TemporaryDirectory("cache")
        let name = PGTest.freshName("fork")
        let a = try PGTest.store(name, cache: cache, advisoryLock: false)
        let created = try LogWriter.create(a)
        try await created.append(Self.tagged(0, 0))
        try await created.close()
        let before = try PGTest.storedLog(name)
        let first = try LogWriter.open(a)
        let second = try LogWriter.open(try PGTest.store(name, cache: TemporaryDirectory("cache2"), advisoryLock: false))
        #expect(try await first.append(Self.tagged(1, 1)) == 2...2)
        let afterFirst = try PGTest.storedLog(name)
        await #expect(throws: LogError.self) { try await second.append(Self.tagged(2, 1)) }
        do {
            try await second.append(Self.tagged(2, 1))
            Issue.record("a poisoned writer appended")
        } catch LogError.writerPoisoned(let cause) {
            var locked = false
            if case .ledgerLocked = cause { locked = true }
            #expect(locked, "poisoned by \(cause), not ledgerLocked")
        }
        #expect(try PGTest.storedLog(name) == afterFirst)
        #expect(afterFirst.count > before.count)
        second.abandon()
        try await first.close()
        let reader = try LogReader(a)
        let records = try reader.records(1...3)
        #expect(records.map(\.sequence) == [1, 2])
        #expect(records[1].payload == Self.tagged(1, 1)[0].payload)
        #expect(try LogVerifier.verify(a).isIntact)
    }

    /// The first failure of the forked writer is `ledgerLocked` itself (exit 7 in the CLI).
    @Test func theForkedWritersErrorIsLedgerLocked() async throws {
        let cache = TemporaryDirectory("cache")
        let name = PGTest.freshName("fork")
        let a = try PGTest.store(name, cache: cache, advisoryLock: false)
        let created = try LogWriter.create(a)
        try await created.close()
        let first = try LogWriter.open(a)
        let second = try LogWriter.open(try PGTest.store(name, cache: TemporaryDirectory("cache2"), advisoryLock: false))
        try await first.append(Self.tagged(1, 1))
        do {
            try await second.append(Self.tagged(2, 1))
            Issue.record("the fork was stored")
        } catch LogError.ledgerLocked(let path) {
            let expected = try PGTest.location(name).description + " (another writer committed a batch at the same position"
            #expect(path.hasPrefix(expected))
        }
        second.abandon()
        try await first.close()
    }

    /// The advisory lock: a second writer is refused at open, as with flock on a folder.
    // P3: a writer holds the session advisory lock for its whole life.
    @Test func aSecondWriterIsRefusedAtOpen() async throws {
        let cache = TemporaryDirectory("cache")
        let name = PGTest.freshName("lock")
        let fs = try PGTest.store(name, cache: cache)
        let writer = try LogWriter.create(fs)
        let other = try PGTest.store(name, cache: TemporaryDirectory("cache2"))
        #expect(throws: LogError.ledgerLocked(path: other.path)) { _ = try LogWriter.open(other) }
        try await writer.close()
        let reopened = try LogWriter.open(other)
        try await reopened.close()
    }

    /// Two workers append to one ledger at once, for many rounds. With the advisory lock
    /// they take turns; without it they race and the keys refuse every fork. Either way:
    /// the log is one intact chain, every acknowledged append is in it at the position it
    /// was acknowledged for, and nothing else is.
    @Test(arguments: [true, false])
    func twoWorkersAppendingAtOnceNeverFork(advisoryLock: Bool) async throws {
        let name = PGTest.freshName("workers")
        let setupCache = TemporaryDirectory("cache")
        let setup = try PGTest.store(name, cache: setupCache)
        try await LogWriter.create(setup).close()
        let appendsEach = 40
        let results = try await withThrowingTaskGroup(of: (acks: [UInt64: [UInt8]], refusals: Int).self) { group in
            for worker in 1...2 {
                group.addTask {
                    let cache = TemporaryDirectory("cache")
                    let fs = try PGTest.store(name, cache: cache, advisoryLock: advisoryLock)
                    var acks: [UInt64: [UInt8]] = [:]
                    var refusals = 0
                    var n = 0
                    while n < appendsEach {
                        let writer: LogWriter
                        do {
                            writer = try LogWriter.open(fs, options: LogWriterOptions(lockTimeout: 30))
                        } catch LogError.ledgerLocked {
                            refusals += 1
                            continue
                        }
                        // A few appends per turn, then give the other worker a chance.
                        var turn = 0
                        while turn < 3, n < appendsEach {
                            let records = Self.tagged(worker, n)
                            do {
                                let range = try await writer.append(records)
                                acks[range.lowerBound] = records[0].payload
                                n += 1
                                turn += 1
                            } catch LogError.ledgerLocked {
                                refusals += 1
                                break
                            }
                        }
                        if advisoryLock { try await writer.close() } else { writer.abandon() }
                    }
                    return (acks, refusals)
                }
            }
            var all: [(acks: [UInt64: [UInt8]], refusals: Int)] = []
            for try await r in group { all.append(r) }
            return all
        }
        var acknowledged: [UInt64: [UInt8]] = [:]
        for r in results {
            for (seq, bytes) in r.acks {
                #expect(acknowledged[seq] == nil, "sequence \(seq) acknowledged twice")
                acknowledged[seq] = bytes
            }
        }
        #expect(acknowledged.count == 2 * appendsEach)
        let report = try LogVerifier.verify(setup)
        #expect(report.isIntact)
        #expect(report.records == UInt64(2 * appendsEach))
        let reader = try LogReader(setup)
        var stored: [UInt64: [UInt8]] = [:]
        try reader.forEachRecord(verifyChain: true) { stored[$0.sequence] = $0.payloadCopy(); return true }
        #expect(stored == acknowledged)
        if !advisoryLock {
            // The rows hold no two batches at one position (the keys), so no fork.
            let c = try PGTest.connection()
            defer { c.close() }
            let rows = try c.execute("SELECT count(*), count(DISTINCT first_sequence) FROM healthledger_batches WHERE ledger = $1 AND record_count > 0",
                                     [.text(name)])
            #expect(rows.integer(0, 0) == Int64(2 * appendsEach))
            #expect(rows.integer(0, 1) == Int64(2 * appendsEach))
        }
    }

    /// A server restart in the middle of an ingest: the writer gets a clear error naming
    /// PostgreSQL and the lost connection; reopened after the restart it continues, and
    /// every append acknowledged before or after is in the log.
    /// It restarts the server under every other test: tools/pg_test.sh runs it alone.
    @Test(.enabled(if: PGTest.restartScript != nil,
                   "needs HEALTHLEDGER_TEST_PG_RESTART; it restarts the server, so tools/pg_test.sh runs it alone"))
    func aServerRestartMidIngestLosesNothingAcknowledged() async throws {
        let cache = TemporaryDirectory("cache")
        let name = PGTest.freshName("restart")
        let fs = try PGTest.store(name, cache: cache)
        var writer = try LogWriter.create(fs)
        var acknowledged: [UInt64: [UInt8]] = [:]
        var errors: [LogError] = []
        var n = 0
        var restarted = false
        while n < 300 {
            if n == 100, !restarted {
                restarted = true
                let restart = try ChildProcess(PGTest.restartScript!, [], stdout: .inherit, stderr: .inherit)
                // Appends continue while the server goes down and comes back.
                Thread.detachNewThread { restart.wait() }
            }
            let records = Self.tagged(1, n)
            do {
                let range = try await writer.append(records)
                acknowledged[range.lowerBound] = records[0].payload
                n += 1
            } catch let error as LogError {
                errors.append(error)
                writer.abandon()
                // Reconnect: reopen until the server is back (it recovers the truth).
                var reopened: LogWriter?
                for _ in 0..<600 {
                    if let w = try? LogWriter.open(fs, options: LogWriterOptions(lockTimeout: 5)) {
                        reopened = w
                        break
                    }
                    try await Task.sleep(nanoseconds: 50_000_000)
                }
                writer = try #require(reopened)
                // An append whose commit was cut off may or may not be there; it was never acknowledged.
                n += 1
            }
        }
        try await writer.close()
        #expect(restarted)
        #expect(!errors.isEmpty, "the restart was never noticed")
        if case .io(let operation, let path, _) = errors.first {
            #expect(operation.hasPrefix("postgres "))
            #expect(operation.contains("connection lost: the last commit's outcome is known only after reopening"))
            #expect(path == fs.path)
        } else {
            Issue.record("first error: \(String(describing: errors.first))")
        }
        let reader = try LogReader(fs)
        var stored: [UInt64: [UInt8]] = [:]
        try reader.forEachRecord(verifyChain: true) { stored[$0.sequence] = $0.payloadCopy(); return true }
        for (seq, bytes) in acknowledged { #expect(stored[seq] == bytes, "acknowledged \(seq) lost") }
        #expect(stored.count >= acknowledged.count)
        #expect(stored.count <= acknowledged.count + errors.count)
        #expect(try LogVerifier.verify(fs).isIntact)
    }
}
