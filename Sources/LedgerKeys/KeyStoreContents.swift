import LedgerCrypto

/// A data key that exists: its id, its scope and its bytes.
package struct DataKey: Sendable {
    /// Never 0, never reused within a store.
    package let id: UInt64
    package let scope: KeyScope
    package let key: SealKey
}

/// What remains of a destroyed key: never its bytes, only enough for a reader to say
/// "erased" rather than "unknown key".
package struct Tombstone: Hashable, Sendable {
    package let id: UInt64
    package let scope: KeyScope
    /// When the key was destroyed, nanoseconds since 1970-01-01T00:00:00Z (the caller's clock).
    package let destroyedAt: Int64
}

/// What an id names in a store.
package enum KeyLookup: Sendable {
    /// A key that exists.
    case live(DataKey)
    /// A key that was destroyed: what it sealed is erased.
    case destroyed(Tombstone)
    /// An id this store never issued (a record naming it came from elsewhere, or the
    /// store is not this ledger's).
    case unknown
}

/// The key store's contents as a value: the counter, the live keys and the tombstones.
///
/// Invariants (stated by `invariantFailure`, asserted after every change, and checked
/// entry by entry on every file read):
/// - every id in `live` and `tombstones` is at least 1 and below `nextID`;
/// - no id is both live and a tombstone;
/// - `current[scope]` is the highest live id of that scope, for exactly the scopes that
///   have a live key;
/// - `nextID` never decreases, so an id is never issued twice, destroyed or not.
struct KeyStoreContents: Sendable {
    var nextID: UInt64 = 1
    var live: [UInt64: DataKey] = [:]
    var tombstones: [UInt64: Tombstone] = [:]
    /// The key handed out for new records of a scope: its highest live id.
    var current: [KeyScope: UInt64] = [:]

    /// Destroys the live keys among `ids`, leaving tombstones; returns them by id.
    mutating func destroy(_ ids: some Sequence<UInt64>, at time: Int64) -> [Tombstone] {
        var destroyed: [Tombstone] = []
        var touched: Set<KeyScope> = []
        for id in ids {
            guard let entry = live.removeValue(forKey: id) else { continue }
            let tombstone = Tombstone(id: id, scope: entry.scope, destroyedAt: time)
            tombstones[id] = tombstone
            destroyed.append(tombstone)
            touched.insert(entry.scope)
        }
        if !touched.isEmpty {
            // A destroyed current key gives way to the next highest live key of its
            // scope (a rotation's old key), or to none.
            for scope in touched where current[scope].map({ live[$0] == nil }) ?? false { current[scope] = nil }
            for entry in live.values where touched.contains(entry.scope) && entry.id > (current[entry.scope] ?? 0) {
                current[entry.scope] = entry.id
            }
        }
        return destroyed.sorted { $0.id < $1.id }
    }

    /// The invariants above, as a reason when one fails.
    func invariantFailure() -> String? {
        guard nextID >= 1 else { return "next id 0" }
        for id in live.keys where id == 0 || id >= nextID { return "live key id \(id) outside 1..<\(nextID)" }
        for id in tombstones.keys where id == 0 || id >= nextID { return "destroyed key id \(id) outside 1..<\(nextID)" }
        for id in live.keys where tombstones[id] != nil { return "key id \(id) both live and destroyed" }
        var highest: [KeyScope: UInt64] = [:]
        for entry in live.values where entry.id > (highest[entry.scope] ?? 0) { highest[entry.scope] = entry.id }
        guard highest == current else { return "current keys are not the highest live id of each scope" }
        return nil
    }
}

/// Keys to add to a store's contents, planned against them without changing them: what
/// `prepare`, `rotate` and `issueIDs` make, written as one addition (Y8) and then
/// applied to the published contents in place, so that an add-only change never copies
/// a store of thousands of keys.
struct KeyAdditions: Sendable {
    /// The new keys, ids ascending from the contents' next id.
    private(set) var keys: [DataKey] = []
    /// The contents' next id once these are applied.
    private(set) var nextID: UInt64
    /// The next id they were planned against.
    let baseNextID: UInt64

    init(after contents: KeyStoreContents) {
        nextID = contents.nextID
        baseNextID = contents.nextID
    }

    /// Whether applying them changes anything.
    var isEmpty: Bool { keys.isEmpty && nextID == baseNextID }

    /// A new key for `scope`, to become its current key (its id above every other).
    /// - Throws: `idSpaceExhausted`; `randomSourceFailed`.
    mutating func add(_ scope: KeyScope) throws(KeyStoreError) -> DataKey {
        guard nextID < UInt64.max else { throw .idSpaceExhausted }
        let key: SealKey
        do { key = try SealKey.random() } catch { throw KeyEncryptionKey.randomFailure(error) }
        let entry = DataKey(id: nextID, scope: scope, key: key)
        nextID += 1
        keys.append(entry)
        return entry
    }

    /// Every id up to `id` issued.
    /// - Throws: `idSpaceExhausted` for `UInt64.max`.
    mutating func issue(through id: UInt64) throws(KeyStoreError) {
        guard id >= nextID else { return }
        guard id < UInt64.max else { throw .idSpaceExhausted }
        nextID = id + 1
    }
}

extension KeyStoreContents {
    /// The contents with `additions` in them (planned against these contents).
    mutating func apply(_ additions: KeyAdditions) {
        precondition(additions.baseNextID == nextID, "additions are applied to the contents they were planned against")
        for entry in additions.keys {
            live[entry.id] = entry
            current[entry.scope] = entry.id  // above every id before it
        }
        nextID = additions.nextID
    }
}
