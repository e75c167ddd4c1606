import Foundation
import LedgerLog

/// A deterministic pseudo-random generator (SplitMix64) that prints nothing but can
/// be reproduced from its seed: every failing test names the seed.
public struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    public init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// An in-memory ledger folder that models what a power loss does to writes that
/// were not yet synced, like SQLite's crash-test VFS: at a chosen sync the machine
/// "loses power", and each unsynced write is independently kept, dropped, garbled
/// or torn (a prefix of 512-byte sectors kept). I/O errors can be injected on a
/// chosen write or sync. After a crash every call fails until `rebooted()`.
public final class SimulatedFileSystem: LogFileSystem, @unchecked Sendable {
    // @unchecked: every mutable field is guarded by `mutex`.
    public let path: String
    private let mutex = NSLock()

    struct PendingWrite {
        let offset: UInt64
        let bytes: [UInt8]
    }

    struct FileState {
        var current: [UInt8] = []
        var durable: [UInt8] = []
        var pending: [PendingWrite] = []
        var truncatedSinceSync = false
        var durablyExists = false
    }

    public enum Fault: Equatable {
        case none
        /// The n-th (1-based) sync of any file fails with `errno`.
        case failSync(number: Int, errno: Int32)
        /// The n-th write fails with `errno`, having written nothing.
        case failWrite(number: Int, errno: Int32)
    }

    private var files: [String: FileState] = [:]
    private var folderExistsFlag = false
    private var lockHeld = false
    public private(set) var syncCount = 0
    public private(set) var writeCount = 0
    public private(set) var crashed = false
    /// Sync number (1-based) at which power is lost; nil: never.
    public var crashAtSync: Int?
    public var fault: Fault = .none
    /// Microseconds each sync takes (a real disk's latency lets appends group).
    public var syncDelay: UInt32 = 0
    private var rng: SeededRandom

    public init(path: String = "/sim/ledger", seed: UInt64 = 1) {
        self.path = path
        rng = SeededRandom(seed: seed)
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        mutex.lock()
        defer { mutex.unlock() }
        return try body()
    }

    private func checkAlive() throws {
        if crashed { throw LogError.io(operation: "simulated", path: path, errno: EIO) }
    }

    /// The folder as a fresh process sees it after the crash: durable bytes only.
    public func rebooted(seed: UInt64? = nil) -> SimulatedFileSystem {
        locked {
            if !crashed { loseUnsyncedWrites() }
            let next = SimulatedFileSystem(path: path, seed: seed ?? rng.next())
            next.files = files.mapValues { f in
                FileState(current: f.durable, durable: f.durable, pending: [], truncatedSinceSync: false, durablyExists: true)
            }
            next.folderExistsFlag = folderExistsFlag
            return next
        }
    }

    /// Applies the power loss: each unsynced write kept, dropped, garbled or torn.
    private func loseUnsyncedWrites() {
        for name in files.keys.sorted() {
            var f = files[name]!
            if !f.durablyExists && rng.next() % 2 == 0 {
                files[name] = nil
                continue
            }
            var image = f.durable
            if f.truncatedSinceSync && rng.next() % 2 == 0 {
                image = f.current.count < image.count ? Array(image[0..<f.current.count]) : image
            }
            for write in f.pending {
                var bytes = write.bytes
                switch rng.next() % 4 {
                case 0: continue  // dropped
                case 1: break  // kept
                case 2:  // garbled
                    for i in bytes.indices where rng.next() % 3 == 0 { bytes[i] = UInt8(truncatingIfNeeded: rng.next()) }
                default:  // torn: a prefix of whole sectors
                    let sectors = (bytes.count + 511) / 512
                    let keep = Int(rng.next() % UInt64(sectors + 1)) * 512
                    bytes = Array(bytes[0..<min(keep, bytes.count)])
                }
                let end = Int(write.offset) + bytes.count
                if image.count < end { image.append(contentsOf: zeros(end - image.count)) }
                image.replaceSubrange(Int(write.offset)..<end, with: bytes)
            }
            f.current = image
            f.durable = image
            f.pending = []
            files[name] = f
        }
        crashed = true
    }

    /// Total bytes durable in a file.
    public func durableBytes(_ name: String) -> [UInt8] { locked { files[name]?.durable ?? [] } }
    /// Current bytes of a file (what reads see).
    public func currentBytes(_ name: String) -> [UInt8] { locked { files[name]?.current ?? [] } }
    /// Replaces a file's bytes, durably (for tests that damage or truncate a log).
    public func setBytes(_ name: String, _ bytes: [UInt8]) {
        locked { files[name] = FileState(current: bytes, durable: bytes, pending: [], durablyExists: true) }
    }

    // MARK: LogFileSystem

    public func folderExists() -> Bool { locked { folderExistsFlag } }
    public func createFolder() throws { try locked { try checkAlive(); folderExistsFlag = true } }
    public func exists(_ name: String) -> Bool { locked { files[name] != nil || name == "index" || name == "quarantine" } }

    public func open(_ name: String, _ mode: LogFileOpenMode) throws -> any LogFile {
        try locked {
            try checkAlive()
            switch mode {
            case .readOnly, .readWrite:
                guard files[name] != nil else { throw LogError.ledgerNotFound(path: path + "/" + name) }
            case .createNew:
                guard files[name] == nil else { throw LogError.io(operation: "open", path: name, errno: EEXIST) }
                files[name] = FileState()
            case .replace:
                if files[name] == nil { files[name] = FileState() } else {
                    files[name]!.current = []
                    files[name]!.truncatedSinceSync = true
                }
            }
            return SimulatedFile(fs: self, name: name, readOnly: mode == .readOnly)
        }
    }

    public func createSubfolder(_ name: String) throws { try locked { try checkAlive() } }

    public func syncFolder(_ name: String?) throws {
        try locked {
            try checkAlive()
            for key in files.keys { files[key]!.durablyExists = true }
        }
    }

    public func rename(_ from: String, to: String) throws {
        try locked {
            try checkAlive()
            guard let f = files[from] else { throw LogError.io(operation: "rename", path: from, errno: ENOENT) }
            files[to] = f
            files[from] = nil
        }
    }

    public func remove(_ name: String) throws { try locked { try checkAlive(); files[name] = nil } }

    public func list(_ subfolder: String) -> [String] {
        locked {
            files.keys.filter { $0.hasPrefix(subfolder + "/") }.map { String($0.dropFirst(subfolder.count + 1)) }.sorted()
        }
    }

    public func lockExclusive(timeout: Double) throws -> any LogLock {
        try locked {
            try checkAlive()
            guard !lockHeld else { throw LogError.ledgerLocked(path: path) }
            lockHeld = true
            return SimulatedLock(fs: self)
        }
    }

    fileprivate func releaseLock() { locked { lockHeld = false } }

    // MARK: File operations

    fileprivate func size(_ name: String) throws -> UInt64 {
        try locked {
            try checkAlive()
            return UInt64(files[name]?.current.count ?? 0)
        }
    }

    fileprivate func read(_ name: String, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        try locked {
            try checkAlive()
            let bytes = files[name]?.current ?? []
            guard offset < UInt64(bytes.count) else { return 0 }
            let n = min(buffer.count, bytes.count - Int(offset))
            bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + Int(offset), byteCount: n) }
            return n
        }
    }

    fileprivate func write(_ name: String, _ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        try locked {
            try checkAlive()
            writeCount += 1
            if case .failWrite(let number, let code) = fault, number == writeCount {
                throw LogError.io(operation: "pwrite", path: name, errno: code)
            }
            let end = Int(offset) + bytes.count
            let count = files[name]!.current.count
            if count < end { files[name]!.current.append(contentsOf: zeros(end - count)) }
            files[name]!.current.withUnsafeMutableBytes {
                ($0.baseAddress! + Int(offset)).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
            }
            files[name]!.pending.append(PendingWrite(offset: offset, bytes: Array(bytes)))
        }
    }

    fileprivate func sync(_ name: String) throws {
        if syncDelay > 0 { usleep(syncDelay) }
        try locked {
            try checkAlive()
            syncCount += 1
            if let crashAtSync, syncCount == crashAtSync {
                loseUnsyncedWrites()
                throw LogError.io(operation: "fdatasync (power lost)", path: name, errno: EIO)
            }
            if case .failSync(let number, let code) = fault, number == syncCount {
                // Like Linux after a failed writeback: the kernel may have dropped the
                // dirty pages; the writes stay undecided until the next crash or reboot.
                throw LogError.io(operation: "fdatasync", path: name, errno: code)
            }
            files[name]!.durable = files[name]!.current
            files[name]!.pending = []
            files[name]!.truncatedSinceSync = false
        }
    }

    fileprivate func truncate(_ name: String, to length: UInt64) throws {
        try locked {
            try checkAlive()
            var f = files[name]!
            if Int(length) < f.current.count { f.current.removeSubrange(Int(length)...) } else {
                f.current.append(contentsOf: zeros(Int(length) - f.current.count))
            }
            f.truncatedSinceSync = true
            files[name] = f
        }
    }
}

/// `n` zero bytes, without the per-element cost of `repeatElement` in debug builds.
public func zeros(_ n: Int) -> [UInt8] {
    guard n > 0 else { return [] }
    return [UInt8](unsafeUninitializedCapacity: n) { buffer, count in
        buffer.baseAddress!.initialize(repeating: 0, count: n)
        count = n
    }
}

public final class SimulatedFile: LogFile, @unchecked Sendable {
    // @unchecked: immutable; all state lives in the (locked) file system.
    let fs: SimulatedFileSystem
    let name: String
    let readOnly: Bool

    init(fs: SimulatedFileSystem, name: String, readOnly: Bool) {
        self.fs = fs
        self.name = name
        self.readOnly = readOnly
    }

    public func size() throws -> UInt64 { try fs.size(name) }
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int { try fs.read(name, into: buffer, at: offset) }
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        precondition(!readOnly, "write to a read-only file")
        try fs.write(name, bytes, at: offset)
    }
    public func sync() throws { try fs.sync(name) }
    public func truncate(to length: UInt64) throws { try fs.truncate(name, to: length) }
    public func allocate(upTo length: UInt64) throws {
        // Space that reads as zeros: like a write of zeros that a crash may lose or garble.
        let current = try fs.size(name)
        guard length > current else { return }
        try zeros(Int(length - current)).withUnsafeBytes { try fs.write(name, $0, at: current) }
    }
    public func beginWriteback(offset: UInt64, length: UInt64) {}
    public func close() {}
}

public final class SimulatedLock: LogLock, @unchecked Sendable {
    // @unchecked: `released` is only touched under the file system's lock semantics.
    private let fs: SimulatedFileSystem
    private var released = false
    init(fs: SimulatedFileSystem) { self.fs = fs }
    public func release() {
        if !released {
            released = true
            fs.releaseLock()
        }
    }
    deinit { release() }
}
