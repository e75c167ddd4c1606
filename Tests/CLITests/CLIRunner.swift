import Foundation

/// Runs the built `healthledger` binary and captures what it printed.
struct CLIResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

enum CLIRunner {
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
                    currentDirectory: URL? = nil, stdinPath: String? = nil, stdoutPath: String? = nil) throws -> CLIResult {
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
        return CLIResult(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                         stderr: String(decoding: errData, as: UTF8.self))
    }
}
