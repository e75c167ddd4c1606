import Foundation

/// The change feed's follow loop, the one every front end runs (`changes --follow` over
/// a lock-free reader, the stores' `changes(of:from:)` streams over the ledger's actor):
/// ask for the changes after the anchor, hand the answer on, move the anchor to the
/// answer's, ask again at once while the answer was a full page, else wait until the
/// log may have changed and ask again.
///
/// What differs between front ends is only how they read, how they hand an answer on
/// and how they wait; each says when to stop by returning false (or throwing).
package enum ChangeFollowing {
    /// Follows from `anchor` (nil: from the start) until `deliver` or `wait` returns
    /// false or anything throws. `deliver` gets every answer, changes or not, in order.
    package static func follow(from anchor: ChangeAnchor?,
                               fetch: (ChangeAnchor?) async throws -> ChangeSet,
                               deliver: (ChangeSet) async throws -> Bool,
                               wait: () async throws -> Bool) async throws {
        var anchor = anchor
        while true {
            let answer = try await fetch(anchor)
            guard try await deliver(answer) else { return }
            anchor = answer.newAnchor
            if answer.hasMore { continue }
            guard try await wait() else { return }
        }
    }
}
