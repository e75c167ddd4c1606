import Foundation
import TestSupport

/// Runs the built `healthledger` (built with HEALTHLEDGER_POSTGRES=1) with a private cache.
enum PGCLI {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    static let buildDirectory: URL = {
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.path != "/", !FileManager.default.fileExists(atPath: url.appendingPathComponent("healthledger").path) {
            url.deleteLastPathComponent()
        }
        return url
    }()

    static var binary: URL { buildDirectory.appendingPathComponent("healthledger") }

    static func environment(cache: TemporaryDirectory) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "HEALTHLEDGER_PATH")
        env.removeValue(forKey: "TZ")
        env["HEALTHLEDGER_CACHE"] = cache.path
        return env
    }

    /// `healthledger args…`, with `HEALTHLEDGER_CACHE` set to `cache` (the shared runner).
    static func run(_ args: [String], stdin: String? = nil, cache: TemporaryDirectory) throws -> Result {
        let run = try ChildProcess.run(binary.path, args, input: stdin.map { Array($0.utf8) } ?? [],
                                       environment: environment(cache: cache), stdin: .pipe)
        return Result(status: run.status, stdout: run.stdoutText, stderr: run.stderrText)
    }

    /// Starts `healthledger args…` with pipes on stdin and stdout (stderr discarded).
    static func start(_ args: [String], cache: TemporaryDirectory) throws -> ChildProcess {
        try ChildProcess(binary.path, args, environment: environment(cache: cache), stdin: .pipe, stdout: .pipe, stderr: .null)
    }

    /// A ledger at `location` with one app allowed to share and read bodyMass.
    static func prepare(_ location: String, cache: TemporaryDirectory) throws {
        let setup: [[String]] = [
            ["init"],
            ["app", "register", "--app", "com.example.scale", "--name", "Scale", "--share-purpose", "saves weights", "--read-purpose", "reads weights"],
            ["--app", "com.example.scale", "request", "--share", "bodyMass", "--read", "bodyMass"],
            ["authorize", "--app", "com.example.scale", "--share", "bodyMass", "--read", "bodyMass"],
        ]
        for args in setup {
            let r = try run(["--ledger", location] + args, cache: cache)
            guard r.status == 0 else { throw SetupFailed(args: args, status: r.status, stderr: r.stderr) }
        }
    }

    struct SetupFailed: Error {
        let args: [String]
        let status: Int32
        let stderr: String
    }

    /// `count` JSON Lines of bodyMass samples, one minute apart from `first`.
    static func weightLines(_ count: Int, from first: Int = 0) -> String {
        let formatter = ISO8601DateFormatter()
        return (first..<first + count).map { i in
            let start = formatter.string(from: Date(timeIntervalSince1970: Double(1_700_000_000 + i * 60)))
            return "{\"type\":\"bodyMass\",\"value\":\(60 + Double(i % 400) / 10),\"unit\":\"kg\",\"start\":\"\(start)\"}"
        }.joined(separator: "\n") + "\n"
    }
}
