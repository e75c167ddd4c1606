import LedgerChecksums

/// Passes a stream through, hashing (SHA-256) and counting its bytes: the export's
/// content hash, computed on the read-ahead thread beside inflating.
final class HashingStream: ByteStream {
    private let inner: ByteStream
    private var sha = SHA256()
    private(set) var bytes: UInt64 = 0

    init(_ inner: ByteStream) { self.inner = inner }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = try inner.read(into: buffer)
        if n > 0 {
            sha.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            bytes += UInt64(n)
        }
        return n
    }

    func digest() -> [UInt8] { sha.finalize().array }
}
