import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Private memory reserved for a copy and committed only where it is written: one
/// anonymous mapping (`MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE`), so that the
/// blocks of a mapped snapshot column a reader never reads cost neither memory nor a
/// swap reservation (rule S8). Reads as zeros until written; given back when the last
/// reference goes. Large regions ask for huge pages (`HugePages.advise`): a block is
/// copied whole, and lookups in it are random.
final class ReservedMemory: @unchecked Sendable {
    // @unchecked: the owner writes disjoint ranges, and publishes each before anyone
    // reads it (`MappedColumnBytes`' block states).
    let bytes: UnsafeMutableRawBufferPointer

    /// The reservation failed (the address space is exhausted): the errno.
    struct Failed: Error, CustomStringConvertible {
        let byteCount: Int
        let errno: Int32
        var description: String { "cannot reserve \(byteCount) bytes of memory: \(String(cString: strerror(errno)))" }
    }

    init(byteCount: Int) throws(Failed) {
        let length = max(byteCount, 1)
        #if canImport(Glibc)
        guard let base = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0),
              base != MAP_FAILED else {
            throw Failed(byteCount: byteCount, errno: errno)
        }
        bytes = UnsafeMutableRawBufferPointer(start: base, count: length)
        HugePages.advise(bytes)
        #else
        bytes = .allocate(byteCount: length, alignment: 16)
        bytes.initializeMemory(as: UInt8.self, repeating: 0)
        #endif
    }

    deinit {
        #if canImport(Glibc)
        munmap(bytes.baseAddress, bytes.count)
        #else
        bytes.deallocate()
        #endif
    }
}
