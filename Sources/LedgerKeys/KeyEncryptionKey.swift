import Glibc
import LedgerChecksums
import LedgerCrypto

/// The key-encryption key (KEK): the owner's 32-byte key that seals the key store.
/// It lives outside the ledger folder, in a file the owner keeps
/// (`init --encrypt --key-file PATH` writes it; later commands find it through
/// `--key-file PATH` or `HEALTHLEDGER_KEY_FILE`). Without it the ledger folder reveals no
/// health content.
///
/// The file is text, so a person can tell what it is (events/FORMAT.md, rules F1–F5, "The
/// key-encryption-key file"): exactly `healthledger-kek-v1:` then the key's 32 bytes as
/// 64 lower-case hex digits, then one line feed (85 bytes). It is created new, mode
/// 0600, and never overwritten; one that its group or others may read is refused.
///
/// Invariant: `checkID` is always the first 8 bytes of
/// SHA-256("healthledger kek id" ‖ key): it names the key without revealing it, so a
/// store sealed under another key is told apart from a damaged one.
package struct KeyEncryptionKey: Sendable {
    /// The environment variable that names the key file when `--key-file` does not.
    package static let environmentVariable = "HEALTHLEDGER_KEY_FILE"
    /// The text before the hex digits.
    package static let prefix = "healthledger-kek-v1:"
    /// Bytes in a key file: the prefix, 64 hex digits, a line feed.
    package static let fileByteCount = 20 + 64 + 1

    /// The key itself.
    package let key: SealKey
    /// The first 8 bytes of SHA-256("healthledger kek id" ‖ key), stored in the key
    /// store's header.
    package let checkID: [UInt8]

    /// A KEK from its key (tests; `create` and `load` for files).
    package init(key: SealKey) {
        self.key = key
        var hash = SHA256()
        hash.update(Array("healthledger kek id".utf8))
        var keyBytes = key.bytes
        hash.update(keyBytes)
        wipe(&keyBytes)
        checkID = Array(hash.finalize().array.prefix(8))
        assert(checkID.count == 8)
    }

    /// The key file's path: `keyFileOption` (`--key-file PATH`), else `environment` (the
    /// value of `HEALTHLEDGER_KEY_FILE`, which the caller reads: this module reads no
    /// global state). An empty value counts as not given.
    /// - Throws: `keyFileNotGiven` when neither names a file, with a message saying both ways.
    package static func resolvePath(keyFileOption: String?, environment: String?) throws(KeyStoreError) -> String {
        if let option = keyFileOption, !option.isEmpty { return option }
        if let value = environment, !value.isEmpty { return value }
        throw .keyFileNotGiven
    }

    /// A new random key written to a new file at `path` (O_CREAT|O_EXCL|O_NOFOLLOW, mode
    /// 0600, fsynced with its folder). Never overwrites anything at `path`, a symbolic
    /// link included.
    /// - Throws: `keyFileExists(path)` when anything is there; `randomSourceFailed`;
    ///   `io` (the half-made file is removed).
    package static func create(at path: String) throws(KeyStoreError) -> KeyEncryptionKey {
        let key: SealKey
        do { key = try SealKey.random() } catch { throw randomFailure(error) }
        let kek = KeyEncryptionKey(key: key)
        try kek.write(to: path)
        return kek
    }

    /// This key written to a new file at `path`, as `create(at:)` writes one (`encrypt`
    /// publishes the key of a copy made under another name so).
    /// - Throws: `keyFileExists(path)` when anything is there; `io`.
    package func write(to path: String) throws(KeyStoreError) {
        var text = Self.fileBytes(of: key)
        defer { wipe(&text) }
        guard try PosixFile.createNew(path, bytes: text) else { throw .keyFileExists(path: path) }
        try PosixFile.syncFolder(PosixFile.folder(of: path))
    }

    /// The key in the file at `path`. A symbolic link is followed (the owner may keep
    /// the key anywhere); the file it reaches must be a regular file of mode 0600 or
    /// stricter.
    /// - Throws: `keyFileMissing`; `unprotected` (any group or other permission);
    ///   `keyFileMalformed` (not a regular file, or not exactly the format); `io`.
    package static func load(from path: String) throws(KeyStoreError) -> KeyEncryptionKey {
        // O_NONBLOCK: a FIFO at the path must not block the open (it is then refused as
        // not a regular file).
        let fd = unsafe open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else {
            if errno == ENOENT { throw .keyFileMissing(path: path) }
            throw .io(operation: "open", path: path, errno: errno)
        }
        defer { close(fd) }
        var info = stat()
        guard unsafe fstat(fd, &info) == 0 else { throw .io(operation: "fstat", path: path, errno: errno) }
        guard UInt32(info.st_mode) & UInt32(S_IFMT) == UInt32(S_IFREG) else {
            throw .keyFileMalformed(path: path, reason: "not a regular file")
        }
        try PosixFile.refuseUnprotected(path, mode: UInt32(info.st_mode) & 0o7777)
        // One byte more than a key file holds, so that a longer file is seen as longer.
        var bytes = try PosixFile.read(fd, count: fileByteCount + 1, path: path)
        defer { wipe(&bytes) }
        return KeyEncryptionKey(key: try parse(bytes, path: path))
    }

    /// The key file's bytes for `key`.
    package static func fileBytes(of key: SealKey) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        var out = Array(prefix.utf8)
        var keyBytes = key.bytes
        for byte in keyBytes { out += [digits[Int(byte >> 4)], digits[Int(byte & 15)]] }
        wipe(&keyBytes)
        out.append(UInt8(ascii: "\n"))
        assert(out.count == fileByteCount)
        return out
    }

    /// The key in a key file's bytes, parsed exactly: the prefix, 64 lower-case hex
    /// digits, one line feed, nothing else.
    /// - Throws: `keyFileMalformed(path, reason)` naming the first thing wrong.
    package static func parse(_ bytes: [UInt8], path: String) throws(KeyStoreError) -> SealKey {
        let head = Array(prefix.utf8)
        guard bytes.starts(with: head) else {
            throw .keyFileMalformed(path: path, reason: "it does not begin with \"\(prefix)\"")
        }
        guard bytes.count >= fileByteCount else {
            throw .keyFileMalformed(path: path, reason: "\(bytes.count) bytes, not \(fileByteCount): the key is cut short")
        }
        guard bytes.count == fileByteCount else {
            throw .keyFileMalformed(path: path, reason: "more than \(fileByteCount) bytes: text after the key")
        }
        guard bytes[fileByteCount - 1] == UInt8(ascii: "\n") else {
            throw .keyFileMalformed(path: path, reason: "the 64 hex digits are not followed by exactly one line feed")
        }
        var key = [UInt8](repeating: 0, count: SealKey.byteCount)
        defer { wipe(&key) }
        for i in 0..<SealKey.byteCount {
            guard let high = hexValue(bytes[head.count + 2 * i]), let low = hexValue(bytes[head.count + 2 * i + 1]) else {
                throw .keyFileMalformed(path: path, reason: "character \(head.count + 2 * i + 1) onwards is not 64 lower-case hex digits")
            }
            key[i] = high << 4 | low
        }
        do { return try SealKey(bytes: key) } catch {
            // Unreachable: the array is 32 bytes. Typed anyway, never a trap.
            throw .keyFileMalformed(path: path, reason: "\(error)")
        }
    }

    /// A lower-case hex digit's value.
    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// A random-source failure as this module's error.
    static func randomFailure(_ error: SealError) -> KeyStoreError {
        if case .randomSourceFailed(let code) = error { return .randomSourceFailed(errno: code) }
        return .randomSourceFailed(errno: EIO)
    }
}

extension KeyEncryptionKey: CustomStringConvertible {
    /// Never the key: only its check id.
    package var description: String {
        let digits = Array("0123456789abcdef".utf8)
        return "KeyEncryptionKey(check " + String(decoding: checkID.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self) + ")"
    }
}
