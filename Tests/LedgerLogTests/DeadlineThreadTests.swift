import Foundation
@testable import LedgerLog
import Testing

/// The thread that runs long polls' deadlines: in deadline order, never early, never
/// once cancelled, whatever interval it is handed, and on time while every thread of
/// Swift's pool and Dispatch's is blocked.
struct DeadlineThreadTests {
    /// Records when each action ran, by name.
    final class Ran: Sendable {
        let entries = Locked([(name: String, at: UInt64)]())
        func note(_ name: String) { entries.withLock { $0.append((name, DispatchTime.now().uptimeNanoseconds)) } }
        var names: [String] { entries.withLock { $0.map(\.name) } }
        func at(_ name: String) -> UInt64? { entries.withLock { $0.first { $0.name == name }?.at } }
    }

    /// Waits (this thread only) until `ready` holds or `seconds` pass.
    static func wait(upTo seconds: Double, until ready: () -> Bool) {
        let end = Date(timeIntervalSinceNow: seconds)
        while !ready(), Date() < end { usleep(1_000) }
    }

    @Test func actionsRunInDeadlineOrderAndNeverEarly() {
        let ran = Ran()
        let start = DispatchTime.now().uptimeNanoseconds
        _ = DeadlineThread.shared.schedule(after: 0.15) { ran.note("c") }
        _ = DeadlineThread.shared.schedule(after: 0.05) { ran.note("a") }
        _ = DeadlineThread.shared.schedule(after: 0.10) { ran.note("b") }
        Self.wait(upTo: 10) { ran.names.count == 3 }
        #expect(ran.names == ["a", "b", "c"])
        for (name, seconds) in [("a", 0.05), ("b", 0.10), ("c", 0.15)] {
            let at = ran.at(name) ?? 0
            #expect(at >= start + UInt64(seconds * 1e9), "\(name) ran \(Double(Int64(at) - Int64(start)) / 1e9) s after scheduling")
        }
    }

    @Test func aCancelledActionNeverRuns() {
        let ran = Ran()
        let early = DeadlineThread.shared.schedule(after: 0.05) { ran.note("cancelled") }
        DeadlineThread.shared.cancel(early)
        _ = DeadlineThread.shared.schedule(after: 0.15) { ran.note("kept") }
        Self.wait(upTo: 10) { ran.names.contains("kept") }
        #expect(ran.names == ["kept"])
        DeadlineThread.shared.cancel(early)  // twice, and after its deadline: a no-op
    }

    /// The interval may come from a request (`wait=`): NaN, negative and infinite
    /// values neither trap nor wait forever.
    @Test func untrustedIntervalsAreBounded() {
        let ran = Ran()
        _ = DeadlineThread.shared.schedule(after: .nan) { ran.note("nan") }
        _ = DeadlineThread.shared.schedule(after: -1) { ran.note("negative") }
        _ = DeadlineThread.shared.schedule(after: -.infinity) { ran.note("-inf") }
        let far = DeadlineThread.shared.schedule(after: .infinity) { ran.note("inf") }
        let huge = DeadlineThread.shared.schedule(after: 1e300) { ran.note("1e300") }
        Self.wait(upTo: 10) { ran.names.count >= 3 }
        #expect(Set(ran.names) == ["nan", "negative", "-inf"])
        DeadlineThread.shared.cancel(far)
        DeadlineThread.shared.cancel(huge)
    }

    /// With more blocked tasks than Swift's pool has threads, and as many blocked
    /// Dispatch work items, a 0.1 s deadline still runs on time (a `Task.sleep` or a
    /// Dispatch timer ends after 1.0 s or more then).
    @Test func deadlinesHoldWhileThePoolsAreBlocked() async {
        let width = ProcessInfo.processInfo.activeProcessorCount
        let running = Locked(0)
        let holders = (0..<width).map { _ in Task.detached { running.withLock { $0 += 1 }; usleep(2_000_000) } }
        for _ in 0..<width { DispatchQueue.global().async { usleep(2_000_000) } }
        Self.wait(upTo: 2) { running.withLock { $0 } == width }
        let ran = Ran()
        let start = DispatchTime.now().uptimeNanoseconds
        _ = DeadlineThread.shared.schedule(after: 0.1) { ran.note("on time") }
        Self.wait(upTo: 5) { ran.at("on time") != nil }
        let late = Double(Int64(ran.at("on time") ?? UInt64.max / 2) - Int64(start)) / 1e9
        #expect(late >= 0.1 && late < 0.6, "ran \(late) s after scheduling")
        for holder in holders { await holder.value }
    }
}
