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

    /// `healthledger args…`, with `HEALTHLEDGER_CACHE` set to `cache`.
    static func run(_ args: [String], stdin: String? = nil, cache: TemporaryDirectory) throws -> Result {
        let process = try start(args, cache: cache)
        let out = process.standardOutput as! Pipe, err = process.standardError as! Pipe, input = process.standardInput as! Pipe
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
        return Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Starts `healthledger args…` with pipes on stdin, stdout and stderr.
    static func start(_ args: [String], cache: TemporaryDirectory) throws -> Process {
        let process = Process()
        process.executableURL = binary
        process.arguments = args
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "HEALTHLEDGER_PATH")
        env.removeValue(forKey: "TZ")
        env["HEALTHLEDGER_CACHE"] = cache.path
        process.environment = env
        process.standardOutput = Pipe()
        process.standardError = Pipe()
        process.standardInput = Pipe()
        try process.run()
        return process
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
