#if canImport(Glibc)
import Glibc
#endif

/// Where a server listens: a TCP address (`127.0.0.1:8080`, `[::1]:8080`, port 0 for
/// any free port) or a Unix socket (`unix:/path/to/socket`).
public enum ListenAddress: Sendable, Equatable, CustomStringConvertible {
    case tcp(host: String, port: UInt16)
    case unix(path: String)

    /// Why a listen address is refused.
    public struct Invalid: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// Parses `HOST:PORT`, `[IPv6]:PORT` or `unix:PATH`. The host is a numeric
    /// address or `localhost` (no name lookups).
    public init(parsing text: String) throws(Invalid) {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            // sun_path holds 108 bytes with its NUL.
            guard !path.isEmpty, path.utf8.count < 108, !path.utf8.contains(0) else {
                throw Invalid(description: "a unix socket path is 1 to 107 bytes: '\(text)'")
            }
            self = .unix(path: path)
            return
        }
        let host: Substring, portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw Invalid(description: "'\(text)' is not [IPV6]:PORT")
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw Invalid(description: "'\(text)' is not HOST:PORT or unix:PATH") }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !portText.isEmpty, portText.utf8.count <= 5, portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let port = Int(portText), port <= 65535 else {
            throw Invalid(description: "'\(portText)' is not a port (0–65535)")
        }
        let h = host == "localhost" ? "127.0.0.1" : String(host)
        guard Self.numericFamily(h) != nil else { throw Invalid(description: "'\(host)' is not a numeric IPv4 or IPv6 address") }
        self = .tcp(host: h, port: UInt16(port))
    }

    /// Whether only this machine can reach the address: a Unix socket, 127.0.0.0/8 or ::1.
    public var isLoopback: Bool {
        switch self {
        case .unix: return true
        case .tcp(let host, _):
            if host == "::1" { return true }
            var a = in_addr()
            guard inet_pton(AF_INET, host, &a) == 1 else { return false }
            return UInt32(bigEndian: a.s_addr) >> 24 == 127
        }
    }

    public var description: String {
        switch self {
        case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unix(let path): "unix:\(path)"
        }
    }

    /// AF_INET or AF_INET6 for a numeric address, nil for anything else.
    static func numericFamily(_ host: String) -> Int32? {
        var a4 = in_addr(), a6 = in6_addr()
        if inet_pton(AF_INET, host, &a4) == 1 { return AF_INET }
        if inet_pton(AF_INET6, host, &a6) == 1 { return AF_INET6 }
        return nil
    }
}
