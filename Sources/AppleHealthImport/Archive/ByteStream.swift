#if canImport(Glibc)
import Glibc
#endif
import LedgerLog  // PositionalRead: the one pread loop

/// A source of bytes read front to back in chunks: a file, a region of one, or an
/// inflated zip entry. Classes, because a stream has a position.
public protocol ByteStream: AnyObject {
    /// Copies up to `buffer.count` bytes into `buffer` and returns how many; 0 only
    /// at the end.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

/// An open file, read with `pread` (no shared file position, so one descriptor can
/// serve several regions). Closed when the last reference goes.
public final class ReadOnlyFile: @unchecked Sendable {
    // @unchecked: `fd` never changes and `pread` is thread-safe.
    public let path: String
    let fd: Int32
    /// The file's size when it was opened.
    public let size: UInt64

    /// Opens a regular file: anything else (a FIFO, whose open would wait for a
    /// writer — hence `O_NONBLOCK` —, a device, a folder) throws `notARegularFile`.
    public init(path: String) throws(ArchiveError) {
        self.path = path
        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw ArchiveError.io(operation: "open", path: path, errno: errno) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let e = errno
            close(fd)
            throw ArchiveError.io(operation: "fstat", path: path, errno: e)
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw ArchiveError.notARegularFile(path: path)
        }
        size = UInt64(st.st_size)
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL)
    }

    deinit { close(fd) }

    /// Reads up to `buffer.count` bytes at `offset`; fewer only at the end of the file.
    public func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws(ArchiveError) -> Int {
        switch PositionalRead.fill(fd, buffer, at: offset) {
        case .success(let n): return n
        case .failure(let e): throw ArchiveError.io(operation: "pread", path: path, errno: e.errno)
        }
    }

    /// Exactly `count` bytes at `offset`, or `corruptDirectory` when the file is shorter.
    public func bytes(at offset: UInt64, count: Int) throws(ArchiveError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var failure: ArchiveError?
        let n = out.withUnsafeMutableBytes { b -> Int in
            do throws(ArchiveError) { return try read(at: offset, into: b) } catch { failure = error; return 0 }
        }
        if let failure { throw failure }
        guard n == count else {
            throw ArchiveError.corruptDirectory(offset: offset, reason: "the file ends after \(n) of \(count) bytes")
        }
        return out
    }
}

/// `length` bytes of a file from `offset`, as a stream.
public final class FileRegionStream: ByteStream {
    let file: ReadOnlyFile
    private var offset: UInt64
    private var remaining: UInt64

    public init(_ file: ReadOnlyFile, offset: UInt64 = 0, length: UInt64? = nil) {
        self.file = file
        self.offset = offset
        self.remaining = length ?? (file.size > offset ? file.size - offset : 0)
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let want = Int(min(UInt64(buffer.count), remaining))
        if want == 0 { return 0 }
        let n = try file.read(at: offset, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]))
        offset += UInt64(n)
        remaining -= UInt64(n)
        if n == 0 { remaining = 0 }
        return n
    }
}

/// Bytes in memory, as a stream (tests, small files).
public final class MemoryStream: ByteStream {
    private let bytes: [UInt8]
    private var position = 0
    /// At most this many bytes per read (tests use 1 to cut every token in two).
    private let chunk: Int

    public init(_ bytes: [UInt8], chunk: Int = .max) {
        self.bytes = bytes
        self.chunk = max(1, chunk)
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = min(buffer.count, bytes.count - position, chunk)
        if n <= 0 { return 0 }
        bytes.withUnsafeBytes { src in
            buffer.baseAddress!.copyMemory(from: src.baseAddress! + position, byteCount: n)
        }
        position += n
        return n
    }
}
