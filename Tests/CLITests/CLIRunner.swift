import Foundation
import LedgerLog  // Locked: the one lock style

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

    /// Runs `healthledger args…` with `stdin` as standard input. `stdinPath` opens a path
    /// (a folder, to make reads fail) as standard input instead; `stdoutPath` sends
    /// standard output to a path (`/dev/full`, to make writes fail) instead of a pipe.
    static func run(_ args: [String], stdin: String? = nil, environment: [String: String] = [:],
                    currentDirectory: URL? = nil, stdinPath: String? = nil, stdoutPath: String? = nil,
                    timeout: Double = timeoutSeconds) throws -> CLIResult {
        let process = Process()
        process.executableURL = binary
        process.arguments = args
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "HEALTHLEDGER_PATH")
        env.removeValue(forKey: "TZ")  // a new ledger records $TZ: tests set it when they mean to
        for (k, v) in environment { env[k] = v }
        process.environment = env
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        let out = Pipe(), err = Pipe(), input = Pipe()
        let inputFile = try stdinPath.map { path in
            let fd = open(path, O_RDONLY)
            guard fd >= 0 else { throw CocoaError(.fileReadNoPermission) }
            return FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        }
        let outputFile = try stdoutPath.map { path in
            guard let h = FileHandle(forWritingAtPath: path) else { throw CocoaError(.fileWriteNoPermission) }
            return h
        }
        process.standardOutput = outputFile ?? out
        process.standardError = err
        process.standardInput = inputFile ?? input
        try process.run()
        // The watchdog: SIGKILL past the timeout (a hung child never answers SIGTERM).
        let timedOut = Locked(false)
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem {
            guard process.isRunning else { return }
            timedOut.withLock { $0 = true }
            kill(pid, SIGKILL)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        defer { watchdog.cancel() }
        if outputFile != nil { try out.fileHandleForWriting.close() }
        // Read both pipes concurrently so a chatty child never blocks on a full pipe.
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data(), errData = Data()
        group.enter()
        DispatchQueue.global().async { outData = out.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        group.enter()
        DispatchQueue.global().async { errData = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        group.wait()
        watchdog.cancel()
        // Close every pipe end now. Foundation's Process is not released on Linux, and it
        // holds these handles: left to deallocation, each run leaked its pipes, and past
        // ~1,360 open descriptors Process.run itself crashes (its /proc/self/fd scan reads
        // past glibc's readdir buffer), which is how CI died.
        for handle in [out.fileHandleForReading, out.fileHandleForWriting, err.fileHandleForReading,
                       err.fileHandleForWriting, input.fileHandleForReading, input.fileHandleForWriting] {
            try? handle.close()
        }
        try? inputFile?.close()
        try? outputFile?.close()
        if timedOut.withLock({ $0 }) { throw CLITimedOut(args: args, seconds: timeout) }
        return CLIResult(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                         stderr: String(decoding: errData, as: UTF8.self))
    }
}

