/// Where a key store's sealed bytes live when not in a folder: a database row beside
/// the ledger's log (`LedgerPostgres`'s `PostgresKeyStore`). The bytes are the same
/// sealed file a folder holds as `keys.bin` (sealed under the owner's key-encryption
/// key: the medium never sees a data key).
///
/// What a medium must guarantee, as the folder does with `link(2)` and `rename(2)`:
/// - `create` puts a store where there is none, never replacing one;
/// - `replace` is atomic and durable on return: a reader sees the old bytes or the
///   new, and after a crash the medium holds one of them;
/// - `purgeEarlierVersions`, after keys were destroyed, removes what the medium still
///   keeps of the store's earlier versions where that is the medium's to remove (a
///   database's dead row versions); what lies beyond it (backups, replicas' history,
///   a disk's old blocks) DESIGN.md states plainly.
package protocol KeyStoreMedium: Sendable {
    /// Names the store in errors and messages (no password).
    var name: String { get }
    /// Puts `bytes` as a new store.
    /// - Throws: `storeExists` when there is one; `io`.
    func create(_ bytes: [UInt8]) throws(KeyStoreError)
    /// The store's bytes.
    /// - Throws: `storeMissing`; `io`.
    func read() throws(KeyStoreError) -> [UInt8]
    /// Replaces the store's bytes, atomically and durably — only if they are still the
    /// ones this medium last read or wrote (a writer that lost the ledger's lock must
    /// not write back an older store over a newer one). `destroying`: the new bytes
    /// lack keys the old had (`purgeEarlierVersions` is due, and stays due until it
    /// succeeds: `purgeIfPending`).
    /// - Throws: `storeMissing`; `io` (the replacement may or may not have happened, or
    ///   the store changed since it was read).
    func replace(_ bytes: [UInt8], destroying: Bool) throws(KeyStoreError)
    /// What changes with every `replace` (a reader holding an older read reads again);
    /// nil when it cannot be told.
    func version() -> [Int]?
    /// Removes what the medium keeps of the store's earlier versions (after keys were
    /// destroyed).
    /// - Throws: `io` (the keys are destroyed in the store all the same; the purge stays
    ///   due).
    func purgeEarlierVersions() throws(KeyStoreError)
    /// Runs a purge left due by an earlier one that failed (a writer opening the store
    /// calls it; a failure leaves it due).
    func purgeIfPending() throws(KeyStoreError)
}
