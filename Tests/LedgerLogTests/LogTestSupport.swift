import Foundation
import LedgerLog

/// A temporary folder removed when the test ends.
final class TemporaryDirectory {
    let url: URL
    init(_ name: String = "ledger") {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("healthledger-tests-\(UUID().uuidString)")
            .appendingPathComponent(name)
    }
    var path: String { url.path }
    var fs: PosixFileSystem { PosixFileSystem(path: path) }
    deinit { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
}

/// Deterministic payload bytes for a record: a function of a seed and its length,
/// so tests can check content without keeping copies.
func payload(seed: UInt64, length: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: (length + 7) & ~7)
    bytes.withUnsafeMutableBytes { b in
        // xorshift64*: cheap enough for gigabytes in a debug build
        var x = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var i = 0
        while i < b.count {
            x ^= x >> 12; x ^= x << 25; x ^= x >> 27
            b.storeBytes(of: x &* 0x2545_F491_4F6C_DD1D, toByteOffset: i, as: UInt64.self)
            i += 8
        }
    }
    bytes.removeLast(bytes.count - length)
    return bytes
}

/// Whether a record's payload equals `expected` (memcmp).
func payloadMatches(_ payload: UnsafeRawBufferPointer, _ expected: [UInt8]) -> Bool {
    guard payload.count == expected.count else { return false }
    if expected.isEmpty { return true }
    return expected.withUnsafeBytes { memcmp($0.baseAddress!, payload.baseAddress!, expected.count) == 0 }
}

/// A fixed clock for deterministic logs: starts at `start` and advances 1 ms per call.
final class SteppingClock: @unchecked Sendable {
    // @unchecked: `value` is guarded by `lock`.
    private let lock = NSLock()
    private var value: Int64
    init(start: Int64 = 1_767_225_600_000_000_000) { value = start }  // 2026-01-01T00:00:00Z
    func next() -> Int64 {
        lock.lock()
        defer { lock.unlock() }
        value += 1_000_000
        return value
    }
    var options: LogWriterOptions {
        LogWriterOptions(clock: { [self] in self.next() }, allocationChunk: smallChunk)
    }
}

/// Reads every record of a ledger folder.
func allRecords(_ fs: any LogFileSystem) throws -> [StoredRecord] {
    var out: [StoredRecord] = []
    try LogReader(fs).forEachRecord { out.append($0.stored()); return true }
    return out
}

/// Tests reserve file space in small steps: the zero tail is exercised without
/// copying megabytes of zeros in memory for every trial.
let smallChunk: UInt64 = 1024
let testOptions = LogWriterOptions(allocationChunk: smallChunk)

let fixedLedgerId = UUID(uuidString: "6C656467-6572-4000-8000-000000000001")!
