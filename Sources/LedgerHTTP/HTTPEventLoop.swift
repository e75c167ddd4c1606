#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import CLinuxEvents

/// The event loop behind `HTTPServer`: one thread, epoll (level-triggered), every
/// socket non-blocking.
///
/// Thread ownership: `connections`, `listenFD`, the shutdown state and everything in
/// a `HTTPConnection` are touched on the loop thread only. Handler tasks reach the
/// loop through `post` (a locked inbox and an eventfd that wakes it); nothing else
/// crosses threads.
final class HTTPEventLoop: @unchecked Sendable {
    // @unchecked: see the ownership note above; `inbox` and `count` are locked/atomic.
    private let epollFD: Int32
    private let wakeFD: Int32
    private var listenFD: Int32
    private var listener: SocketListener?
    private let limits: HTTPLimits
    private let handler: HTTPServer.Handler
    private let refusal: HTTPServer.RefusalResponder
    /// Where handlers run (the server's own threads).
    private let executor: ServerExecutor
    private var connections: [UInt64: HTTPConnection] = [:]
    private var nextID: UInt64 = 2
    /// Messages from other threads, under `inboxLock`. (An NSLock — a pthread mutex —
    /// rather than Synchronization's `Mutex`: on Linux a contended `Mutex` hands
    /// itself over inside the kernel (a PI futex), which ThreadSanitizer cannot see,
    /// so every contended use was reported as a race.)
    private var inboxValue = Inbox()
    private let inboxLock = NSLock()
    private let count = Atomic<Int>(0)
    private let shuttingDownFlag = Atomic<Bool>(false)
    private var shuttingDown = false
    private var shutdownDeadline = 0.0
    private var shutdownDone: [CheckedContinuation<Void, Never>] = []
    private var lastDeadlineCheck = 0.0

    private struct Inbox {
        var messages: [LoopMessage] = []
        /// The loop has ended: posts are answered at once.
        var stopped = false
    }

    private func withInbox<R>(_ body: (inout Inbox) -> R) -> R {
        inboxLock.lock()
        defer { inboxLock.unlock() }
        return body(&inboxValue)
    }

    /// epoll data of the listening socket and of the wake-up eventfd; connections
    /// count from 2.
    private static let listenToken: UInt64 = 0
    private static let wakeToken: UInt64 = 1
    /// A streamed response's writer waits while more than this is queued for its client.
    static let highWater = 256 << 10

    init(listener: consuming SocketListener, limits: HTTPLimits, handler: @escaping HTTPServer.Handler,
         refusal: @escaping HTTPServer.RefusalResponder, executor: ServerExecutor) {
        self.executor = executor
        self.limits = limits
        self.handler = handler
        self.refusal = refusal
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        precondition(epollFD >= 0, "epoll_create1: \(errno)")
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        precondition(wakeFD >= 0, "eventfd: \(errno)")
        listenFD = listener.fd
        self.listener = consume listener
        add(listenFD, events: EPOLLIN.rawValue, token: Self.listenToken)
        add(wakeFD, events: EPOLLIN.rawValue, token: Self.wakeToken)
    }

    var connectionCount: Int { count.load(ordering: .acquiring) }
    var isShuttingDown: Bool { shuttingDownFlag.load(ordering: .acquiring) }

    // MARK: Crossing threads

    /// Hands a message to the loop (any thread).
    func post(_ message: LoopMessage) {
        let accepted = withInbox { box -> Bool in
            if box.stopped { return false }
            box.messages.append(message)
            return true
        }
        guard accepted else {
            // The loop is gone: nobody will write or resume this.
            switch message {
            case .chunk(_, _, let resume): resume.resume(throwing: HTTPClientGone())
            case .shutdown(_, let done): done?.resume()
            default: break
            }
            return
        }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    func shutdown(grace: Double) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in post(.shutdown(grace: grace, done: c)) }
    }

    // MARK: The loop

    func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        while true {
            let timeout = shuttingDown ? 50 : 250
            let n = events.withUnsafeMutableBufferPointer { epoll_wait(epollFD, $0.baseAddress, Int32($0.count), Int32(timeout)) }
            if n < 0 && errno != EINTR { break }
            for i in 0..<max(0, Int(n)) {
                let token = events[i].data.u64
                let flags = events[i].events
                switch token {
                case Self.listenToken: acceptAll()
                case Self.wakeToken:
                    var value: UInt64 = 0
                    _ = read(wakeFD, &value, 8)
                default:
                    guard let c = connections[token] else { continue }
                    handle(c, flags: flags)
                }
            }
            drainInbox()
            let now = monotonicNow()
            if now - lastDeadlineCheck >= 0.1 {
                lastDeadlineCheck = now
                checkDeadlines(now)
            }
            if shuttingDown && (connections.isEmpty || now >= shutdownDeadline) { break }
        }
        for c in Array(connections.values) { close(c) }
        let pending = withInbox { box -> [LoopMessage] in
            box.stopped = true
            defer { box.messages = [] }
            return box.messages
        }
        for m in pending {
            switch m {
            case .chunk(_, _, let resume): resume.resume(throwing: HTTPClientGone())
            case .shutdown(_, let done): done?.resume()
            default: break
            }
        }
        if let l = listener.take() { l.close() }
        Glibc.close(wakeFD)
        Glibc.close(epollFD)
        for d in shutdownDone { d.resume() }
    }

    private func drainInbox() {
        let messages = withInbox { box -> [LoopMessage] in
            defer { box.messages.removeAll(keepingCapacity: true) }
            return box.messages
        }
        for m in messages {
            switch m {
            case .whole(let id, let response, let body, let keepAlive):
                guard let c = connections[id] else { continue }
                c.keepAlive = keepAlive && !shuttingDown
                c.out += response.head(keepAlive: c.keepAlive, bodyLength: body.count)
                c.out += body
                c.responseComplete = true
                startWriting(c)
            case .streamHead(let id, let response, let keepAlive):
                guard let c = connections[id] else { continue }
                c.keepAlive = keepAlive && !shuttingDown
                c.out += response.head(keepAlive: c.keepAlive, bodyLength: nil)
                startWriting(c)
            case .chunk(let id, let bytes, let resume):
                guard let c = connections[id], !c.closed else {
                    resume.resume(throwing: HTTPClientGone())
                    continue
                }
                c.out += bytes
                c.drainWaiters.append(resume)
                startWriting(c)
            case .streamEnd(let id):
                guard let c = connections[id] else { continue }
                c.out += Array("0\r\n\r\n".utf8)
                c.responseComplete = true
                startWriting(c)
            case .streamAbort(let id):
                guard let c = connections[id] else { continue }
                c.keepAlive = false
                c.responseComplete = true
                c.abortAfterFlush = true
                startWriting(c)
            case .shutdown(let grace, let done):
                if let done { shutdownDone.append(done) }
                beginShutdown(grace: grace)
            }
        }
    }

    private func beginShutdown(grace: Double) {
        guard !shuttingDown else { return }
        shuttingDown = true
        shuttingDownFlag.store(true, ordering: .releasing)
        shutdownDeadline = monotonicNow() + grace
        epoll_ctl(epollFD, EPOLL_CTL_DEL, listenFD, nil)
        if let l = listener.take() { l.close() }
        listenFD = -1
        for c in Array(connections.values) where c.phase == .reading && !c.parser.isMidRequest { close(c) }
    }

    // MARK: Accepting

    private func acceptAll() {
        while listenFD >= 0 {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    accept4(listenFD, $0, &length, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
                }
            }
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return  // EAGAIN, or out of descriptors: try again on the next wake-up
            }
            let peer = Self.describe(&storage)
            if connections.count >= limits.connectionsMax {
                // Over the limit: a short refusal, best effort, and closed.
                var bytes = refusal(503, "too many connections (at most \(limits.connectionsMax))")
                    .serialized(keepAlive: false)
                bytes.withUnsafeMutableBytes { _ = send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                Glibc.close(fd)
                continue
            }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let c = HTTPConnection(fd: fd, id: nextID, peer: peer, limits: limits)
            nextID += 1
            c.idleDeadline = monotonicNow() + limits.idleSeconds
            connections[c.id] = c
            count.store(connections.count, ordering: .relaxed)
            add(fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue, token: c.id)
        }
    }

    private static func describe(_ storage: inout sockaddr_storage) -> String {
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { p in
                    var a = p.pointee.sin_addr
                    var text = [CChar](repeating: 0, count: 64)
                    inet_ntop(AF_INET, &a, &text, 64)
                    return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                        + ":\(UInt16(bigEndian: p.pointee.sin_port))"
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { p in
                    var a = p.pointee.sin6_addr
                    var text = [CChar](repeating: 0, count: 64)
                    inet_ntop(AF_INET6, &a, &text, 64)
                    return "[" + String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                        + "]:\(UInt16(bigEndian: p.pointee.sin6_port))"
                }
            }
        default: return "unix"
        }
    }

    // MARK: One connection

    private func handle(_ c: HTTPConnection, flags: UInt32) {
        if flags & EPOLLERR.rawValue != 0 { close(c); return }
        if flags & EPOLLOUT.rawValue != 0 { flush(c); if c.closed { return } }
        if flags & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLRDHUP.rawValue) != 0 {
            switch c.phase {
            case .reading: readAndParse(c)
            case .handling, .writing:
                // Not reading while a response is made (a pipelined request waits in the
                // kernel); a hang-up ends the work for it.
                if flags & (EPOLLHUP.rawValue | EPOLLRDHUP.rawValue) != 0 {
                    c.task?.cancel()
                    close(c)
                }
            }
        }
    }

    private func readAndParse(_ c: HTTPConnection) {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var peerClosed = false
        // At most a few reads per wake-up, so one busy client cannot starve the others.
        for _ in 0..<4 {
            let n = buffer.withUnsafeMutableBytes { recv(c.fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                buffer.withUnsafeBytes { c.parser.feed(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
                if n < buffer.count { break }
            } else if n == 0 {
                peerClosed = true
                break
            } else {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK { close(c); return }
                break
            }
        }
        parse(c)
        if peerClosed && !c.closed && c.phase == .reading { close(c) }
    }

    /// Takes the next whole request from what a connection has sent, if any.
    private func parse(_ c: HTTPConnection) {
        guard c.phase == .reading, !c.closed else { return }
        let request: HTTPRequest?
        do {
            request = try c.parser.next()
        } catch {
            refuse(c, status: error.status, reason: error.reason)
            return
        }
        let now = monotonicNow()
        guard let request else {
            if c.parser.isMidRequest && c.headDeadline == nil { c.headDeadline = now + limits.headSeconds }
            if let info = c.parser.headInfo {
                if c.bodyDeadline == nil { c.bodyDeadline = now + limits.bodySeconds }
                if info.expectsContinue && !c.sentContinue {
                    c.sentContinue = true
                    c.out += Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
                    flush(c)
                }
            }
            return
        }
        c.headDeadline = nil
        c.bodyDeadline = nil
        c.sentContinue = false
        c.phase = .handling
        modify(c, events: EPOLLRDHUP.rawValue)
        let keepAlive = request.keepAlive && !shuttingDown
        let peer = HTTPPeer(address: c.peer, connection: c.id)
        let id = c.id
        let handler = self.handler
        let loop = self
        c.task = Task(executorPreference: executor) {
            let response = await handler(request, peer)
            let k = keepAlive && !response.closeAfter
            switch response.body {
            case .bytes(let body):
                loop.post(.whole(connection: id, response: response, body: body, keepAlive: k))
            case .stream(let produce):
                loop.post(.streamHead(connection: id, response: response, keepAlive: k))
                do {
                    try await produce(ChunkWriter(loop: loop, connection: id))
                    loop.post(.streamEnd(connection: id))
                } catch {
                    loop.post(.streamAbort(connection: id))
                }
            }
        }
    }

    /// Answers a refusal the server makes itself and closes the connection after it.
    private func refuse(_ c: HTTPConnection, status: Int, reason: String) {
        c.phase = .writing
        c.keepAlive = false
        c.out += refusal(status, reason).serialized(keepAlive: false)
        c.responseComplete = true
        startWriting(c)
    }

    private func startWriting(_ c: HTTPConnection) {
        guard !c.closed else { return }
        if c.phase == .handling { c.phase = .writing }
        c.writeDeadline = monotonicNow() + limits.writeStallSeconds
        flush(c)
    }

    /// Writes what is queued; when a response is all written, reads the next request
    /// (kept alive) or closes.
    private func flush(_ c: HTTPConnection) {
        while c.outStart < c.out.count {
            let n = c.out.withUnsafeBytes { raw in
                send(c.fd, raw.baseAddress! + c.outStart, raw.count - c.outStart, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                c.outStart += n
                c.writeDeadline = monotonicNow() + limits.writeStallSeconds
            } else if n < 0 && errno == EINTR {
                continue
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                modify(c, events: EPOLLOUT.rawValue | EPOLLRDHUP.rawValue)
                resumeDrained(c)
                return
            } else {
                close(c)
                return
            }
        }
        c.out.removeAll(keepingCapacity: c.out.count <= 1 << 20)
        c.outStart = 0
        resumeDrained(c)
        guard c.phase == .writing, c.responseComplete else {
            if c.phase == .writing { modify(c, events: EPOLLRDHUP.rawValue) }
            return
        }
        if c.abortAfterFlush || !c.keepAlive {
            // Half-close, so the client reads everything before it sees the end.
            Glibc.shutdown(c.fd, Int32(SHUT_WR))
            close(c)
            return
        }
        c.phase = .reading
        c.responseComplete = false
        c.task = nil
        c.idleDeadline = monotonicNow() + limits.idleSeconds
        modify(c, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue)
        parse(c)  // a pipelined request may be buffered already
    }

    /// Lets a streamed body's writer go on once its client is not far behind.
    private func resumeDrained(_ c: HTTPConnection) {
        guard !c.drainWaiters.isEmpty, c.out.count - c.outStart <= Self.highWater else { return }
        let waiters = c.drainWaiters
        c.drainWaiters = []
        for w in waiters { w.resume() }
    }

    private func checkDeadlines(_ now: Double) {
        for c in Array(connections.values) where !c.closed {
            switch c.phase {
            case .reading:
                if c.parser.headInfo != nil, let d = c.bodyDeadline, now >= d {
                    refuse(c, status: 408, reason: "the body did not arrive within \(Int(limits.bodySeconds)) s")
                } else if c.parser.headInfo == nil, c.parser.isMidRequest, let d = c.headDeadline, now >= d {
                    refuse(c, status: 408, reason: "the request head did not arrive within \(Int(limits.headSeconds)) s")
                } else if !c.parser.isMidRequest && (now >= c.idleDeadline || shuttingDown) {
                    close(c)
                }
            case .writing:
                if c.out.count > c.outStart && now >= c.writeDeadline { c.task?.cancel(); close(c) }
            case .handling:
                break
            }
        }
    }

    private func close(_ c: HTTPConnection) {
        guard !c.closed else { return }
        c.closed = true
        // The count drops before the descriptor closes: a peer that has seen the close
        // must never read a count that still includes its connection.
        connections[c.id] = nil
        count.store(connections.count, ordering: .releasing)
        epoll_ctl(epollFD, EPOLL_CTL_DEL, c.fd, nil)
        Glibc.close(c.fd)
        let waiters = c.drainWaiters
        c.drainWaiters = []
        for w in waiters { w.resume(throwing: HTTPClientGone()) }
        c.task?.cancel()
    }

    // MARK: epoll

    private func add(_ fd: Int32, events: UInt32, token: UInt64) {
        var e = epoll_event(events: events, data: epoll_data_t(u64: token))
        epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &e)
    }

    private func modify(_ c: HTTPConnection, events: UInt32) {
        guard c.interest != events else { return }
        c.interest = events
        var e = epoll_event(events: events, data: epoll_data_t(u64: c.id))
        epoll_ctl(epollFD, EPOLL_CTL_MOD, c.fd, &e)
    }
}

/// Seconds on the monotonic clock.
func monotonicNow() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

extension HTTPResponse {
    /// The whole response as bytes (a streamed body cannot be: it is sent empty).
    func serialized(keepAlive: Bool) -> [UInt8] {
        if case .bytes(let body) = body { return head(keepAlive: keepAlive, bodyLength: body.count) + body }
        return head(keepAlive: keepAlive, bodyLength: 0)
    }
}
