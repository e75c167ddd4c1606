import Foundation
import LedgerChecksums
import LedgerLog

/// `healthledger-bench log`: the event log against SQLite (Python's sqlite3, WAL,
/// synchronous=FULL) on the same machine, in the same run.
enum LogBench {
    static func run(report: Report, scratch: String, records: Int, durableCount: Int, sizes: [Int], peers: Bool) async throws {
        for size in sizes {
            try await appendAndRead(report: report, scratch: scratch, size: size, records: records)
        }
        if durableCount > 0 { try await durable(report: report, scratch: scratch, count: durableCount) }
        shaBaseline(report: report)
        if peers { try peer(report: report, scratch: scratch, records: records, durableCount: durableCount, sizes: sizes) }
    }

    static func payloads(_ size: Int) -> [[UInt8]] {
        (0..<1000).map { i in (0..<size).map { j in UInt8(truncatingIfNeeded: i * 131 + j * 7) } }
    }

    static func fresh(_ path: String) -> PosixFileSystem {
        try? FileManager.default.removeItem(atPath: path)
        return PosixFileSystem(path: path)
    }

    static func appendAndRead(report: Report, scratch: String, size: Int, records: Int) async throws {
        let fs = fresh(scratch + "/log-\(size)")
        let data = payloads(size)
        let writer = try LogWriter.create(fs)
        let perBatch = 1000
        Measure.resetPeakRSS()
        let start = Measure.now()
        var i = 0
        while i < records {
            var batch = RecordBatch(capacity: perBatch * (size + 32))
            for j in i..<min(i + perBatch, records) { batch.append(kind: 1, version: 1, payload: data[j % data.count]) }
            try await writer.append(batch, durability: .deferred)
            i += perBatch
        }
        try await writer.sync()
        let seconds = Measure.now() - start
        try await writer.close()
        let bytes = Double(try FileManager.default.attributesOfItem(atPath: fs.path + "/ledger.log")[.size] as! Int)
        report.line("log.append batched \(size)B (1000/batch)", [
            ("records", Double(records)), ("records_per_s", Double(records) / seconds),
            ("payload_MB_per_s", Double(records * size) / seconds / 1e6), ("log_MB_per_s", bytes / seconds / 1e6),
            ("peak_rss_MB", Double(Measure.peakRSS()) / 1_048_576)])

        let durableStart = Measure.now()
        let writer2 = try LogWriter.open(fs)
        let openSeconds = Measure.now() - durableStart
        try await writer2.close()
        report.line("log.open (checkpoint, \(size)B log)", [("ms", openSeconds * 1000)])

        let reader = try LogReader(fs)
        var count = 0
        var payloadBytes = 0
        let readSeconds = try Measure.time {
            try reader.forEachRecord { r in
                count += 1
                payloadBytes += r.payloadCount
                return true
            }
        }
        precondition(count == records)
        report.line("log.read+CRC \(size)B", [("log_MB_per_s", bytes / readSeconds / 1e6),
                                              ("records_per_s", Double(count) / readSeconds)])
        var verifyReport: LogVerifier.Report?
        let verifySeconds = try Measure.time { verifyReport = try LogVerifier.verify(fs) }
        precondition(verifyReport?.isIntact == true)
        report.line("log.verify (CRC+chain) \(size)B", [("log_MB_per_s", bytes / verifySeconds / 1e6)])
        try? FileManager.default.removeItem(atPath: fs.path)
    }

    static func durable(report: Report, scratch: String, count: Int) async throws {
        let fs = fresh(scratch + "/log-durable")
        let data = payloads(100)
        let writer = try LogWriter.create(fs)
        let seconds = try await Measure.timeAsync {
            for i in 0..<count {
                try await writer.append([LogRecord(kind: 1, kindVersion: 1, payload: data[i % data.count])])
            }
        }
        report.line("log.append durable single 100B", [("appends", Double(count)), ("appends_per_s", Double(count) / seconds)])
        let tasks = 16
        let concurrentSeconds = try await Measure.timeAsync {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for t in 0..<tasks {
                    group.addTask {
                        for i in 0..<count / tasks {
                            try await writer.append([LogRecord(kind: 1, kindVersion: 1, payload: data[(t + i) % data.count])])
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        report.line("log.append durable, 16 tasks (group commit)", [("appends", Double(count / tasks * tasks)),
                                                                    ("appends_per_s", Double(count / tasks * tasks) / concurrentSeconds)])
        try await writer.close()
        try? FileManager.default.removeItem(atPath: fs.path)
    }

    static func shaBaseline(report: Report) {
        let buffer = [UInt8](repeating: 0x5A, count: 256 << 20)
        var digest = SHA256Digest.zero
        let seconds = Measure.time { digest = SHA256.hash(buffer) }
        report.line("sha256 raw (\(SHA256.usesHardware ? "SHA-NI" : "software"))", [("MB_per_s", Double(buffer.count) / seconds / 1e6)])
        var software = SHA256(forceSoftware: true)
        let swSeconds = Measure.time {
            buffer.withUnsafeBytes { software.update(UnsafeRawBufferPointer(rebasing: $0[0..<(64 << 20)])) }
            _ = software.finalize()
        }
        report.line("sha256 raw (software fallback)", [("MB_per_s", Double(64 << 20) / swSeconds / 1e6)])
        let crcSeconds = Measure.time { _ = CRC32C.checksum(buffer) }
        report.line("crc32c raw (\(CRC32C.usesHardware ? "SSE4.2" : "software"))", [("MB_per_s", Double(buffer.count) / crcSeconds / 1e6)])
        if digest == .zero { print("") }
    }

    static func peer(report: Report, scratch: String, records: Int, durableCount: Int, sizes: [Int]) throws {
        for size in sizes {
            let output = try PeerProcess.run("python3", ["tools/peers/sqlite_log_peer.py", scratch + "/sqlite", String(records),
                                                         String(size), size == 100 ? String(durableCount) : "0"])
            for line in output.split(separator: "\n") {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let test = object["test"] as? String else { continue }
                var fields: [(String, Double)] = []
                for key in ["records", "records_per_s", "mb_per_s"] { if let v = object[key] as? Double ?? (object[key] as? Int).map(Double.init) { fields.append((key, v)) } }
                report.line("peer sqlite \(test) \(size)B", fields)
            }
        }
        try? FileManager.default.removeItem(atPath: scratch + "/sqlite")
    }
}

/// Runs a peer program and returns its stdout.
enum PeerProcess {
    static func run(_ program: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [program] + arguments
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}

extension Measure {
    static func timeAsync(_ body: () async throws -> Void) async rethrows -> Double {
        let start = now()
        try await body()
        return now() - start
    }
}
