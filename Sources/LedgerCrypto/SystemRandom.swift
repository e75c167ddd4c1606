import Glibc

/// The system's cryptographic random source, with failure as a typed error (the
/// standard library's `SystemRandomNumberGenerator` traps instead).
enum SystemRandom {
    /// Fills `bytes` from `getentropy(3)` (256 bytes a call at most), which is the
    /// `getrandom(2)` system call, retried when interrupted; on a kernel without it
    /// (`ENOSYS`), from `/dev/urandom`.
    /// - Parameter entropy: `getentropy`; tests hand in failing ones.
    /// - Throws: `SealError.randomSourceFailed` with the `errno` of the failure.
    static func fill(_ bytes: inout [UInt8],
                     entropy: (UnsafeMutableRawPointer?, Int) -> Int32 = { unsafe getentropy($0, $1) }) throws(SealError) {
        var filled = 0
        while filled < bytes.count {
            let chunk = min(256, bytes.count - filled)
            let result = unsafe bytes.withUnsafeMutableBytes { unsafe entropy($0.baseAddress! + filled, chunk) }
            if result == 0 {
                filled += chunk
                continue
            }
            let error = errno
            guard error == ENOSYS else { throw .randomSourceFailed(errno: error) }
            return try readDevURandom(&bytes)
        }
    }

    /// Fills `bytes` from `/dev/urandom`, reading until full (a read may return fewer
    /// bytes, or be interrupted).
    static func readDevURandom(_ bytes: inout [UInt8], path: String = "/dev/urandom") throws(SealError) {
        let fd = unsafe open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .randomSourceFailed(errno: errno) }
        defer { close(fd) }
        var filled = 0
        while filled < bytes.count {
            let n = unsafe bytes.withUnsafeMutableBytes { unsafe read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if n > 0 {
                filled += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                throw .randomSourceFailed(errno: n == 0 ? EIO : errno)  // end of file: not a random device
            }
        }
    }
}
