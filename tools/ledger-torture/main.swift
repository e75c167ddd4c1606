import Foundation
import LedgerLog
import TestSupport

/// ledger-torture: a process for crash and lock tests (and manual soak runs).
///
///   ledger-torture append PATH RUN_ID   create or open the ledger, then append durable
///                                       batches forever, printing one line per
///                                       acknowledged batch: `ack FIRST LAST RUN_ID COUNTER`.
///                                       Record i of the batch carries payload(RUN_ID, COUNTER+i).
///   ledger-torture hold PATH SECONDS    take the writer lock, print `locked`, hold it
///                                       for SECONDS (`-`: until stdin ends, so a test
///                                       releases it by closing the pipe), release,
///                                       print `released`, exit.
///   ledger-torture crash-trials COUNT [FIRST_SEED]
///                                       the soak of ledger-level crash trials on the
///                                       simulated disk (saves, deletes, snapshots,
///                                       closes, recovery crashing too): COUNT seeded
///                                       trials, totals on stdout, exit 1 on any failure.
///
/// Payloads are a deterministic function of (run, counter), so the parent checks
/// content without a copy: see `tortureTestPayload`.
let args = CommandLine.arguments
if args.count >= 3, args[1] == "crash-trials", let count = UInt64(args[2]) {
    let first = args.count >= 4 ? UInt64(args[3]) ?? 1 : 1
    var totals = LedgerCrashTrials.Totals()
    var seed = first
    while seed < first + count {
        let end = min(seed + 1000, first + count)
        totals.add(contentsOf: await LedgerCrashTrials.run(seed..<end))
        emit("seeds \(first)..<\(end): \(totals)")
        seed = end
    }
    for failure in totals.failures.prefix(20) { emit("FAIL \(failure)") }
    exit(totals.failures.isEmpty ? 0 : 1)
}
guard args.count >= 4 else {
    FileHandle.standardError.write(Data("usage: ledger-torture append PATH RUN_ID | hold PATH SECONDS | crash-trials COUNT [FIRST_SEED]\n".utf8))
    exit(2)
}
let fs = PosixFileSystem(path: args[2])

/// Writes a line to stdout at once (unbuffered), so a SIGKILL loses no acknowledgement.
func emit(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    bytes.withUnsafeBytes { _ = write(1, $0.baseAddress!, $0.count) }
}

func tortureTestPayload(run: UInt64, counter: UInt64) -> [UInt8] {
    let length = Int((run &* 31 &+ counter &* 17) % 2000)
    var x = (run << 32 | counter) &* 0x9E37_79B9_7F4A_7C15 | 1
    return (0..<length).map { _ in
        x ^= x >> 12; x ^= x << 25; x ^= x >> 27
        return UInt8(truncatingIfNeeded: x &* 0x2545_F491_4F6C_DD1D >> 56)
    }
}

switch args[1] {
case "append":
    let run = UInt64(args[3]) ?? 0
    let writer = fs.folderExists() && fs.exists(LogWriter.logFileName)
        ? try LogWriter.open(fs, options: LogWriterOptions(lockTimeout: 5)) : try LogWriter.create(fs)
    var counter: UInt64 = 0
    while true {
        let count = Int(counter % 5) + 1
        let records = (0..<count).map { i in
            LogRecord(kind: 1, kindVersion: 1, payload: tortureTestPayload(run: run, counter: counter + UInt64(i)))
        }
        let range = try await writer.append(records)
        emit("ack \(range.lowerBound) \(range.upperBound) \(run) \(counter)")
        counter += UInt64(count)
    }
case "hold":
    let lock = try fs.createFolderIfNeededAndLock()
    emit("locked")
    if args[3] == "-" {
        var byte: UInt8 = 0
        while read(0, &byte, 1) > 0 {}
    } else {
        usleep(UInt32((Double(args[3]) ?? 1) * 1_000_000))
    }
    lock.release()
    emit("released")
default:
    exit(2)
}

extension PosixFileSystem {
    func createFolderIfNeededAndLock() throws -> any LogLock {
        if !folderExists() { try createFolder() }
        return try lockExclusive(timeout: 0)
    }
}
