#if canImport(Glibc)
import Glibc
#endif

/// A file's bytes mapped read-only into memory (`mmap`, `PROT_READ`, `MAP_PRIVATE`):
/// what a reader of a large derived file (a snapshot's columns) uses instead of
/// copying it — pages are read from the page cache when first touched, and only those.
/// Unmapped when the last reference goes.
///
/// A mapping sees the file as it was when mapped, as long as nobody truncates it:
/// snapshots are never changed in place (written aside and renamed), so a reader's
/// mapping stays valid while a writer replaces the file.
public final class FileMapping: @unchecked Sendable {
    // @unchecked: the mapping is read-only and never changes while it exists.
    public let bytes: UnsafeRawBufferPointer

    init(base: UnsafeRawPointer, count: Int) {
        bytes = UnsafeRawBufferPointer(start: base, count: count)
    }

    deinit {
        #if canImport(Glibc)
        if let base = bytes.baseAddress, bytes.count > 0 { munmap(UnsafeMutableRawPointer(mutating: base), bytes.count) }
        #endif
    }
}

extension LogFile {
    /// No mapping where the file system cannot give one (simulated, PostgreSQL): the
    /// caller reads the bytes instead.
    public func mapReadOnly(length: Int) throws -> FileMapping? { nil }
}
