#if canImport(Glibc)
import Glibc
#endif
import CLinuxEvents  // SOCK_STREAM and its flags (sys/socket.h's enum, which Swift's Glibc module does not bring)

/// Why a server could not start listening.
public struct ListenError: Error, Sendable, CustomStringConvertible {
    public let address: ListenAddress
    public let call: String
    public let errno: Int32

    public var description: String {
        "cannot listen on \(address): \(call) failed: \(String(cString: strerror(errno)))"
    }
}

/// A listening socket, non-blocking and close-on-exec. For a Unix socket the file
/// is made 0600 (only the ledger's owner may connect) and removed when closed.
struct SocketListener: ~Copyable {
    let fd: Int32
    let address: ListenAddress
    /// The address as bound (a TCP port 0 becomes the port the system chose).
    let bound: ListenAddress

    init(_ address: ListenAddress, backlog: Int32 = 512) throws(ListenError) {
        self.address = address
        switch address {
        case .tcp(let host, let port):
            let family = ListenAddress.numericFamily(host) ?? AF_INET
            let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw ListenError(address: address, call: "socket", errno: errno) }
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            var result: Int32
            if family == AF_INET {
                var sa = sockaddr_in()
                sa.sin_family = sa_family_t(AF_INET)
                sa.sin_port = port.bigEndian
                inet_pton(AF_INET, host, &sa.sin_addr)
                result = withUnsafePointer(to: &sa) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
            } else {
                var sa = sockaddr_in6()
                sa.sin6_family = sa_family_t(AF_INET6)
                sa.sin6_port = port.bigEndian
                inet_pton(AF_INET6, host, &sa.sin6_addr)
                result = withUnsafePointer(to: &sa) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
                }
            }
            guard result == 0 else {
                let e = errno
                Glibc.close(fd)
                throw ListenError(address: address, call: "bind", errno: e)
            }
            guard listen(fd, backlog) == 0 else {
                let e = errno
                Glibc.close(fd)
                throw ListenError(address: address, call: "listen", errno: e)
            }
            self.fd = fd
            self.bound = .tcp(host: host, port: Self.localPort(fd, family: family) ?? port)
        case .unix(let path):
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw ListenError(address: address, call: "socket", errno: errno) }
            // A stale socket file from a server that died is replaced; anything else
            // at the path is left alone (bind fails with EADDRINUSE).
            var st = stat()
            if lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFSOCK { unlink(path) }
            var sa = sockaddr_un()
            sa.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            withUnsafeMutableBytes(of: &sa.sun_path) { raw in
                for (i, b) in bytes.enumerated() { raw[i] = b }
                raw[bytes.count] = 0
            }
            // The socket is made with no permission for group or others.
            let oldMask = umask(0o077)
            let result = withUnsafePointer(to: &sa) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            umask(oldMask)
            if result == 0 { chmod(path, 0o600) }
            guard result == 0 else {
                let e = errno
                Glibc.close(fd)
                throw ListenError(address: address, call: "bind", errno: e)
            }
            guard listen(fd, backlog) == 0 else {
                let e = errno
                Glibc.close(fd)
                unlink(path)
                throw ListenError(address: address, call: "listen", errno: e)
            }
            self.fd = fd
            self.bound = address
        }
    }

    private static func localPort(_ fd: Int32, family: Int32) -> UInt16? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { return nil }
        if family == AF_INET {
            return withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) } }
        }
        return withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) } }
    }

    /// Closes the socket (and removes a Unix socket's file).
    consuming func close() {
        Glibc.close(fd)
        if case .unix(let path) = address { unlink(path) }
    }
}
