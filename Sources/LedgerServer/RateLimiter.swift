import Foundation
import HealthLedger

/// Requests per second per credential, as a token bucket: `rate` tokens a second,
/// up to `burst`; a request takes one. An empty bucket answers how long until the
/// next token (`Retry-After`, whole seconds, at least 1).
final class RateLimiter: @unchecked Sendable {
    // @unchecked: `buckets` is only touched with `lock` held (a pthread mutex, which
    // ThreadSanitizer understands; Synchronization's `Mutex` hands itself over in the
    // kernel when contended and is reported as a race).
    let rate: Double
    let burst: Double
    private var buckets: [CredentialID: (tokens: Double, at: Double)] = [:]
    private let lock = NSLock()

    /// `rate` 0: no limit.
    init(rate: Double, burst: Double? = nil) {
        self.rate = rate
        self.burst = burst ?? max(1, rate * 2)
    }

    /// nil when the request may go on, else the seconds to wait.
    func admit(_ credential: CredentialID, now: Double = ProcessInfo.processInfo.systemUptime) -> Int? {
        guard rate > 0 else { return nil }
        lock.lock()
        defer { lock.unlock() }
        do {
            var b = buckets[credential] ?? (burst, now)
            b.tokens = min(burst, b.tokens + (now - b.at) * rate)
            b.at = now
            defer { buckets[credential] = b }
            if b.tokens >= 1 {
                b.tokens -= 1
                return nil
            }
            return max(1, Int(((1 - b.tokens) / rate).rounded(.up)))
        }
    }
}
