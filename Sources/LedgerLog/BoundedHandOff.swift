import Foundation

/// A bounded, blocking hand-over of elements from one producer thread to one
/// consumer thread, in order: the one queue of the pipelines that read ahead
/// (`Replayer`'s chunks of events, the importer's inflated chunks of XML).
///
/// `put` blocks while `capacity` elements wait; `next` blocks while none does and the
/// producer has not finished, then returns the elements in order and, after the
/// last, the producer's error (if it failed) or nil. `cancel` (the consumer went away)
/// wakes and refuses the producer. Memory: at most `capacity` elements in flight.
package final class BoundedHandOff<Element>: @unchecked Sendable {
    // @unchecked: every field is guarded by `condition`.
    private let condition = NSCondition()
    private var elements: [Element] = []
    private let capacity: Int
    private var finished = false
    private var cancelled = false
    private var failure: Error?

    package init(capacity: Int) {
        precondition(capacity >= 1, "a hand-off holds at least one element")
        self.capacity = capacity
    }

    /// The producer: waits for room; false when the consumer cancelled (stop producing).
    package func put(_ element: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while elements.count >= capacity && !cancelled { condition.wait() }
        if cancelled { return false }
        elements.append(element)
        condition.broadcast()
        return true
    }

    /// The producer is done (after its last `put`), with the error that stopped it, if any.
    package func finish(throwing error: Error? = nil) {
        condition.lock()
        finished = true
        failure = error
        condition.broadcast()
        condition.unlock()
    }

    /// The consumer: the next element, waiting for it; nil at the end, or the
    /// producer's error once every element before it was taken.
    package func next() throws -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while elements.isEmpty && !finished { condition.wait() }
        if !elements.isEmpty {
            condition.broadcast()
            return elements.removeFirst()
        }
        if let failure { throw failure }
        return nil
    }

    /// The consumer goes away: the producer's waits end and its `put`s are refused.
    package func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    /// Whether the consumer went away (a producer checks it between long steps).
    package var isCancelled: Bool {
        condition.lock()
        defer { condition.unlock() }
        return cancelled
    }
}
