#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// Who sent a request: the connection it came on and the peer's address.
public struct HTTPPeer: Sendable {
    /// `127.0.0.1:51234`, `[::1]:51234` or `unix`.
    public let address: String
    /// The connection's number, unique for the server's life (requests on one kept-alive
    /// connection share it).
    public let connection: UInt64
}

/// An HTTP/1.1 server on POSIX sockets: one event-loop thread (epoll) reads and
/// writes every connection; each whole request runs its handler as a Swift task,
/// so a handler may wait (a long poll, a durable write) without holding a thread.
///
/// One request at a time per connection: a pipelined request is read once the
/// response before it has been written. Keep-alive, chunked request and response
/// bodies, `Expect: 100-continue`, and the limits of `HTTPLimits` (each refusal with
/// its status, then the connection closed). Knows nothing of what it serves.
public final class HTTPServer: Sendable {
    /// Answers one request.
    public typealias Handler = @Sendable (HTTPRequest, HTTPPeer) async -> HTTPResponse
    /// The response for a refusal the server makes itself (400, 408, 413, 414, 431,
    /// 501, 503, 505): the application decides its body (e.g. RFC 9457 problem details).
    public typealias RefusalResponder = @Sendable (_ status: Int, _ reason: String) -> HTTPResponse

    /// The address listened on (a TCP port 0 resolved to the one chosen).
    public let address: ListenAddress
    private let loop: HTTPEventLoop

    /// Binds and listens at once (so a port in use fails here); serves after `start()`.
    /// `handlerThreads`: the threads handlers run on (`ServerExecutor`; at least 2).
    public init(listen: ListenAddress, limits: HTTPLimits = HTTPLimits(), handlerThreads: Int = ProcessInfo.processInfo.activeProcessorCount,
                handler: @escaping Handler, refusal: @escaping RefusalResponder = HTTPServer.plainRefusal) throws(ListenError) {
        let listener = try SocketListener(listen)
        address = listener.bound
        loop = HTTPEventLoop(listener: listener, limits: limits, handler: handler, refusal: refusal,
                             executor: ServerExecutor(threads: handlerThreads))
    }

    /// Starts the event loop on a thread of its own.
    public func start() {
        let loop = self.loop
        let thread = Thread { loop.run() }
        thread.name = "http-event-loop"
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Stops accepting, lets every request in flight finish (its response says
    /// `Connection: close`), closes idle connections, and returns once every
    /// connection is closed — or after `grace` seconds, closing what remains.
    public func shutdown(grace: Double = 30) async {
        await loop.shutdown(grace: grace)
    }

    /// Begins `shutdown` without waiting for it (from any thread): what `shutdown`
    /// awaits still happens; call `shutdown` to wait for its end.
    public func beginShutdown(grace: Double = 30) {
        loop.post(.shutdown(grace: grace, done: nil))
    }

    /// Connections open now.
    public var connectionCount: Int { loop.connectionCount }

    /// Whether `shutdown` has begun (no new connections; responses say `Connection: close`).
    public var isShuttingDown: Bool { loop.isShuttingDown }

    /// A text/plain refusal.
    public static let plainRefusal: RefusalResponder = { status, reason in
        HTTPResponse(status: status, contentType: "text/plain; charset=utf-8", body: Array((reason + "\n").utf8))
    }
}

/// Messages from handler tasks to the event loop.
enum LoopMessage: Sendable {
    /// A whole response (`keepAlive`: what the request and the response allow; the
    /// loop says `Connection: close` instead when it is shutting down).
    case whole(connection: UInt64, response: HTTPResponse, body: [UInt8], keepAlive: Bool)
    /// A streamed response's head.
    case streamHead(connection: UInt64, response: HTTPResponse, keepAlive: Bool)
    /// One chunk of a streamed body (framed); `resume` when the client is not behind.
    case chunk(connection: UInt64, bytes: [UInt8], resume: CheckedContinuation<Void, any Error>)
    /// The last chunk of a streamed body.
    case streamEnd(connection: UInt64)
    /// A streamed body that cannot go on: the connection is closed.
    case streamAbort(connection: UInt64)
    case shutdown(grace: Double, done: CheckedContinuation<Void, Never>?)
}

/// Writes a streamed body's pieces as chunks through the event loop.
struct ChunkWriter: HTTPBodyWriter {
    let loop: HTTPEventLoop
    let connection: UInt64

    func write(_ bytes: [UInt8]) async throws {
        guard !bytes.isEmpty else { return }
        var framed = Array(String(bytes.count, radix: 16).utf8)
        framed.reserveCapacity(framed.count + bytes.count + 4)
        framed += [13, 10]
        framed += bytes
        framed += [13, 10]
        try Task.checkCancellation()
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
            loop.post(.chunk(connection: connection, bytes: framed, resume: c))
        }
    }
}
