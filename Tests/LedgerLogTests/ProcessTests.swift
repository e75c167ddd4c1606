import Foundation
import Testing
@testable import LedgerLog

/// Tests with a second process: `ledger-torture` (tools/ledger-torture), built with the tests.
struct ProcessTests {
    static var tortureBinary: URL {
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.path != "/", !FileManager.default.fileExists(atPath: url.appendingPathComponent("ledger-torture").path) {
            url.deleteLastPathComponent()
        }
        return url.appendingPathComponent("ledger-torture")
    }

    /// The payload `ledger-torture append` writes (same function, kept in step).
    static func expectedPayload(run: UInt64, counter: UInt64) -> [UInt8] {
        let length = Int((run &* 31 &+ counter &* 17) % 2000)
        var x = (run << 32 | counter) &* 0x9E37_79B9_7F4A_7C15 | 1
        return (0..<length).map { _ in
            x ^= x >> 12; x ^= x << 25; x ^= x >> 27
            return UInt8(truncatingIfNeeded: x &* 0x2545_F491_4F6C_DD1D >> 56)
        }
    }

    @Test func twoHundredSigkillsLoseNoAcknowledgedAppend() async throws {
        let dir = TemporaryDirectory()
        var rng = SeededRandom(seed: 200)
        var acknowledged: [(first: UInt64, last: UInt64, run: UInt64, counter: UInt64)] = []
        for trial in 0..<200 {
            // Paced by the child's acknowledgements: kill it after a seeded number of
            // them (1–4), while it is in the middle of its next append.
            let child = try ChildProcess(Self.tortureBinary.path, ["append", dir.path, String(trial)], stdout: .pipe, stderr: .null)
            let acks = Int.random(in: 1...4, using: &rng)
            #expect(child.waitForOutput { $0.split(separator: "\n").filter { $0.hasPrefix("ack ") }.count >= acks },
                    "trial \(trial): no acknowledgement from the child")
            child.kill(SIGKILL)
            child.readOutputToEnd()  // everything it printed before it died
            #expect(child.wait() == .signaled(SIGKILL))
            for line in child.outputLines {
                let f = line.split(separator: " ")
                guard f.count == 5, f[0] == "ack", let a = UInt64(f[1]), let b = UInt64(f[2]), let r = UInt64(f[3]),
                      let c = UInt64(f[4]) else { continue }
                acknowledged.append((a, b, r, c))
            }
        }
        #expect(acknowledged.count >= 200)
        // Recovery, then every acknowledged record with its exact payload.
        let writer = try LogWriter.open(dir.fs)
        let reader = try LogReader(dir.fs)
        var lastSequence: UInt64 = 0
        var bySequence: [UInt64: [UInt8]] = [:]
        try reader.forEachRecord { r in
            bySequence[r.sequence] = r.payloadCopy()
            lastSequence = r.sequence
            return true
        }
        var lost: [UInt64] = []
        for ack in acknowledged {
            for s in ack.first...ack.last
            where bySequence[s] != Self.expectedPayload(run: ack.run, counter: ack.counter + s - ack.first) {
                lost.append(s)
            }
        }
        #expect(lost.isEmpty, "acknowledged records lost or changed: \(lost.prefix(10))")
        #expect(writer.nextSequence == lastSequence + 1)
        try await writer.close()
        #expect(try LogVerifier.verify(dir.fs).isIntact)
    }

    @Test func aSecondWriterIsRefusedInTheSameProcessAndFromAnother() async throws {
        let dir = TemporaryDirectory()
        let first = try LogWriter.create(dir.fs)
        // another handle in this process
        #expect(throws: LogError.ledgerLocked(path: dir.path)) { try LogWriter.open(dir.fs) }
        try await first.close()

        // another process holds the lock (until its stdin closes, or it dies)
        let holder = try ChildProcess(Self.tortureBinary.path, ["hold", dir.path, "-"], stdin: .pipe, stdout: .pipe, stderr: .null)
        #expect(holder.waitForOutput(containing: "locked\n"))
        #expect(throws: LogError.ledgerLocked(path: dir.path)) { try LogWriter.open(dir.fs) }
        // readers take no lock
        #expect(try LogReader(dir.fs).forEachRecord { _ in true }.nextSequence == 1)
        holder.kill(SIGKILL)
        #expect(holder.wait() == .signaled(SIGKILL))
        let again = try LogWriter.open(dir.fs)  // the lock died with the process
        try await again.close()
    }

    @Test func aLockTimeoutWaitsForTheOtherWriter() async throws {
        let dir = TemporaryDirectory()
        try await LogWriter.create(dir.fs).close()
        let holder = try ChildProcess(Self.tortureBinary.path, ["hold", dir.path, "-"], stdin: .pipe, stdout: .pipe, stderr: .null)
        #expect(holder.waitForOutput(containing: "locked\n"))
        #expect(throws: LogError.ledgerLocked(path: dir.path)) { try LogWriter.open(dir.fs) }  // held now
        // A writer with a timeout starts waiting; the holder is told to release once
        // that writer has started, and the writer gets the lock when it does.
        // (a thread of its own, not the cooperative pool: the test blocks on it)
        let started = DispatchSemaphore(value: 0), opened = DispatchSemaphore(value: 0)
        let fs = dir.fs
        nonisolated(unsafe) var outcome: Result<LogWriter, any Error>?
        Thread {
            started.signal()
            outcome = Result { try LogWriter.open(fs, options: LogWriterOptions(lockTimeout: 60)) }
            opened.signal()
        }.start()
        started.wait()
        holder.closeStdin()
        opened.wait()
        let writer = try #require(outcome).get()
        #expect(holder.waitForOutput(containing: "released\n"))
        #expect(holder.wait() == .exited(0))
        try await writer.close()
    }
}
