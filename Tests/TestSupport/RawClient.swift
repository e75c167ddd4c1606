#if canImport(Glibc)
import Glibc
#endif
import Foundation
import LedgerHTTP

/// A blocking socket client for tests: sends exact bytes and reads responses as a
/// strict client would (status line, headers, Content-Length or chunked body).
package final class RawClient: @unchecked Sendable {
    // @unchecked: one test uses a client at a time; its blocking reads run on a
    // thread of their own (`onThread`) so that they never hold one of the few
    // threads of Swift's cooperative pool, which the server's handlers need.
    package let fd: Int32
    private var buffer: [UInt8] = []

    package struct Response: Sendable {
        package let status: Int
        package let headers: [(String, String)]
        package let body: [UInt8]
        /// When its last byte was read (on the reading thread, whatever the test's pool is doing).
        package var receivedAt = Date()
        package func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
        package var text: String { String(decoding: body, as: UTF8.self) }
    }

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
        package init(description: String) { self.description = description }
    }

    package init(_ address: ListenAddress, timeout: Double = 120) throws {
        switch address {
        case .tcp(let host, let port):
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var sa = sockaddr_in()
            sa.sin_family = sa_family_t(AF_INET)
            sa.sin_port = port.bigEndian
            inet_pton(AF_INET, host, &sa.sin_addr)
            let r = withUnsafePointer(to: &sa) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            guard r == 0 else { throw Failure(description: "connect: \(errno)") }
        case .unix(let path):
            fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var sa = sockaddr_un()
            sa.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            withUnsafeMutableBytes(of: &sa.sun_path) { raw in
                for (i, b) in bytes.enumerated() { raw[i] = b }
                raw[bytes.count] = 0
            }
            let r = withUnsafePointer(to: &sa) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
            guard r == 0 else { throw Failure(description: "connect: \(errno)") }
        }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    package func send(_ text: String) { send(Array(text.utf8)) }

    package func send(_ bytes: [UInt8]) {
        var i = 0
        while i < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + i, $0.count - i, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            i += n
        }
    }

    /// Reads more bytes; false at the end of the stream (or a timeout).
    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return false }
        buffer += chunk[0..<n]
        return true
    }

    /// Runs blocking work on a new thread and waits for it without blocking the pool.
    package static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, any Error>) in
            let t = Thread { c.resume(with: Result { try body() }) }
            t.start()
        }
    }

    /// Whether the server closed the connection (reads to its end; true on EOF).
    package func isClosedByServer() async -> Bool {
        (try? await Self.onThread { self.readUntilClosed() }) ?? false
    }

    /// The next response (a 100 Continue is returned like any other).
    package func response() async throws -> Response {
        try await Self.onThread { try self.readResponse() }
    }

    /// `isClosedByServer`, blocking the calling thread (a scenario run on a thread of its own).
    package func readUntilClosed() -> Bool {
        while fill() {}
        var chunk = [UInt8](repeating: 0, count: 16)
        return chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) } == 0
    }

    private func line() throws -> String {
        while true {
            if let i = buffer.firstIndex(of: 10), i > 0, buffer[i - 1] == 13 {
                let l = String(decoding: buffer[0..<(i - 1)], as: UTF8.self)
                buffer.removeFirst(i + 1)
                return l
            }
            guard fill() else { throw Failure(description: "the connection ended inside a line") }
        }
    }

    private func bytes(_ n: Int) throws -> [UInt8] {
        while buffer.count < n { guard fill() else { throw Failure(description: "the connection ended inside a body") } }
        let out = Array(buffer[0..<n])
        buffer.removeFirst(n)
        return out
    }

    /// `response`, blocking the calling thread (a scenario run on a thread of its own).
    package func readResponse() throws -> Response {
        let statusLine = try line()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0] == "HTTP/1.1", let status = Int(parts[1]) else { throw Failure(description: "status line '\(statusLine)'") }
        var headers: [(String, String)] = []
        while true {
            let l = try line()
            if l.isEmpty { break }
            let colon = l.firstIndex(of: ":")!
            headers.append((String(l[..<colon]), l[l.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        let r0 = Response(status: status, headers: headers, body: [])
        if status == 100 { return r0 }
        if let length = r0.header("content-length") {
            return Response(status: status, headers: headers, body: try bytes(Int(length)!))
        }
        if r0.header("transfer-encoding") == "chunked" {
            var body: [UInt8] = []
            while true {
                let size = Int(try line(), radix: 16)!
                if size == 0 { _ = try line(); break }
                body += try bytes(size)
                _ = try line()
            }
            return Response(status: status, headers: headers, body: body)
        }
        return r0
    }
}
