import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Timing and memory readings for benchmarks.
enum Measure {
    /// Monotonic seconds.
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Runs `body` and returns its wall time in seconds.
    @discardableResult
    /// CPU seconds the calling thread has used.
    static func threadCPU() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func time(_ body: () throws -> Void) rethrows -> Double {
        let start = now()
        try body()
        return now() - start
    }

    /// Peak resident set size of this process so far, in bytes (VmHWM).
    static func peakRSS() -> Int { statusBytes("VmHWM:") }

    /// Resident set size of this process now, in bytes (VmRSS).
    static func currentRSS() -> Int { statusBytes("VmRSS:") }

    /// A kB field of /proc/self/status, in bytes.
    private static func statusBytes(_ field: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(field) {
            return (Int(line.filter(\.isNumber)) ?? 0) * 1024
        }
        return 0
    }

    /// Resets the peak RSS counter (Linux ≥ 4.0: write 5 to clear_refs).
    static func resetPeakRSS() {
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        if fd >= 0 {
            _ = write(fd, "5", 1)
            close(fd)
        }
    }

    static func mb(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1_048_576) }
}

/// Prints one result line: human text on stdout and, with `--json`, a JSON object.
struct Report {
    let json: Bool
    func line(_ name: String, _ fields: [(String, Double)], unit note: String = "") {
        if json {
            let body = fields.map { "\"\($0.0)\":\($0.1.isFinite ? String($0.1) : "null")" }.joined(separator: ",")
            print("{\"bench\":\"\(name)\",\(body)}")
        } else {
            let body = fields.map { "\($0.0)=\(Self.format($0.1))" }.joined(separator: "  ")
            print("\(name.padding(toLength: 34, withPad: " ", startingAt: 0)) \(body) \(note)")
        }
    }

    static func format(_ v: Double) -> String {
        if v == v.rounded() && abs(v) < 1e12 { return String(Int64(v)) }
        return String(format: abs(v) >= 100 ? "%.1f" : "%.3f", v)
    }
}
