import Foundation
import Testing
import TestSupport

/// `healthledger serve` as people run it: a client in another language
/// (Python's http.client, `tools/serve_tour.py`) tours every route and refusal; the
/// README's curl block runs unchanged but for the port; SIGTERM stops it cleanly and
/// the ledger and its access log verify.
@Suite(.serialized) struct ServeCommandTests {
    /// A ledger with the scale app (share and read bodyMass, heartRate, stepCount) and
    /// another app (share bodyMass), and a token for each and for the owner.
    static func prepared() throws -> (TemporaryDirectory, app: String, other: String, owner: String) {
        let dir = TemporaryDirectory("serve")
        let types = "bodyMass,heartRate,stepCount"
        let setup: [[String]] = [
            ["init"],
            ["app", "register", "--app", "com.example.scale", "--name", "Scale", "--share-purpose", "saves", "--read-purpose", "reads"],
            ["app", "register", "--app", "com.example.other", "--name", "Other", "--share-purpose", "saves", "--read-purpose", "reads"],
            ["--app", "com.example.scale", "request", "--share", types, "--read", types],
            ["authorize", "--app", "com.example.scale", "--share", types, "--read", types],
            ["--app", "com.example.other", "request", "--share", "bodyMass"],
            ["authorize", "--app", "com.example.other", "--share", "bodyMass"],
        ]
        for args in setup {
            let r = try CLIRunner.run(["--ledger", dir.path] + args)
            guard r.status == 0 else { throw StoreCommandTests.CLIError(args: args, result: r) }
        }
        func token(_ who: [String]) throws -> String {
            let r = try CLIRunner.run(["--ledger", dir.path, "--json", "token", "create"] + who)
            guard r.status == 0, let o = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any],
                  let t = o["token"] as? String else { throw StoreCommandTests.CLIError(args: who, result: r) }
            return t
        }
        return (dir, try token(["--app", "com.example.scale"]), try token(["--app", "com.example.other"]), try token(["--owner"]))
    }

    /// Starts `serve` on a free port; its address from its first line.
    static func serve(_ dir: TemporaryDirectory, _ extra: [String] = []) throws -> (ChildProcess, String) {
        let server = try CLIRunner.start(["--ledger", dir.path, "serve", "--listen", "127.0.0.1:0"] + extra, stderr: .pipe, timeout: 600)
        #expect(server.waitForOutput(seconds: 60) { $0.contains("listening on ") })
        let line = try #require(server.outputLines.first { $0.hasPrefix("listening on ") })
        return (server, String(line.dropFirst("listening on ".count)))
    }

    static let python: String? = ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }
        ?? (try? ChildProcess.run("/usr/bin/env", ["sh", "-c", "command -v python3"]).stdoutText.trimmingCharacters(in: .whitespacesAndNewlines))
            .flatMap { $0.isEmpty ? nil : $0 }

    @Test(.enabled(if: python != nil, "python3 is not installed: the tour's client is Python's http.client"))
    func aPythonClientsTourOfEveryRouteAndRefusalPasses() throws {
        let (dir, app, other, owner) = try Self.prepared()
        let (server, address) = try Self.serve(dir, ["--max-body", "65536", "--header-timeout", "1"])
        let tour = ReadmeCommandTests.root.appendingPathComponent("tools/serve_tour.py").path
        let r = try ChildProcess.run(Self.python!, [tour, "--url", "http://\(address)", "--app-token", app, "--other-token", other,
                                                     "--owner-token", owner, "--max-body", "65536", "--head-timeout", "1"], timeout: 300)
        #expect(r.status == 0, "\(r.stderrText)")
        #expect(r.stdoutText.hasPrefix("serve tour: "), "\(r.stdoutText)")
        server.kill(SIGTERM)
        #expect(server.waitForStderr(containing: "stopping: finishing the requests in flight", seconds: 60))
        #expect(server.wait() == .exited(0))
        let verify = try CLIRunner.run(["--ledger", dir.path, "verify"])
        #expect(verify.status == 0, "\(verify.stdout)")
        #expect(verify.stdout.contains("access log: "))
        let reads = try CLIRunner.run(["--ledger", dir.path, "--json", "audit", "--reads", "--app", "com.example.other", "bodyMass"])
        #expect(reads.status == 0)
        let lines = reads.stdout.split(separator: "\n")
        #expect(!lines.isEmpty)
        #expect(lines.allSatisfy { $0.contains(#""subject":"com.example.other""#) && $0.contains("HKQuantityTypeIdentifierBodyMass") })
        // The secrets were printed once and are nowhere in the ledger folder.
        let log = try Data(contentsOf: dir.url.appendingPathComponent("ledger.log"))
        for token in [app, other, owner] {
            #expect(log.range(of: Data(token.utf8)) == nil)
            #expect(log.range(of: Data(token.split(separator: "_").dropFirst(2).joined(separator: "_").utf8)) == nil)
        }
    }

    /// The README's `sh serve` block, line for line (the port aside), in bash.
    @Test func theReadmesServeBlockRuns() throws {
        let (dir, _, _, _) = try Self.prepared()
        #expect(try CLIRunner.run(["--ledger", dir.path, "save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "70",
                                   "--unit", "kg", "--start", "2026-03-01T08:00:00Z"]).status == 0)
        var lines: [String] = []
        var inBlock = false
        for line in ReadmeCommandTests.readme.split(separator: "\n", omittingEmptySubsequences: false) {
            let t = line.trimmingCharacters(in: .whitespaces)
            if t.hasPrefix("```") { inBlock = t == "```sh serve"; continue }
            if inBlock { lines.append(String(line)) }
        }
        #expect(lines.count >= 5)
        // A free port instead of 8080 (another server may hold it), found by binding 0.
        let probe = try CLIRunner.start(["--ledger", dir.path, "serve", "--listen", "127.0.0.1:0"], stderr: .null, timeout: 600)
        #expect(probe.waitForOutput(seconds: 60) { $0.contains("listening on ") })
        let port = try #require(probe.outputLines.first?.split(separator: ":").last.map(String.init))
        probe.kill(SIGTERM)
        #expect(probe.wait() == .exited(0))
        // The server the block starts is stopped whatever happens (a failed line ends the script).
        let script = "set -e\ntrap 'if [ -n \"${server:-}\" ]; then kill $server 2>/dev/null || true; fi' EXIT\n"
            // An alias, as the README's tour sets one: `hl serve … &` is then the server itself ($!).
            + "shopt -s expand_aliases\nalias hl='\"\(CLIRunner.binary.path)\" --ledger \"\(dir.path)\"'\nexport APP=com.example.scale\n"
            + lines.joined(separator: "\n").replacingOccurrences(of: "8080", with: port) + "\n"
        let r = try ChildProcess.run("/bin/bash", ["-c", script], currentDirectory: dir.url.deletingLastPathComponent().path, timeout: 120)
        #expect(r.status == 0, "\(r.stdoutText)\n\(r.stderrText)")
        #expect(r.stdoutText.contains(#""value":70"#), "\(r.stdoutText)")
        #expect(r.stdoutText.contains(#""uuids":["#), "\(r.stdoutText)")
        #expect(r.stdoutText.contains(#""change":"added""#), "\(r.stdoutText)")
    }

    @Test func aRemoteAddressNeedsItsFlagAndABadOneIsUsage() throws {
        let (dir, _, _, _) = try Self.prepared()
        let remote = try CLIRunner.run(["--ledger", dir.path, "serve", "--listen", "0.0.0.0:0"])
        #expect(remote.status == 2)
        #expect(remote.stderr == "healthledger: usage: --listen 0.0.0.0:0 can be reached from other machines: pass --allow-remote (and put TLS in front)\n")
        #expect(try CLIRunner.run(["--ledger", dir.path, "serve", "--listen", "localhost"]).status == 2)
        // While it serves, it is the ledger's one writer.
        let (server, _) = try Self.serve(dir)
        let locked = try CLIRunner.run(["--ledger", dir.path, "token", "create", "--owner"])
        #expect(locked.status == 7)
        #expect(try CLIRunner.run(["--ledger", dir.path, "query", "--owner", "bodyMass"]).status == 0)
        server.kill(SIGINT)
        #expect(server.wait() == .exited(0))
    }

    /// A SIGTERM sent the moment "listening on" is printed stops the server with exit 0
    /// (the handlers are installed before that line; a Dispatch signal source, armed
    /// later on its own thread, let such a signal be ignored and the server run on).
    @Test func aStopSignalRightAfterListeningIsNeverLost() throws {
        let (dir, _, _, _) = try Self.prepared()
        for round in 1...12 {
            let server = try CLIRunner.start(["--ledger", dir.path, "serve", "--listen", "127.0.0.1:0"], stderr: .null, timeout: 60)
            #expect(server.waitForOutput(seconds: 30) { $0.contains("listening on ") })
            server.kill(round % 2 == 0 ? SIGTERM : SIGINT)
            #expect(server.wait() == .exited(0), "round \(round)")
        }
    }
}
