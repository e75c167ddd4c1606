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

    /// Reads lines from a pipe on a background thread.
    final class LineCollector: @unchecked Sendable {
        // @unchecked: `lines` is guarded by `lock`.
        private let lock = NSLock()
        private var lines: [String] = []
        private var partial = Data()
        init(_ pipe: Pipe) {
            pipe.fileHandleForReading.readabilityHandler = { [self] handle in
                let data = handle.availableData
                lock.lock()
                defer { lock.unlock() }
                if data.isEmpty { handle.readabilityHandler = nil; return }
                partial.append(data)
                while let nl = partial.firstIndex(of: 0x0A) {
                    lines.append(String(decoding: partial[partial.startIndex..<nl], as: UTF8.self))
                    partial.removeSubrange(partial.startIndex...nl)
                }
            }
        }
        var snapshot: [String] { lock.lock(); defer { lock.unlock() }; return lines }
    }

    @Test func twoHundredSigkillsLoseNoAcknowledgedAppend() async throws {
        let dir = TemporaryDirectory()
        var rng = SeededRandom(seed: 200)
        var acknowledged: [(first: UInt64, last: UInt64, run: UInt64, counter: UInt64)] = []
        for trial in 0..<200 {
            let process = Process()
            process.executableURL = Self.tortureBinary
            process.arguments = ["append", dir.path, String(trial)]
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            let collector = LineCollector(out)
            try process.run()
            // Let it open (and recover) the ledger and append for a random while.
            let deadline = Date().addingTimeInterval(2)
            while collector.snapshot.isEmpty, Date() < deadline { usleep(1000) }
            usleep(UInt32.random(in: 0...20_000, using: &rng))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            usleep(2000)
            for line in collector.snapshot {
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

        // another process holds the lock
        let process = Process()
        process.executableURL = Self.tortureBinary
        process.arguments = ["hold", dir.path, "30"]
        let out = Pipe()
        process.standardOutput = out
        let collector = LineCollector(out)
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while !collector.snapshot.contains("locked"), Date() < deadline { usleep(1000) }
        #expect(throws: LogError.ledgerLocked(path: dir.path)) { try LogWriter.open(dir.fs) }
        // readers take no lock
        #expect(try LogReader(dir.fs).forEachRecord { _ in true }.nextSequence == 1)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let again = try LogWriter.open(dir.fs)  // the lock died with the process
        try await again.close()
    }

    @Test func aLockTimeoutWaitsForTheOtherWriter() async throws {
        let dir = TemporaryDirectory()
        try await LogWriter.create(dir.fs).close()
        let process = Process()
        process.executableURL = Self.tortureBinary
        process.arguments = ["hold", dir.path, "0.3"]
        let out = Pipe()
        process.standardOutput = out
        let collector = LineCollector(out)
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while !collector.snapshot.contains("locked"), Date() < deadline { usleep(1000) }
        let writer = try LogWriter.open(dir.fs, options: LogWriterOptions(lockTimeout: 10))
        try await writer.close()
        process.waitUntilExit()
    }
}
