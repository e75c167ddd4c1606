import Foundation
import LedgerKeys
import LedgerLog

/// A ledger's data keys, as the log reaches them (`RecordKeys`, by id) and as the
/// ledger's writer asks for them (by scope): the key store `keys/keys.bin` under the
/// owner's key-encryption key (issue 32).
///
/// Readers open the store read-only, once, and read it again when a record names an id
/// above every id it held (a writer — this process's or another's — issued it since:
/// ids only grow, Y3). The ledger's writer, holding the ledger's lock, opens it for
/// writing (`openForWriting`): only it creates keys, and it does so before the records
/// they seal are appended (Y5).
///
/// Invariant: the held store is nil until first used; once the writer opened it for writing, it
/// stays that handle.
package final class LedgerKeyRing: RecordKeys, Sendable {
    /// The ledger's `keys/` folder (a store kept in a medium: the medium's name).
    package let folder: String
    /// Where the store lives when not in a folder: a PostgreSQL ledger's row.
    private let medium: (any KeyStoreMedium)?
    private let kek: KeyEncryptionKey
    /// The store, and — a read-only one — which `keys.bin` it was read from
    /// (`fileIdentity`): one lock, so the two are always of the same read.
    private let held = Locked<(store: KeyStore?, identity: [Int]?)>((nil, nil))

    /// The key folder of a ledger folder.
    package static func folder(ofLedger path: String) -> String { path + "/keys" }

    /// The keys of the ledger whose `keys/` folder is `folder`, under `kek`; nothing is
    /// read until a key is needed.
    package init(folder: String, kek: KeyEncryptionKey) {
        self.folder = folder
        self.kek = kek
        medium = nil
    }

    /// The keys of a ledger whose store lives in `medium` (a PostgreSQL ledger's keys,
    /// beside its log), under `kek`.
    package init(medium: any KeyStoreMedium, kek: KeyEncryptionKey) {
        folder = medium.name
        self.kek = kek
        self.medium = medium
    }

    /// Creates the key store of a new ledger (its folder 0700, the store 0600, durable).
    /// - Throws: `KeyStoreError` (`storeExists` when one is there).
    package func create() throws(KeyStoreError) {
        let created = if let medium { try KeyStore.create(medium: medium, kek: kek) } else { try KeyStore.create(folder: folder, kek: kek) }
        held.withLock { $0 = (created, nil) }
    }

    /// Opens the store for writing: for the ledger's writer alone, which holds the
    /// ledger's lock (a `keys.bin.new` left by a write that was never acknowledged is
    /// removed then, Y6).
    package func openForWriting() throws(KeyStoreError) {
        let opened = try open(.write)
        held.withLock { $0 = (opened, nil) }
    }

    /// The store, opened read-only on first use.
    private func current() throws(KeyStoreError) -> KeyStore {
        if let s = held.withLock({ $0.store }) { return s }
        return try reread(replacing: nil)
    }

    /// The store read again, read-only (its file's identity taken first: a write after
    /// that is seen as a change the next time); kept unless the writer's or a newer read
    /// was published meanwhile (`replacing`: the read this one replaces, nil for none).
    private func reread(replacing old: KeyStore?) throws(KeyStoreError) -> KeyStore {
        let identity = storeIdentity()
        let fresh = try open(.read)
        return held.withLock { h in
            if h.store === old { h = (fresh, identity) }
            return h.store!
        }
    }

    /// The store, read again when a reader's copy is not the file on disk any more
    /// (every write renames a new file over `keys.bin`, so its inode changes): what
    /// replay asks before it looks for erasures, which a writer may have made since.
    private func currentAsOnDisk() throws(KeyStoreError) -> KeyStore {
        let s = try current()
        guard s.access == .read else { return s }
        let identity = storeIdentity()
        guard identity == nil || identity != held.withLock({ $0.identity }) else { return s }
        return try reread(replacing: s)
    }

    /// The store, opened from its folder or medium.
    private func open(_ access: KeyStore.Access) throws(KeyStoreError) -> KeyStore {
        if let medium { return try KeyStore.open(medium: medium, kek: kek, access: access) }
        return try KeyStore.open(folder: folder, kek: kek, access: access)
    }

    /// What changes with every write of the store: `keys.bin`'s identity, or the
    /// medium's version.
    private func storeIdentity() -> [Int]? { medium.map { $0.version() } ?? Self.fileIdentity(folder) }

    /// `keys.bin`'s device, inode and change time (nil when it cannot be read).
    private static func fileIdentity(_ folder: String) -> [Int]? {
        var info = stat()
        guard stat(folder + "/keys.bin", &info) == 0 else { return nil }
        return [Int(info.st_dev), Int(info.st_ino), Int(info.st_ctim.tv_sec), Int(info.st_ctim.tv_nsec)]
    }

    // MARK: RecordKeys

    /// The key with `keyId`: live, destroyed (erased) or unknown. An id above every id
    /// the store held when read makes it read again (a writer issued it since). A store
    /// that cannot be read says why (the record is named unopened, never guessed).
    package func lookup(keyId: UInt64) -> RecordKeyLookup {
        let s: KeyStore
        do { s = try current() } catch {
            return .storeUnreadable(reason: error.description, trouble: Self.trouble(error))
        }
        var found = s.lookup(id: keyId)
        if case .unknown = found, keyId >= s.nextID, s.access == .read {
            do { found = try reread(replacing: s).lookup(id: keyId) } catch {
                return .storeUnreadable(reason: error.description, trouble: Self.trouble(error))
            }
        }
        switch found {
        case .live(let key): return .live(key.key)
        case .destroyed: return .destroyed
        case .unknown: return .unknown
        }
    }

    // MARK: The writer's side

    /// The id of the current key of each scope, creating the missing ones in one durable
    /// write before returning (so a key is on disk before anything it seals).
    ///
    /// A missing month's key comes with the keys of the months after it, up to the
    /// month `now` falls in (at most `monthsAhead`), for the same source and type, that
    /// do not exist yet: an import or an ingest goes through a source's months in
    /// order, and each new month would otherwise cost a store write of its own (two
    /// fsyncs and a rename). A key never used costs 63 bytes and erases like any other.
    /// - Throws: `KeyStoreError` (`readOnly` unless opened for writing).
    package func keyIds(for scopes: some Collection<KeyScope>, now: Int64 = LogClock.now()) throws(KeyStoreError)
        -> [KeyScope: UInt64] {
        let s = try current()
        var out: [KeyScope: UInt64] = [:]
        var missing: [KeyScope] = []
        for scope in scopes where out[scope] == nil {
            if let key = s.currentKey(for: scope) { out[scope] = key.id } else { missing.append(scope) }
        }
        guard !missing.isEmpty else { return out }
        let current = UTCMonth(containingNanoseconds: now).index
        var ahead = Set(missing)
        for scope in missing where scope.month.index < current && scope != SealedSnapshotFileSystem.scope {
            let last = min(current, scope.month.index + Self.monthsAhead)
            for index in (scope.month.index + 1)...last {
                let next = KeyScope(source: scope.source, type: scope.type, month: UTCMonth(index: index))
                if !ahead.contains(next), s.currentKey(for: next) == nil { ahead.insert(next) }
            }
        }
        let made = try s.prepare(ahead.sorted { ($0.type, $0.month.index) < ($1.type, $1.month.index) })
        for scope in missing { out[scope] = made[scope]?.id }
        return out
    }

    /// Months of keys made ahead of a missing one (`keyIds`): ten years.
    static let monthsAhead: UInt32 = 120

    // MARK: Erasure

    /// Whether the log may hold `erased` events: an erasure key (type 0xFFFC) exists,
    /// live or destroyed. One is made before the first `erased` record is appended (Y5),
    /// so without one there is none to look for. True when the store cannot be read
    /// (replay then names that failure at the first sealed record).
    package var mayHoldErasures: Bool {
        guard let s = try? currentAsOnDisk() else { return true }
        return !s.keys(where: { $0.type == SealScopes.erasure }).isEmpty
            || s.tombstones.contains { $0.scope.type == SealScopes.erasure }
    }

    /// The live keys whose scopes `predicate` accepts, ascending by id.
    package func liveKeys(where predicate: (KeyScope) -> Bool) throws(KeyStoreError) -> [DataKey] {
        try current().keys(where: predicate)
    }

    /// A new current key for each scope, in one durable write (the keys they replace
    /// stay live until destroyed): a cut erasure re-seals what stays under them.
    package func rotate(_ scopes: some Sequence<KeyScope>) throws(KeyStoreError) -> [KeyScope: UInt64] {
        try current().rotate(scopes).mapValues(\.id)
    }

    /// Makes the store issue no id up to `id` (a store restored from an older backup
    /// would issue again ids an erasure destroyed); the writer's alone.
    package func issueIDs(through id: UInt64) throws(KeyStoreError) {
        try current().issueIDs(through: id)
    }

    /// Whether the key `id` is live.
    package func isLive(_ id: UInt64) -> Bool {
        if case .live = lookup(keyId: id) { return true }
        return false
    }

    /// Destroys the live keys among `ids` in one durable write (the writer's alone);
    /// returns how many it destroyed.
    /// - Throws: `KeyStoreError` (`readOnly` unless opened for writing).
    @discardableResult
    package func destroy(ids: some Sequence<UInt64>, at time: Int64 = LogClock.now()) throws(KeyStoreError) -> Int {
        try current().destroy(ids: ids, at: time).count
    }
}

extension LedgerKeyRing {
    /// Whether a key store failure is the owner's to mend (a usage error, exit 2, for
    /// reads and writes alike): the wrong key file, a key file or store others may use.
    static func trouble(_ error: KeyStoreError) -> KeyStoreTrouble {
        if isOwnersToMend(error) { return .ownersToMend }
        if case .io = error { return .unreachable }
        return .damaged
    }

    static func isOwnersToMend(_ error: KeyStoreError) -> Bool {
        switch error {
        case .wrongKey, .unprotected, .keyFileNotGiven, .keyFileMissing, .keyFileMalformed: true
        default: false
        }
    }
}

extension LedgerError {
    /// A key store failure, as the ledger reports it: the owner's to mend (usage), or
    /// a failure.
    static func keyStore(_ error: KeyStoreError) -> LedgerError {
        .keyStore(error.description, usage: LedgerKeyRing.isOwnersToMend(error))
    }
}
