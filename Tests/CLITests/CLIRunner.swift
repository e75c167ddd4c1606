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

    /// Runs `healthledger args…` with `stdin` as standard input.
    static func run(_ args: [String], stdin: String? = nil, environment: [String: String] = [:],
                    currentDirectory: URL? = nil) throws -> CLIResult {
        let process = Process()
        process.executableURL = binary
        process.arguments = args
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "HEALTHLEDGER_PATH")
        for (k, v) in environment { env[k] = v }
        process.environment = env
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
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
