import Foundation
import HealthModel
import LedgerCore
import LedgerLog

/// The change feed as the stores offer it (HKAnchoredObjectQuery, its update
/// handler, HKObserverQuery): one implementation for an app's view and the owner's.
struct FeedSource: Sendable {
    let ledger: Ledger
    /// Who reads (the read view applies its visibility).
    let viewer: Viewer

    func anchored(_ types: Set<ObjectType>, predicate: SamplePredicate?, anchor: ChangeAnchor?, limit: Int) async throws -> ChangeSet {
        try await ledger.storeRead(as: viewer) { try $0.changes(of: types, predicate: predicate, anchor: anchor, limit: limit) }
    }

    /// `anchored`, but when nothing has changed, waits up to `seconds` for a commit
    /// and asks again: returns as soon as a commit brings a change this viewer sees
    /// (a long poll), or the empty set at the deadline.
    func anchored(_ types: Set<ObjectType>, predicate: SamplePredicate?, anchor: ChangeAnchor?, limit: Int,
                  waitingUpTo seconds: Double) async throws -> ChangeSet {
        let deadline = Date().addingTimeInterval(max(0, seconds))
        while true {
            let seen = await ledger.lastCommittedSequence
            let set = try await anchored(types, predicate: predicate, anchor: anchor, limit: limit)
            let left = deadline.timeIntervalSinceNow
            guard set.changes.isEmpty, left > 0, !Task.isCancelled else { return set }
            guard await ledger.waitForCommit(after: seen, timeout: left) else {
                return try await anchored(types, predicate: predicate, anchor: anchor, limit: limit)
            }
        }
    }

    func current(_ types: Set<ObjectType>) async throws -> ChangeAnchor {
        try await ledger.storeRead(as: viewer) { try $0.currentAnchor(of: types) }
    }

    /// Pages of changes from `anchor`, then more as they commit, until cancelled.
    func stream(_ types: Set<ObjectType>, predicate: SamplePredicate?, from anchor: ChangeAnchor?,
                pageSize: Int, skipEmpty: Bool = true) -> AsyncThrowingStream<ChangeSet, Error> {
        let source = self
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    let watcher = try LogWatcher(source.ledger.fs)
                    try await ChangeFollowing.follow(from: anchor, fetch: { anchor in
                        try await source.anchored(types, predicate: predicate, anchor: anchor, limit: pageSize)
                    }, deliver: { set in
                        if !set.changes.isEmpty || !skipEmpty { continuation.yield(set) }
                        return !Task.isCancelled
                    }, wait: {
                        // Nothing more now: wait for a write to the log, or a quarter second (so that
                        // cancellation is seen and a missed wake-up costs at most that), then ask again.
                        _ = try await withCheckedThrowingContinuation { (c: CheckedContinuation<Bool, Error>) in
                            DispatchQueue.global().async { c.resume(with: Result { try watcher.waitForActivity(timeout: 0.25) }) }
                        }
                        return !Task.isCancelled
                    })
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

extension HealthStore {
    nonisolated var feed: FeedSource {
        FeedSource(ledger: ledger, viewer: .app(app.bundleIdentifier))
    }

    /// HKAnchoredObjectQuery: the samples of `types` saved after `anchor` (nil: all)
    /// that match `predicate` and this app may read, and the objects deleted after it
    /// that match and that it could read, in log order, at most `limit` (0: all);
    /// `newAnchor` is the position of the last object returned. A foreign or
    /// rewritten anchor throws `ChangeFeedError`.
    public func anchoredObjects(of types: Set<ObjectType>, predicate: SamplePredicate? = nil, anchor: ChangeAnchor?,
                                limit: Int = 0) async throws -> ChangeSet {
        try await feed.anchored(types, predicate: predicate, anchor: anchor, limit: limit)
    }

    /// The anchored query as a long poll: when nothing changed after `anchor`, waits up
    /// to `seconds` for a commit that brings a change this app may see, and returns as
    /// soon as one does (or the empty set at the deadline; a cancelled task returns
    /// at once).
    public func anchoredObjects(of types: Set<ObjectType>, predicate: SamplePredicate? = nil, anchor: ChangeAnchor?,
                                limit: Int = 0, waitingUpTo seconds: Double) async throws -> ChangeSet {
        try await feed.anchored(types, predicate: predicate, anchor: anchor, limit: limit, waitingUpTo: seconds)
    }

    /// The anchored query with an update handler: pages of changes from `anchor`
    /// (nil: everything), then each later commit's changes, until the task is
    /// cancelled. Each element's `newAnchor` resumes after it.
    public nonisolated func changes(of types: Set<ObjectType>, predicate: SamplePredicate? = nil, from anchor: ChangeAnchor?,
                                    pageSize: Int = 1000) -> AsyncThrowingStream<ChangeSet, Error> {
        feed.stream(types, predicate: predicate, from: anchor, pageSize: pageSize)
    }

    /// HKObserverQuery: an element (the anchor after the changes) each time committed
    /// changes of `types` visible to this app arrive, bursts coalesced, at least once
    /// per change after the call returns.
    public nonisolated func observe(_ types: Set<ObjectType>) async throws -> AsyncThrowingStream<ChangeAnchor, Error> {
        observeFeed(feed, types, from: try await feed.current(types))
    }
}

extension OwnerStore {
    nonisolated var feed: FeedSource { FeedSource(ledger: ledger, viewer: .owner) }

    /// `HealthStore.anchoredObjects` for the owner: every sample and every deletion.
    public func anchoredObjects(of types: Set<ObjectType>, predicate: SamplePredicate? = nil, anchor: ChangeAnchor?,
                                limit: Int = 0) async throws -> ChangeSet {
        try await feed.anchored(types, predicate: predicate, anchor: anchor, limit: limit)
    }

    /// `HealthStore.anchoredObjects(…, waitingUpTo:)` for the owner.
    public func anchoredObjects(of types: Set<ObjectType>, predicate: SamplePredicate? = nil, anchor: ChangeAnchor?,
                                limit: Int = 0, waitingUpTo seconds: Double) async throws -> ChangeSet {
        try await feed.anchored(types, predicate: predicate, anchor: anchor, limit: limit, waitingUpTo: seconds)
    }

    /// `HealthStore.changes` for the owner.
    public nonisolated func changes(of types: Set<ObjectType>, predicate: SamplePredicate? = nil, from anchor: ChangeAnchor?,
                                    pageSize: Int = 1000) -> AsyncThrowingStream<ChangeSet, Error> {
        feed.stream(types, predicate: predicate, from: anchor, pageSize: pageSize)
    }

    /// `HealthStore.observe` for the owner.
    public nonisolated func observe(_ types: Set<ObjectType>) async throws -> AsyncThrowingStream<ChangeAnchor, Error> {
        observeFeed(feed, types, from: try await feed.current(types))
    }
}

private func observeFeed(_ feed: FeedSource, _ types: Set<ObjectType>, from start: ChangeAnchor)
    -> AsyncThrowingStream<ChangeAnchor, Error> {
    AsyncThrowingStream { continuation in
        let task = Task {
            do {
                // Pages of a burst coalesce: one notification per answer that had changes and no more pending.
                for try await set in feed.stream(types, predicate: nil, from: start, pageSize: 0) {
                    continuation.yield(set.newAnchor)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
    }
}
