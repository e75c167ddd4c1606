import Glibc
/// The seam between the log and the operating system.
///
/// Every byte the log reads or writes, every sync, the folder's entries and its
/// lock go through these two protocols. `PosixFileSystem` is the real one; tests
/// substitute a simulated file system that injects crashes (dropping, keeping or
/// garbling each unsynced write, like SQLite's crash-test VFS) and I/O errors.
public protocol LogFile: AnyObject, Sendable {
    /// Current length in bytes.
    func size() throws -> UInt64
    /// Reads up to `buffer.count` bytes at `offset`; returns the bytes read (fewer only at end of file).
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int
    /// Writes all of `bytes` at `offset` (not durable until `sync`).
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws
    /// Makes every write so far durable (fdatasync).
    func sync() throws
    /// Cuts the file to `length` bytes (not durable until `sync`).
    func truncate(to length: UInt64) throws
    /// Extends the file to `length` bytes that read as zeros, reserving the space
    /// (fallocate), so that later appends inside it change no file size and their
    /// syncs flush data only. Not durable until `sync`.
    func allocate(upTo length: UInt64) throws
    /// Asks the OS to start writing a range to disk without waiting (a hint: only
    /// `sync` makes anything durable).
    func beginWriteback(offset: UInt64, length: UInt64)
    /// Takes an exclusive `flock` on this open file (the writer locks the log itself,
    /// so that deleting or replacing `LOCK` cannot let a second writer in: W1);
    /// throws `LogError.ledgerLocked` when another open file description holds it.
    func lockExclusive() throws
    /// Releases the lock `lockExclusive` took (no effect when none is held).
    func unlock()
    /// Releases the file.
    func close()
    /// Whether a reader may keep this file open and read parts of it later, when they
    /// are first needed: a snapshot's column blocks (rule S8). True for a local file,
    /// where each such read is a `pread` that comes back short when the file was cut
    /// meanwhile (no mapping of the file, which would raise SIGBUS). False by default
    /// (simulated, PostgreSQL): the caller then reads what it needs at once.
    var readsOnDemand: Bool { get }
}

extension LogFile {
    /// Reads are not kept for later unless the file system says they may be.
    public var readsOnDemand: Bool { false }

    /// The whole file, read to its end (a file that shrank while read gives what was
    /// there). `path` names it in errors.
    /// - Throws: `LogError.io` (`EFBIG` for a file no array can hold); the file's errors.
    public func readAll(path: String) throws -> [UInt8] {
        let size = try size()
        guard size <= UInt64(Int.max / 2) else { throw LogError.io(operation: "read (too large)", path: path, errno: EFBIG) }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        var done = 0
        while done < bytes.count {
            let got = try bytes.withUnsafeMutableBytes { b in
                try read(into: UnsafeMutableRawBufferPointer(rebasing: b[done...]), at: UInt64(done))
            }
            if got == 0 { break }
            done += got
        }
        return done == bytes.count ? bytes : Array(bytes[0..<done])
    }
}

/// How to open a file of the ledger folder.
public enum LogFileOpenMode: Sendable {
    /// Existing file, reading only.
    case readOnly
    /// Existing file, reading and writing.
    case readWrite
    /// A new file (mode 0600); fails if it exists.
    case createNew
    /// Create or truncate (mode 0600), for derived files written whole.
    case replace
}

/// A held exclusive lock on the ledger; released by `release()` or deinit.
public protocol LogLock: AnyObject, Sendable {
    func release()
}

/// The ledger folder: files by name (relative paths such as `index/log.idx`).
public protocol LogFileSystem: Sendable {
    /// The folder's path, for messages.
    var path: String { get }
    /// Whether the folder itself exists.
    func folderExists() -> Bool
    /// Creates the folder (mode 0700) and its parents; an existing folder is made
    /// 0700 (health data is the owner's alone).
    func createFolder() throws
    /// Whether a file or subfolder exists.
    func exists(_ name: String) -> Bool
    /// Opens a file.
    func open(_ name: String, _ mode: LogFileOpenMode) throws -> any LogFile
    /// Creates a subfolder (mode 0700) if missing; returns true when it created it
    /// (the caller then syncs the folder, so that the new entry is durable). A
    /// subfolder that is a symbolic link or not a folder is refused (`unsafePath`):
    /// the ledger never follows a link out of its folder.
    @discardableResult
    func createSubfolder(_ name: String) throws -> Bool
    /// Makes the folder's (or a subfolder's) entries durable (fsync of the directory):
    /// creating, renaming or removing a file is durable only after this.
    func syncFolder(_ name: String?) throws
    /// Atomically renames `from` to `to` (replacing it).
    func rename(_ from: String, to: String) throws
    /// Removes a file; no error when it is absent.
    func remove(_ name: String) throws
    /// Names of the files in a subfolder, sorted; empty when it is absent.
    func list(_ subfolder: String) -> [String]
    /// Takes the exclusive writer lock, waiting up to `timeout` seconds;
    /// throws `LogError.ledgerLocked` when another holder keeps it.
    func lockExclusive(timeout: Double) throws -> any LogLock
    /// The data keys that open this ledger's sealed records (issue 32), when the owner
    /// gave the key-encryption key; nil otherwise (sealed records then read as
    /// unopened). Readers and the writer made on this location use them.
    var recordKeys: (any RecordKeys)? { get }
}

/// A store's own signal that the log changed (PostgreSQL's LISTEN/NOTIFY): a wake-up
/// only. A signal may be spurious or lost; followers re-read the log by position
/// after each, and poll the length as well, so a lost one delays and never loses.
public protocol LogChangeSignal: AnyObject, Sendable {
    /// Blocks until the store signals a change or `timeout` seconds pass; true on a signal.
    func waitForSignal(timeout: Double) throws -> Bool
}

extension LogFileSystem {
    /// No keys, unless the store holds some.
    public var recordKeys: (any RecordKeys)? { nil }

    /// True for a store that shows a byte only once it is committed (a database): every
    /// byte a reader sees there is known durable (I3), so invalid bytes anywhere, the
    /// last batch included, are damage, never a torn tail. False for files, where only
    /// `index/log.idx` proves durable lengths.
    public var storeCommitsEveryByte: Bool { self is any CommittedLogStore }

    /// The store's change signal for followers, or nil (files: inotify or polling).
    public func makeChangeSignal() throws -> (any LogChangeSignal)? {
        try (self as? any CommittedLogStore)?.changeSignal()
    }
}

/// A log store other than files (PostgreSQL): it shows only committed bytes and it can
/// wake followers. (Files need neither: `index/log.idx` proves durable lengths,
/// inotify wakes followers.)
public protocol CommittedLogStore: Sendable {
    /// A new change signal for one follower.
    func changeSignal() throws -> any LogChangeSignal
}
