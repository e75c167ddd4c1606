/// One client connection's state, owned by the event loop's thread.
///
/// Phases: `reading` (parsing the next request) → `handling` (its handler runs; the
/// socket is not read) → `writing` (the response goes out) → `reading` again when
/// kept alive, else closed. Deadlines are monotonic seconds.
final class HTTPConnection {
    enum Phase { case reading, handling, writing }

    let fd: Int32
    let id: UInt64
    let peer: String
    var parser: HTTPRequestParser
    var phase: Phase = .reading
    var closed = false
    /// The epoll events asked for now.
    var interest: UInt32 = 0
    /// Bytes queued for the client; `outStart` of them already sent.
    var out: [UInt8] = []
    var outStart = 0
    /// The response being written has been queued to its end.
    var responseComplete = false
    /// After it is written, close rather than read another request.
    var keepAlive = true
    /// A streamed body stopped early: close once what is queued is sent.
    var abortAfterFlush = false
    var sentContinue = false
    /// The handler's task (cancelled when the client goes).
    var task: Task<Void, Never>?
    /// Writers of a streamed body waiting for the client to catch up.
    var drainWaiters: [CheckedContinuation<Void, any Error>] = []
    var headDeadline: Double?
    var bodyDeadline: Double?
    var idleDeadline = 0.0
    var writeDeadline = 0.0

    init(fd: Int32, id: UInt64, peer: String, limits: HTTPLimits) {
        self.fd = fd
        self.id = id
        self.peer = peer
        parser = HTTPRequestParser(limits: limits)
    }
}
