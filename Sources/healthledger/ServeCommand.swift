import Dispatch
import Foundation
import HealthLedger
import LedgerHTTP
import LedgerServer
#if canImport(Glibc)
import Glibc
#endif

/// `healthledger serve`: the ledger as an HTTP service.
enum ServeCommand {
    static let help = """
        USAGE: healthledger [--ledger PATH] serve [--listen ADDRESS] [--allow-remote]
                   [--max-body BYTES] [--max-connections N] [--rate N] [--idle-timeout S]
                   [--header-timeout S]

        Serves the ledger over HTTP/1.1 to apps holding a bearer token (`token create`):
        a request's identity is its token alone, checked on every request. Routes (all
        JSON; errors as RFC 9457 problem details with the rule ID; see GET /openapi.json):
          POST   /v1/samples                 save one sample or an array (ingest's JSON) → 201 {"uuids":[…]}
          GET    /v1/samples/{type}          query: where, sort, ascending, limit, after, from, to, source → JSON Lines
          DELETE /v1/samples/{uuid}          delete (an app: its own)
          GET    /v1/latest/{type}           the most recent sample
          GET    /v1/statistics/{type}       options, separateBySource, by, every, anchor, from, to, where, unit, tz
          GET    /v1/changes/{type}          anchor, limit, wait (a long poll) → changes, then {"anchor":…}
          POST   /v1/authorization/request   {"share":[…],"read":[…]}
          GET    /v1/authorization/status    share, read
          GET    /v1/characteristics
          POST   /v1/health-auto-export      Health Auto Export's JSON pushes, idempotent
          GET    /v1/report                  the owner's HTML report
          GET|POST /v1/tokens, DELETE /v1/tokens/{id}   the owner's credentials

        While it runs, `serve` is the ledger's one writer (it holds the lock): other
        writers wait or fail with exit 7; read-only commands still work. Every read of
        health data is recorded, before it is answered, in the access log beside the
        ledger (`audit --reads`, checked by `verify`).

          --listen ADDRESS   127.0.0.1:8080 (default), [::1]:8080, or unix:PATH (0600);
                             port 0 picks a free port. The address is printed on stdout.
          --allow-remote     listen on an address other machines can reach (without it,
                             only loopback and unix sockets). Put TLS in front (README).
          --max-body BYTES   largest request body (default 16777216): 413 beyond
          --max-connections N   open connections at most (default 1024): 503 beyond
          --rate N           requests per second per token, bursts up to 2N (default
                             1000; 0: no limit): 429 with Retry-After beyond
          --idle-timeout S   close a kept-alive connection idle this long (default 60)
          --header-timeout S a request's head must arrive within S seconds of its first
                             byte (default 10): a slow client gets 408 and is closed

        SIGTERM or SIGINT: stop accepting, finish the requests in flight, sync, exit 0.

        \(ExitStatus.table)
        """

    static let command = Command(name: "serve", abstract: "Serve the ledger over HTTP to apps with tokens", help: help) { args, global in
        if handledHelp(&args, help) { return }
        let listenText = try args.option("--listen") ?? "127.0.0.1:8080"
        let allowRemote = args.flag("--allow-remote")
        var limits = HTTPLimits()
        var options = ServiceOptions()
        if let text = try args.option("--max-body") {
            guard let n = Int(text), n >= 0, n <= 1 << 30 else { throw CLIError.usage("--max-body takes bytes, 0…1073741824") }
            limits.bodyBytesMax = n
        }
        if let text = try args.option("--max-connections") {
            guard let n = Int(text), n >= 1, n <= 65_536 else { throw CLIError.usage("--max-connections takes 1…65536") }
            limits.connectionsMax = n
        }
        if let text = try args.option("--rate") {
            guard let n = Double(text), n.isFinite, n >= 0, n <= 10_000_000 else { throw CLIError.usage("--rate takes requests per second, 0…10000000") }
            options.requestsPerSecond = n
        }
        if let text = try args.option("--idle-timeout") {
            guard let n = Double(text), n.isFinite, n > 0, n <= 86_400 else { throw CLIError.usage("--idle-timeout takes seconds, up to 86400") }
            limits.idleSeconds = n
        }
        if let text = try args.option("--header-timeout") {
            guard let n = Double(text), n.isFinite, n > 0, n <= 3600 else { throw CLIError.usage("--header-timeout takes seconds, up to 3600") }
            limits.headSeconds = n
        }
        try args.finish()
        let address: ListenAddress
        do { address = try ListenAddress(parsing: listenText) } catch { throw CLIError.usage("--listen: \(error)") }
        guard address.isLoopback || allowRemote else {
            throw CLIError.usage("--listen \(address) can be reached from other machines: pass --allow-remote (and put TLS in front)")
        }
        let stop = try StopSignal()  // before the ledger opens: a SIGTERM from now on stops the server cleanly
        let ledger = try LedgerAccess.openForWriting(global)
        let accessLog: AccessLog
        do {
            accessLog = try AccessLog.openForWriting(ledgerPath: try LedgerAccess.localFolder(global))
        } catch {
            ledger.abandon()
            throw error
        }
        let service = LedgerService(ledger: ledger, accessLog: accessLog, options: options)
        let server: HTTPServer
        do {
            server = try HTTPServer(listen: address, limits: limits, handler: { request, peer in await service.handle(request, peer) },
                                    refusal: LedgerService.refusal)
        } catch {
            accessLog.abandon()
            ledger.abandon()
            throw CLIError(status: ExitStatus.failure, message: "\(error)")
        }
        server.start()
        Output.line("listening on \(server.address)")
        Output.flush()
        await stop.wait()
        Output.error("healthledger: stopping: finishing the requests in flight")
        await server.shutdown(grace: 30)
        var failure: (any Error)?
        do { try await ledger.close() } catch { failure = error }
        do { try await accessLog.close() } catch { failure = failure ?? error }
        if let failure { throw failure }
    }
}

/// SIGTERM and SIGINT, awaited: the handler only writes a byte to a pipe; the work
/// happens after. The handlers are installed with `sigaction` before `init` returns,
/// so a signal sent as soon as "listening on" is printed is never lost (a Dispatch
/// signal source arms itself later, on its own thread: a SIGTERM in between was
/// ignored and the server ran on).
final class StopSignal: Sendable {
    private let readEnd: Int32

    init() throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            throw CLIError(status: ExitStatus.failure, message: "serve: cannot make the stop pipe: \(String(cString: strerror(errno)))")
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        readEnd = ends[0]
        stopSignalWriteEnd = ends[1]
        for sig in [SIGTERM, SIGINT] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { _ in
                var byte: UInt8 = 1
                _ = write(stopSignalWriteEnd, &byte, 1)  // async-signal-safe; a full pipe already says "stop"
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(sig, &action, nil)
        }
    }

    /// Returns once SIGTERM or SIGINT has arrived (the wait runs on a thread of its own).
    func wait() async {
        let fd = readEnd
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                var byte: UInt8 = 0
                while read(fd, &byte, 1) < 0 && errno == EINTR {}
                c.resume()
            }
        }
    }
}

/// The stop pipe's write end, for the signal handler (a C function pointer captures
/// nothing). Set once, before the handlers that read it are installed.
nonisolated(unsafe) private var stopSignalWriteEnd: Int32 = -1
