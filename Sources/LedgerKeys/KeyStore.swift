import Glibc
import LedgerCrypto
import Synchronization

/// The ledger's data keys: one ChaCha20-Poly1305 key per `KeyScope`, in one file,
/// `keys.bin`, in the key folder (`keys/` of the ledger folder: 0700, the file 0600),
/// sealed under the owner's key-encryption key. Destroying a key erases what it sealed
/// (crypto-shredding): a destruction replaces the whole file, and a later addition
/// holds only keys newer than it, so no copy of the store written after a destruction
/// holds the key (DESIGN.md, "Keys and erasure").
///
/// Durability: every change is durable when the call returns, written one of two ways.
/// - A change that only adds keys (`prepare`, `rotate`, `issueIDs`) is appended to
///   `keys.bin` as a sealed *addition* holding just the new keys, and fsynced (Y8): an
///   import that meets a new source or type a hundred times writes a hundred small
///   additions, not a hundred copies of a growing store. A kill leaves the addition
///   whole or cut short; one cut short was never acknowledged, is left out by readers
///   and cut off when the store is next opened for writing.
/// - Any other change (`destroy`), and an addition that would make the additions longer
///   than the base, is one write of the whole store — `keys.bin.new` created new
///   (O_CREAT|O_EXCL|O_NOFOLLOW, 0600), written, fsynced, renamed over `keys.bin`, the
///   folder fsynced (Y5). A kill at any point leaves `keys.bin` either the old store or
///   the new one (rename is atomic); a `keys.bin.new` left behind was never
///   acknowledged and is removed when the store is next opened for writing.
/// So a key handed out by `key(for:)`, `prepare` or `rotate` is on disk before any
/// ciphertext under it can be acknowledged, and a key `destroy` reports destroyed is
/// gone from `keys.bin` on return (an addition never holds a key written before it).
///
/// One writer: the store relies on its caller's exclusion between processes (the
/// ledger's `LOCK`); within a process, a lock serializes the writes, and lookups read
/// the last state written without waiting for a write in progress.
///
/// After a failed write the handle refuses further writes (`unusableAfterFailedWrite`):
/// the rename may or may not have happened, and writing its in-memory state again could
/// bring back a key a failed `destroy` had in fact destroyed on disk. Open it again.
package final class KeyStore: Sendable {
    /// Whether a handle may write.
    package enum Access: Sendable {
        /// The ledger's writer (holding its lock): writes, and removes a leftover `keys.bin.new`.
        case write
        /// A reader: never writes, never removes anything.
        case read
    }

    /// The store's file name in the key folder.
    package static let fileName = "keys.bin"
    /// The file a write goes through before its rename.
    package static let newFileName = "keys.bin.new"

    /// The key folder (a store kept elsewhere: its medium's name).
    package let folder: String
    package let access: Access
    let kek: KeyEncryptionKey
    /// Where the store lives when not in a folder (nil: `folder`).
    private let medium: (any KeyStoreMedium)?

    /// What readers see: the contents as last written durably. Held only for a lookup
    /// or to publish a write, never across file I/O, so a read never waits for an fsync.
    private let published: Mutex<KeyStoreContents>
    /// Held by a writer for a whole change (computing it, writing it, publishing it), so
    /// writes are serialized. Lock order: `writer`, then `published`.
    private let writer: Mutex<WriterState>

    /// What a writer knows of the file between writes.
    private struct WriterState {
        /// A write failed: the handle is unusable.
        var failed = false
        /// Where the file's parts end (nil: a store in a medium, always written whole).
        var layout: KeyStoreLayout?
    }

    /// Tests only: every write stops at this step as `kill -9` would (and the handle
    /// is then unusable, as after any failed write).
    let crashAt: WriteStep?

    private init(folder: String, kek: KeyEncryptionKey, access: Access, contents: KeyStoreContents, crashAt: WriteStep? = nil,
                 medium: (any KeyStoreMedium)? = nil, layout: KeyStoreLayout? = nil) {
        self.medium = medium
        self.folder = folder
        self.kek = kek
        self.access = access
        self.crashAt = crashAt
        self.published = Mutex(contents)
        self.writer = Mutex(WriterState(layout: medium == nil ? layout : nil))
    }

    /// `keys.bin`'s path (a store kept elsewhere: its medium's name).
    package var path: String { medium?.name ?? PosixFile.join(folder, Self.fileName) }
    var newPath: String { PosixFile.join(folder, Self.newFileName) }

    // MARK: Creating and opening

    /// A new, empty store in `folder` (made with mode 0700 when absent; its parent must
    /// exist), sealed under `kek`. Never replaces a store: `keys.bin` is put in place by
    /// `link(2)`, which refuses an existing name.
    /// - Throws: `storeExists`; `unprotected` for an existing folder its group or others
    ///   may use; `notAKeyStore` when `folder` is not a folder; `io`; `randomSourceFailed`.
    package static func create(folder: String, kek: KeyEncryptionKey) throws(KeyStoreError) -> KeyStore {
        if let info = try PosixFile.lstatMode(folder) {
            guard info.isDirectory else { throw .notAKeyStore(path: folder) }
            try PosixFile.refuseUnprotected(folder, mode: info.mode)
        } else if unsafe mkdir(folder, 0o700) == 0 {
            guard unsafe chmod(folder, 0o700) == 0 else { throw .io(operation: "chmod 0700", path: folder, errno: errno) }
            try PosixFile.syncFolder(PosixFile.folder(of: folder))
        } else {
            // Made by another creator meanwhile: as if it had been there.
            let code = errno
            guard code == EEXIST, let info = try PosixFile.lstatMode(folder), info.isDirectory else {
                throw .io(operation: "mkdir", path: folder, errno: code)
            }
            try PosixFile.refuseUnprotected(folder, mode: info.mode)
        }
        let bytes = try sealed(KeyStoreContents(), kek: kek)
        let store = KeyStore(folder: folder, kek: kek, access: .write, contents: KeyStoreContents(),
                             layout: KeyStoreLayout(whole: bytes))
        guard try PosixFile.lstatMode(store.path) == nil else { throw .storeExists(path: store.path) }
        // A name of this creator's own: two creators racing never take each other's
        // file; the one whose link lands first has the store, the other `storeExists`.
        let newPath = store.newPath + ".\(getpid())"
        unsafe unlink(newPath)
        guard try PosixFile.createNew(newPath, bytes: bytes) else {
            throw .io(operation: "create", path: newPath, errno: EEXIST)
        }
        if unsafe link(newPath, store.path) != 0 {
            let code = errno
            unsafe unlink(newPath)
            if code == EEXIST { throw .storeExists(path: store.path) }
            throw .io(operation: "link", path: store.path, errno: code)
        }
        unsafe unlink(newPath)
        try PosixFile.syncFolder(folder)
        return store
    }

    /// A new, empty store in `medium`, sealed under `kek`; never replaces one.
    /// - Throws: `storeExists`; the medium's `io`; `randomSourceFailed`.
    package static func create(medium: any KeyStoreMedium, kek: KeyEncryptionKey) throws(KeyStoreError) -> KeyStore {
        try medium.create(try sealed(KeyStoreContents(), kek: kek))
        return KeyStore(folder: medium.name, kek: kek, access: .write, contents: KeyStoreContents(), medium: medium)
    }

    /// The store in `medium`, opened with `kek`.
    /// - Throws: `storeMissing`; `notAKeyStore`; `unknownVersion`; `truncated`;
    ///   `wrongKey`; `tampered`; `malformed`; the medium's `io`.
    package static func open(medium: any KeyStoreMedium, kek: KeyEncryptionKey, access: Access = .write) throws(KeyStoreError) -> KeyStore {
        var bytes = try medium.read()
        defer { wipe(&bytes) }
        let (contents, _) = try KeyStoreFile.decode(bytes, kek: kek, path: medium.name)
        // A purge a failed erasure left due: tried again by the next writer (a failure
        // leaves it due; the keys are destroyed in the store either way).
        if access == .write { try? medium.purgeIfPending() }
        return KeyStore(folder: medium.name, kek: kek, access: access, contents: contents, medium: medium)
    }

    /// The store in `folder`, opened with `kek`. For `.write`, a leftover
    /// `keys.bin.new` (a write killed before its rename: never acknowledged) is removed
    /// first.
    /// - Throws: `storeMissing`; `unprotected` (the folder or the file usable by group or
    ///   others); `notAKeyStore` (not a folder, not a regular file, a symbolic link, or
    ///   not the magic); `unknownVersion`; `truncated`; `wrongKey`; `tampered`;
    ///   `malformed`; `io`.
    package static func open(folder: String, kek: KeyEncryptionKey, access: Access = .write) throws(KeyStoreError) -> KeyStore {
        try open(folder: folder, kek: kek, access: access, crashAt: nil)
    }

    /// `open`, with every write stopped at `crashAt` (tests: `kill -9` at each step).
    static func open(folder: String, kek: KeyEncryptionKey, access: Access, crashAt: WriteStep?) throws(KeyStoreError) -> KeyStore {
        let file = PosixFile.join(folder, fileName)
        guard let info = try PosixFile.lstatMode(folder) else { throw .storeMissing(path: file) }
        guard info.isDirectory else { throw .notAKeyStore(path: folder) }
        try PosixFile.refuseUnprotected(folder, mode: info.mode)
        if access == .write {
            let leftover = PosixFile.join(folder, newFileName)
            if unsafe unlink(leftover) != 0 && errno != ENOENT { throw .io(operation: "unlink", path: leftover, errno: errno) }
        }
        let (contents, layout, fileLength) = try read(file, kek: kek)
        if access == .write && layout.validLength < fileLength {
            // An addition cut short, never acknowledged (Y8): cut off, so the next one
            // follows the last whole one.
            try PosixFile.truncate(file, to: layout.validLength)
        }
        return KeyStore(folder: folder, kek: kek, access: access, contents: contents, crashAt: crashAt, layout: layout)
    }

    /// The contents of the store file at `path`, where its parts end, and its length:
    /// the header read and checked first, so that a wrong length or key is told before
    /// the body is read.
    static func read(_ path: String, kek: KeyEncryptionKey) throws(KeyStoreError) -> (KeyStoreContents, KeyStoreLayout, Int) {
        // O_NONBLOCK: a FIFO in the file's place must not block the open (it is then
        // refused as not a regular file).
        let fd = unsafe Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            switch errno {
            case ENOENT: throw .storeMissing(path: path)
            case ELOOP: throw .notAKeyStore(path: path)  // a symbolic link
            default: throw .io(operation: "open", path: path, errno: errno)
            }
        }
        defer { close(fd) }
        var info = stat()
        guard unsafe fstat(fd, &info) == 0 else { throw .io(operation: "fstat", path: path, errno: errno) }
        guard UInt32(info.st_mode) & UInt32(S_IFMT) == UInt32(S_IFREG) else { throw .notAKeyStore(path: path) }
        try PosixFile.refuseUnprotected(path, mode: UInt32(info.st_mode) & 0o7777)
        let fileLength = Int(info.st_size)
        let header = try PosixFile.read(fd, count: KeyStoreFile.headerByteCount, path: path)
        let (expected, _) = try KeyStoreFile.checkHeader(header, fileLength: fileLength, kek: kek, path: path)
        var rest = try PosixFile.read(fd, count: fileLength - header.count, path: path)
        defer { wipe(&rest) }
        guard header.count + rest.count >= expected else {
            throw .truncated(path: path, length: header.count + rest.count, expected: expected)  // shrank while read
        }
        let (contents, layout) = try KeyStoreFile.decode(header + rest, kek: kek, path: path)
        return (contents, layout, header.count + rest.count)
    }

    // MARK: Reading

    /// What `id` names: a live key, a tombstone, or nothing this store issued.
    package func lookup(id: UInt64) -> KeyLookup {
        published.withLock { contents in
            if let entry = contents.live[id] { return .live(entry) }
            if let tombstone = contents.tombstones[id] { return .destroyed(tombstone) }
            return .unknown
        }
    }

    /// The key new records of `scope` are sealed under, if it has one; creates nothing.
    package func currentKey(for scope: KeyScope) -> DataKey? {
        published.withLock { contents in contents.current[scope].flatMap { contents.live[$0] } }
    }

    /// The live keys whose scopes `predicate` accepts, by id (older keys of a rotated
    /// scope included).
    package func keys(where predicate: (KeyScope) -> Bool) -> [DataKey] {
        published.withLock { contents in contents.live.values.filter { predicate($0.scope) }.sorted { $0.id < $1.id } }
    }

    /// Every tombstone, by id.
    package var tombstones: [Tombstone] {
        published.withLock { contents in contents.tombstones.values.sorted { $0.id < $1.id } }
    }

    /// Live keys in the store.
    package var liveCount: Int { published.withLock { $0.live.count } }

    /// The id the next new key will get: above every id ever issued.
    package var nextID: UInt64 { published.withLock { $0.nextID } }

    // MARK: Writing

    /// The current key of `scope`, created (durably, before this returns) when it has none.
    /// - Throws: as `prepare`.
    package func key(for scope: KeyScope) throws(KeyStoreError) -> DataKey {
        guard let key = try prepare([scope])[scope] else {
            preconditionFailure("prepare returns a key for every scope it is given")
        }
        return key
    }

    /// The current key of every scope in `scopes`, the missing ones created together in
    /// one durable write (none when all exist): a batch of records asks once.
    /// - Throws: `readOnly`; `unusableAfterFailedWrite`; `idSpaceExhausted`;
    ///   `randomSourceFailed`; `io` (nothing was acknowledged; the handle is then unusable).
    package func prepare(_ scopes: some Sequence<KeyScope>) throws(KeyStoreError) -> [KeyScope: DataKey] {
        try addKeys { (contents: KeyStoreContents, additions: inout KeyAdditions) throws(KeyStoreError) -> [KeyScope: DataKey] in
            var keys: [KeyScope: DataKey] = [:]
            for scope in scopes where keys[scope] == nil {
                if let id = contents.current[scope], let entry = contents.live[id] {
                    keys[scope] = entry
                } else {
                    keys[scope] = try additions.add(scope)
                }
            }
            return keys
        }
    }

    /// A new current key for every scope in `scopes`, in one durable write; the keys they
    /// replace stay live (still opening what they sealed) until destroyed. For erasing a
    /// range of days: rotate the months it cuts, re-seal the surviving records under
    /// the new keys, make that durable, then `destroy` the old ids.
    /// - Throws: as `prepare`.
    package func rotate(_ scopes: some Sequence<KeyScope>) throws(KeyStoreError) -> [KeyScope: DataKey] {
        try addKeys { (_: KeyStoreContents, additions: inout KeyAdditions) throws(KeyStoreError) -> [KeyScope: DataKey] in
            var keys: [KeyScope: DataKey] = [:]
            for scope in scopes where keys[scope] == nil { keys[scope] = try additions.add(scope) }
            return keys
        }
    }

    /// Destroys the live keys among `ids` (others are skipped) in one durable write,
    /// leaving tombstones dated `time` (ns since 1970). Returns the tombstones made, by
    /// id; after it returns, `keys.bin` holds none of their bytes (a store in a medium:
    /// the medium's earlier versions are purged too, `purgeEarlierVersions`).
    /// - Throws: `readOnly`; `unusableAfterFailedWrite`; `randomSourceFailed`; `io` (the
    ///   keys may or may not be destroyed on disk: open the store again and destroy again).
    package func destroy(ids: some Sequence<UInt64>, at time: Int64) throws(KeyStoreError) -> [Tombstone] {
        try change { (contents: inout KeyStoreContents) throws(KeyStoreError) -> ([Tombstone], Bool) in
            let destroyed = contents.destroy(ids, at: time)
            return (destroyed, !destroyed.isEmpty)
        }
    }

    /// Makes every id up to `id` issued (`nextID` past it), in one durable write: a
    /// store restored from a backup older than the ledger's log would otherwise issue
    /// again ids the log already names — keys an erasure destroyed (Y3).
    /// - Throws: as `destroy`; `idSpaceExhausted` for `UInt64.max`.
    package func issueIDs(through id: UInt64) throws(KeyStoreError) {
        try addKeys { (_: KeyStoreContents, additions: inout KeyAdditions) throws(KeyStoreError) in
            try additions.issue(through: id)
        }
    }

    /// Destroys every live key whose scope `predicate` accepts, as `destroy(ids:at:)`.
    /// A source: `{ $0.source == s }`; a type: `{ $0.type == t }`; the whole person: `{ _ in true }`.
    package func destroy(at time: Int64, where predicate: (KeyScope) -> Bool) throws(KeyStoreError) -> [Tombstone] {
        try change { (contents: inout KeyStoreContents) throws(KeyStoreError) -> ([Tombstone], Bool) in
            let ids = contents.live.values.filter { predicate($0.scope) }.map(\.id)
            let destroyed = contents.destroy(ids, at: time)
            return (destroyed, !destroyed.isEmpty)
        }
    }

    /// An add-only change: `plan` reads the contents and plans the keys to add
    /// (`KeyAdditions`); they are written durably — as an addition (Y8), or with the
    /// store whole — and only then applied to the published contents, in place. Holds
    /// `writer` throughout, as `change` does; readers see the keys once they are on disk.
    private func addKeys<R: Sendable>(
        _ plan: (KeyStoreContents, inout KeyAdditions) throws(KeyStoreError) -> R
    ) throws(KeyStoreError) -> R {
        try writer.withLock { (state: inout WriterState) throws(KeyStoreError) -> R in
            guard access == .write else { throw .readOnly }
            guard !state.failed else { throw .unusableAfterFailedWrite }
            // The contents are read through a reference that ends with this closure, so
            // that applying the additions below changes them in place, not a copy.
            let (result, additions) = try { () throws(KeyStoreError) -> (R, KeyAdditions) in
                let contents = published.withLock { $0 }
                var additions = KeyAdditions(after: contents)
                return (try plan(contents, &additions), additions)
            }()
            guard !additions.isEmpty else { return result }
            do throws(KeyStoreError) {
                if let layout = state.layout, let appended = try append(additions.keys, nextID: additions.nextID, to: layout) {
                    state.layout = appended
                } else {
                    var next = published.withLock { $0 }
                    next.apply(additions)
                    state.layout = try write(next, destroying: false)
                }
            } catch {
                state.failed = true
                throw error
            }
            published.withLock { $0.apply(additions) }
            return result
        }
    }

    /// Applies `body` to a copy of the contents; when it reports a change, writes the
    /// copy durably and only then publishes it. Holds `writer` throughout, so writes are
    /// serialized and the copy is of the latest state; readers keep seeing the previous
    /// state until the write is durable, so none sees a key that is not on disk yet,
    /// and a key being destroyed stays readable until it is gone from the file.
    private func change<R: Sendable>(
        _ body: (inout KeyStoreContents) throws(KeyStoreError) -> (R, Bool)
    ) throws(KeyStoreError) -> R {
        try writer.withLock { (state: inout WriterState) throws(KeyStoreError) -> R in
            guard access == .write else { throw .readOnly }
            guard !state.failed else { throw .unusableAfterFailedWrite }
            let current = published.withLock { $0 }
            var next = current
            let (result, changed) = try body(&next)
            guard changed else { return result }
            assert(next.invariantFailure() == nil, next.invariantFailure() ?? "")
            assert(next.nextID >= current.nextID, "ids are never reissued")
            let destroying = next.tombstones.count > current.tombstones.count
            do throws(KeyStoreError) {
                state.layout = try write(next, destroying: destroying)
            } catch {
                state.failed = true
                throw error
            }
            published.withLock { $0 = next }
            // Keys destroyed: a medium's earlier versions of the store go too. A failure
            // here leaves the write done (and the handle usable; the purge stays due).
            if destroying { try medium?.purgeEarlierVersions() }
            return result
        }
    }

    /// A fresh random nonce (Y7).
    private static func freshNonce() throws(KeyStoreError) -> SealNonce {
        do {
            return try SealNonce(bytes: SealKey.random().bytes.prefix(SealNonce.byteCount))
        } catch {
            throw KeyEncryptionKey.randomFailure(error)
        }
    }

    /// The file's bytes for `contents`, under a fresh random nonce.
    private static func sealed(_ contents: KeyStoreContents, kek: KeyEncryptionKey) throws(KeyStoreError) -> [UInt8] {
        try KeyStoreFile.encode(contents, kek: kek, nonce: freshNonce())
    }

    /// Appends `added` (the keys new since the last write) and `nextID` as one addition
    /// at the end of the file's whole parts, and fsyncs it (Y8); returns the layout
    /// after it. Nil, writing nothing, when the additions would then be longer than the
    /// base (the store is written whole instead, so the file stays below twice its
    /// contents and an addition's cost below the base's), or when the base is version 1.
    private func append(_ added: [DataKey], nextID: UInt64, to layout: KeyStoreLayout) throws(KeyStoreError) -> KeyStoreLayout? {
        let appendedSoFar = layout.validLength - layout.baseLength
        let estimate = KeyStoreFile.additionHeadByteCount + KeyStoreFile.additionBodyHeadByteCount
            + added.count * KeyStoreFile.liveEntryByteCount + ChaCha20Poly1305.tagByteCount
        guard layout.acceptsAdditions, appendedSoFar + estimate <= layout.baseLength, layout.additions < Int(UInt32.max) - 1 else {
            return nil
        }
        let bytes = try KeyStoreFile.encodeAddition(added, nextID: nextID, header: layout.header,
                                                    index: UInt32(layout.additions + 1), kek: kek, nonce: Self.freshNonce())
        try PosixFile.append(bytes, to: path, at: layout.validLength, crash: crashAt)
        var next = layout
        next.additions += 1
        next.validLength += bytes.count
        return next
    }

    /// One durable write of the whole store: `keys.bin.new` created new, written and
    /// fsynced; renamed over `keys.bin`; the folder fsynced. Returns the new file's
    /// layout (nil for a store in a medium).
    private func write(_ contents: KeyStoreContents, destroying: Bool) throws(KeyStoreError) -> KeyStoreLayout? {
        let bytes = try Self.sealed(contents, kek: kek)
        if let medium {
            try medium.replace(bytes, destroying: destroying)
            return nil
        }
        guard try PosixFile.createNew(newPath, bytes: bytes, crash: crashAt) else {
            throw .io(operation: "create", path: newPath, errno: EEXIST)  // another writer, or a planted file
        }
        guard unsafe rename(newPath, path) == 0 else {
            let code = errno
            unsafe unlink(newPath)
            throw .io(operation: "rename", path: path, errno: code)
        }
        if crashAt == .renamed { throw .io(operation: "simulated crash after renamed", path: path, errno: 0) }
        try PosixFile.syncFolder(folder)
        if crashAt == .folderSynced { throw .io(operation: "simulated crash after folderSynced", path: path, errno: 0) }
        return KeyStoreLayout(whole: bytes)
    }
}
