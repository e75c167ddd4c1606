/// What can be wrong with a zip archive or its compressed data.
public enum ArchiveError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No end-of-central-directory record: not a zip file (or cut short).
    case notAZip(path: String)
    /// A central-directory or local header that does not parse, with its byte offset.
    case corruptDirectory(offset: UInt64, reason: String)
    /// An entry compressed with a method other than stored (0) or deflate (8).
    case unsupportedMethod(entry: String, method: UInt16)
    /// An encrypted entry.
    case encrypted(entry: String)
    /// DEFLATE data that does not decode (RFC 1951), with the reason.
    case corruptDeflate(reason: String)
    /// The compressed data ended before the last block.
    case truncated(entry: String)
    /// The entry's bytes do not match its CRC-32 or size.
    case checksumMismatch(entry: String, expected: UInt32, actual: UInt32)
    case sizeMismatch(entry: String, expected: UInt64, actual: UInt64)
    /// The path names a FIFO, a device or a folder: only regular files are read.
    case notARegularFile(path: String)
    /// An I/O call failed.
    case io(operation: String, path: String, errno: Int32)

    public var description: String {
        switch self {
        case .notAZip(let path): "notAZip: \(path) has no zip end-of-central-directory record"
        case .corruptDirectory(let offset, let reason): "corruptDirectory: at byte \(offset): \(reason)"
        case .unsupportedMethod(let entry, let method): "unsupportedMethod: \(entry) uses compression method \(method) (stored and deflate are supported)"
        case .encrypted(let entry): "encrypted: \(entry) is encrypted"
        case .corruptDeflate(let reason): "corruptDeflate: \(reason)"
        case .truncated(let entry): "truncated: the compressed data of \(entry) ends early"
        case .checksumMismatch(let entry, let expected, let actual):
            "checksumMismatch: \(entry) has CRC-32 \(hex(actual)), its header says \(hex(expected))"
        case .sizeMismatch(let entry, let expected, let actual):
            "sizeMismatch: \(entry) inflates to \(actual) bytes, its header says \(expected)"
        case .notARegularFile(let path): "notARegularFile: \(path) is not a regular file"
        case .io(let operation, let path, let errno): "io: \(operation) \(path) failed (errno \(errno))"
        }
    }
}

private func hex(_ v: UInt32) -> String {
    let s = String(v, radix: 16)
    return "0x" + String(repeating: "0", count: 8 - s.count) + s
}
