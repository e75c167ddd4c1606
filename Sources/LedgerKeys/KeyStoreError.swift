/// Why the key store or the key-encryption-key file refused. Every integer and length
/// read from a file is checked before it is used, and a wrong one is one of these cases:
/// nothing in this module traps on bad input.
package enum KeyStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    // MARK: The key-encryption-key file

    /// Neither `--key-file PATH` nor `HEALTHLEDGER_KEY_FILE` names a key file.
    case keyFileNotGiven
    /// The key file named is not there.
    case keyFileMissing(path: String)
    /// A new key file was asked for at a path that exists (never overwritten).
    case keyFileExists(path: String)
    /// The key file is not exactly `healthledger-kek-v1:` + 64 lower-case hex digits + a
    /// line feed (or not a regular file).
    case keyFileMalformed(path: String, reason: String)

    // MARK: The key store file

    /// There is no `keys.bin` in the key folder.
    case storeMissing(path: String)
    /// A new store was asked for where one exists (never overwritten).
    case storeExists(path: String)
    /// The file does not begin with the key store's magic bytes.
    case notAKeyStore(path: String)
    /// The file's format version is not one this release reads.
    case unknownVersion(path: String, version: UInt16)
    /// The file holds `length` bytes; its header says it holds `expected`.
    case truncated(path: String, length: Int, expected: Int)
    /// The store was sealed under another key-encryption key (its key-check id differs):
    /// the wrong key file, not damage.
    case wrongKey(path: String)
    /// The tag does not match, a reserved header field is not zero, or bytes follow the
    /// tag: the file was altered after it was written.
    case tampered(path: String)
    /// The authenticated body does not decode (only a writer holding the key could have
    /// written it: a bug, never an outsider's damage).
    case malformed(path: String, reason: String)

    // MARK: Both

    /// A key file or key folder that its group or others may use (any of mode 0077):
    /// refused, as ssh refuses an unprotected private key.
    case unprotected(path: String, mode: UInt32)
    /// A system call failed.
    case io(operation: String, path: String, errno: Int32)
    /// The system's random source failed with this `errno`; nothing was written.
    case randomSourceFailed(errno: Int32)

    // MARK: Use

    /// A write was asked of a store opened for reading.
    case readOnly
    /// An earlier write failed: what is on disk may be either state, so this handle
    /// refuses to write again (it could undo an erasure). Open the store again.
    case unusableAfterFailedWrite
    /// Every 64-bit key id has been issued.
    case idSpaceExhausted
    /// A source id was given as this many bytes, not 16.
    case badSourceID(byteCount: Int)
    /// Not a month of years 0 and later: month outside 1–12, or year out of range.
    case badMonth(year: Int, month: Int)

    package var description: String {
        switch self {
        case .keyFileNotGiven:
            return "no key file: pass --key-file PATH or set HEALTHLEDGER_KEY_FILE (the file `init --encrypt --key-file PATH` wrote)"
        case .keyFileMissing(let path): return "key file \(path) is missing: without it the ledger's health data cannot be read"
        case .keyFileExists(let path): return "key file \(path) already exists: it is never overwritten; choose another path"
        case .keyFileMalformed(let path, let reason): return "key file \(path) is not a HealthLedger key file: \(reason)"
        case .storeMissing(let path): return "key store \(path) is missing"
        case .storeExists(let path): return "key store \(path) already exists"
        case .notAKeyStore(let path): return "\(path) is not a HealthLedger key store"
        case .unknownVersion(let path, let version): return "key store \(path) has format version \(version), which this release does not read"
        case .truncated(let path, let length, let expected): return "key store \(path) is truncated: \(length) bytes of \(expected)"
        case .wrongKey(let path): return "key store \(path) was sealed under another key file: wrong key file"
        case .tampered(let path): return "key store \(path) was altered after it was written (authentication failed)"
        case .malformed(let path, let reason): return "key store \(path) does not decode: \(reason)"
        case .unprotected(let path, let mode):
            return "\(path) has mode 0\(String(mode, radix: 8)): refused, group and others must have no access (chmod go-rwx)"
        case .io(let operation, let path, let code): return "\(operation) \(path) failed (errno \(code))"
        case .randomSourceFailed(let code): return "the system's random source failed (errno \(code))"
        case .readOnly: return "the key store was opened for reading"
        case .unusableAfterFailedWrite: return "an earlier write of the key store failed; open it again"
        case .idSpaceExhausted: return "the key store has issued every key id"
        case .badSourceID(let count): return "a source id is 16 bytes, not \(count)"
        case .badMonth(let year, let month): return "\(year)-\(month) is not a month of the key store's calendar"
        }
    }
}
