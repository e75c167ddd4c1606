import Foundation

/// One thread of our own that runs small actions at their deadlines (a long poll's
/// end). Neither `Task.sleep` nor Dispatch's timers will do for a deadline that must
/// hold while other work holds the machine's threads: on Linux both wake on the shared
/// worker threads (Swift's cooperative pool, Dispatch's global queues), and when every
/// one of those is blocked a 100 ms sleep ends after a second or more (CI saw 3.2 s).
///
/// Actions run on this thread, one after another, outside the lock: they must be
/// short and must not block (resume a continuation, settle a flag).
///
/// Invariant: an action runs at most once and never before its deadline; once
/// `cancel` returned for it, it does not start (one already running may finish).
package final class DeadlineThread: Sendable {
    /// The one shared by the process, started on first use.
    package static let shared = DeadlineThread()

    /// Names one scheduled action, for `cancel`.
    package struct Ticket: Sendable, Hashable {
        fileprivate let id: UInt64
    }

    private struct Pending {
        var actions: [UInt64: @Sendable () -> Void] = [:]
        /// (deadline in monotonic nanoseconds, id), a binary min-heap; a cancelled
        /// action's entry stays until it comes to the top and is skipped there.
        var heap: [(due: UInt64, id: UInt64)] = []
        var nextID: UInt64 = 0
        var started = false
    }

    private let pending = LockedCondition(Pending())

    private init() {}

    /// Runs `action` on this thread once `seconds` have passed (at once for zero or
    /// less; at most a day later, whatever is asked: the interval may be untrusted).
    package func schedule(after seconds: Double, _ action: @escaping @Sendable () -> Void) -> Ticket {
        let bounded = seconds.isNaN ? 0 : min(max(seconds, 0), 86_400)
        let due = DispatchTime.now().uptimeNanoseconds &+ UInt64(bounded * 1e9)
        let (ticket, start) = pending.withLock { p -> (Ticket, Bool) in
            let id = p.nextID
            p.nextID += 1
            p.actions[id] = action
            Self.push((due, id), into: &p.heap)
            let start = !p.started
            p.started = true
            return (Ticket(id: id), start)
        }
        if start {
            let thread = Thread { [self] in run() }
            thread.name = "deadlines"
            thread.start()
        }
        pending.signal()  // the thread may sleep until a later deadline than this one
        return ticket
    }

    /// Makes sure the ticket's action will not start (a no-op once it has).
    package func cancel(_ ticket: Ticket) {
        pending.withLock { $0.actions[ticket.id] = nil }
    }

    private func run() {
        while true {
            let action: @Sendable () -> Void = pending.withLockWaiting { p, wait in
                while true {
                    guard let top = p.heap.first else { wait(nil); continue }
                    guard p.actions[top.id] != nil else { _ = Self.pop(from: &p.heap); continue }
                    let now = DispatchTime.now().uptimeNanoseconds
                    if top.due > now { wait(Double(top.due - now) / 1e9); continue }
                    _ = Self.pop(from: &p.heap)
                    return p.actions.removeValue(forKey: top.id)!
                }
            }
            action()
        }
    }

    private static func push(_ entry: (due: UInt64, id: UInt64), into heap: inout [(due: UInt64, id: UInt64)]) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].due < heap[parent].due else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private static func pop(from heap: inout [(due: UInt64, id: UInt64)]) -> (due: UInt64, id: UInt64) {
        let top = heap[0]
        let last = heap.removeLast()
        guard !heap.isEmpty else { return top }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].due < heap[smallest].due { smallest = left }
            if right < heap.count, heap[right].due < heap[smallest].due { smallest = right }
            guard smallest != parent else { return top }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
