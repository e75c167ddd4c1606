import Foundation
import HealthLedger
import Synchronization

/// Requests per second per credential, as a token bucket: `rate` tokens a second,
/// up to `burst`; a request takes one. An empty bucket answers how long until the
/// next token (`Retry-After`, whole seconds, at least 1).
final class RateLimiter: Sendable {
    let rate: Double
    let burst: Double
    private let buckets = Mutex<[CredentialID: (tokens: Double, at: Double)]>([:])

    /// `rate` 0: no limit.
    init(rate: Double, burst: Double? = nil) {
        self.rate = rate
        self.burst = burst ?? max(1, rate * 2)
    }

    /// nil when the request may go on, else the seconds to wait.
    func admit(_ credential: CredentialID, now: Double = ProcessInfo.processInfo.systemUptime) -> Int? {
        guard rate > 0 else { return nil }
        return buckets.withLock { table in
            var b = table[credential] ?? (burst, now)
            b.tokens = min(burst, b.tokens + (now - b.at) * rate)
            b.at = now
            defer { table[credential] = b }
            if b.tokens >= 1 {
                b.tokens -= 1
                return nil
            }
            return max(1, Int(((1 - b.tokens) / rate).rounded(.up)))
        }
    }
}
