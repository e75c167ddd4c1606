import Foundation
import TestSupport

/// Runs the built `healthledger` binary and captures what it printed.
struct CLIResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// The binary ran longer than `CLIRunner.run`'s timeout and was killed: a hang fails
/// its test with the command line rather than stalling the whole run.
struct CLITimedOut: Error, CustomStringConvertible {
    let args: [String]
    let seconds: Double
    var description: String { "healthledger \(args.joined(separator: " ")) ran over \(seconds) s and was killed" }
}

enum CLIRunner {
    /// How long one run may take before it is killed (generous: the machine running
    /// the tests may be loaded; no test's command comes near it).
    static let timeoutSeconds: Double = 600

    /// The directory the test bundle was built into; the executables sit beside it.
    static let buildDirectory: URL = {
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.path != "/", !FileManager.default.fileExists(atPath: url.appendingPathComponent("healthledger").path) {
            url.deleteLastPathComponent()
        }
        return url
    }()

    static var binary: URL { buildDirectory.appendingPathComponent("healthledger") }

    /// The environment a run of the binary gets: the test's, without the variables
    /// that would change what a command does unless a test sets them.
    static func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "HEALTHLEDGER_PATH")
        env.removeValue(forKey: "TZ")  // a new ledger records $TZ: tests set it when they mean to
        for (k, v) in extra { env[k] = v }
        return env
    }

    /// Runs `healthledger args…` with `stdin` as standard input. `stdinPath` opens a path
    /// (a folder, to make reads fail) as standard input instead; `stdoutPath` sends
    /// standard output to a path (`/dev/full`, to make writes fail) instead of a pipe.
    /// The shared runner (`ChildProcess`, posix_spawn) kills a run past `timeout`.
    static func run(_ args: [String], stdin: String? = nil, environment: [String: String] = [:],
                    currentDirectory: URL? = nil, stdinPath: String? = nil, stdoutPath: String? = nil,
                    timeout: Double = timeoutSeconds) throws -> CLIResult {
        do {
            let result = try ChildProcess.run(binary.path, args, input: stdin.map { Array($0.utf8) } ?? [],
                                              environment: Self.environment(environment), currentDirectory: currentDirectory?.path,
                                              stdin: stdinPath.map { .path($0) } ?? .pipe,
                                              stdout: stdoutPath.map { .path($0) } ?? .pipe, timeout: timeout)
            return CLIResult(status: result.status, stdout: result.stdoutText, stderr: result.stderrText)
        } catch is ChildProcess.TimedOut {
            throw CLITimedOut(args: args, seconds: timeout)
        }
    }

    /// Starts `healthledger args…` for a test that talks to it while it runs.
    static func start(_ args: [String], environment: [String: String] = [:], currentDirectory: URL? = nil,
                      stdin: ChildProcess.Stream = .null, stdout: ChildProcess.Stream = .pipe,
                      stderr: ChildProcess.Stream = .null, timeout: Double = timeoutSeconds) throws -> ChildProcess {
        try ChildProcess(binary.path, args, environment: Self.environment(environment), currentDirectory: currentDirectory?.path,
                         stdin: stdin, stdout: stdout, stderr: stderr, timeout: timeout)
    }

    /// The built `ledger-torture` (the second process of lock tests).
    static var torture: String { buildDirectory.appendingPathComponent("ledger-torture").path }
}
