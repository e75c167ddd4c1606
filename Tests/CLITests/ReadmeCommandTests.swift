import Foundation
import Testing
import LedgerChecksums
import TestSupport
import AppleHealthImport

/// The README's own tour failed (`hl --app ID query bodyMass` was
/// "unknown command"). These tests run every command line of README.md's `sh` blocks,
/// unchanged, in a fresh folder, and check each one's exit status.
struct ReadmeCommandTests {
    /// The repository's root (the folder holding README.md), found from this file's path.
    static let root: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/", !FileManager.default.fileExists(atPath: url.appendingPathComponent("README.md").path) {
            url.deleteLastPathComponent()
        }
        return url
    }()

    /// README.md.
    static let readme: String = (try? String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)) ?? ""

    /// Every command line of every ```sh block: not blank, not only a comment.
    static func commandLines(_ markdown: String) -> [String] {
        var lines: [String] = []
        var inShell = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("```") {
                inShell = !inShell && trimmed == "```sh"
                continue
            }
            if inShell, !trimmed.isEmpty, !trimmed.hasPrefix("#") { lines.append(String(line)) }
        }
        return lines
    }

    /// The exit status each README line is documented to have: `verify` of the broken
    /// copy is 6, everything else succeeds.
    static func expectedStatus(_ line: String) -> Int32 {
        line.contains("broken.ledger verify") ? 6 : 0
    }

    @Test func readmeCommandLinesAreFound() {
        let lines = Self.commandLines(Self.readme)
        #expect(lines.count >= 14)
        #expect(lines.contains { $0.hasPrefix("hl --app com.raywenderlich.PrancerciseTracker query bodyMass") })
        #expect(lines.contains { $0.hasPrefix("hl --ledger my.ledger import-apple-health export.zip") })
    }

    /// Runs the lines in one bash session in a fresh folder. `.build/release/healthledger`
    /// there is the binary under test (the README's alias points at it), `swift` on PATH
    /// is a stand-in: `swift run -c release healthledger ARGS` runs that binary and
    /// `swift test` (this very suite) is not run again from inside itself; `export.zip`
    /// is the small hand-written export, zipped.
    @Test func everyReadmeCommandLineRunsUnchanged() throws {
        let dir = TemporaryDirectory("readme")
        let fm = FileManager.default
        let release = dir.url.appendingPathComponent(".build/release")
        let bin = dir.url.appendingPathComponent("bin")
        try fm.createDirectory(at: release, withIntermediateDirectories: true)
        try fm.createDirectory(at: bin, withIntermediateDirectories: true)
        try fm.createSymbolicLink(at: release.appendingPathComponent("healthledger"), withDestinationURL: CLIRunner.binary)
        // the README's tools/ lines (tools/verify_proof.py) run from the repository root
        try fm.createSymbolicLink(at: dir.url.appendingPathComponent("tools"), withDestinationURL: Self.root.appendingPathComponent("tools"))
        let swiftStub = """
            #!/bin/bash
            if [ "$1 $2 $3 $4" = "run -c release healthledger" ]; then shift 4; exec "\(CLIRunner.binary.path)" "$@"; fi
            if [ "$1" = "test" ]; then exit 0; fi
            echo "swift stand-in: unexpected $*" >&2; exit 99
            """
        let stubURL = bin.appendingPathComponent("swift")
        try swiftStub.write(to: stubURL, atomically: true, encoding: .utf8)
        try fm.setAttributes([.posixPermissions: 0o755], ofItemAtPath: stubURL.path)
        let zip = Self.storedZip([("apple_health_export/export.xml", Array(SmallExport.xml.utf8))])
        try Data(zip).write(to: dir.url.appendingPathComponent("export.zip"))

        let lines = Self.commandLines(Self.readme)
        var script = "shopt -s expand_aliases\ncd \"\(dir.path)\"\n"
        for (i, line) in lines.enumerated() {
            script += line + "\n" + "echo \"@@ \(i) $?\" >&2\n"
        }
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "HEALTHLEDGER_PATH")
        env["PATH"] = bin.path + ":" + (env["PATH"] ?? "/usr/bin:/bin")
        let run = try ChildProcess.run("/bin/bash", ["-c", script], environment: env, stdin: .null)
        let stderr = run.stderrText
        let stdout = run.stdoutText
        var statuses: [Int: Int32] = [:]
        for line in stderr.split(separator: "\n") where line.hasPrefix("@@ ") {
            let parts = line.split(separator: " ")
            if parts.count == 3, let i = Int(parts[1]), let s = Int32(parts[2]) { statuses[i] = s }
        }
        for (i, line) in lines.enumerated() {
            #expect(statuses[i] == Self.expectedStatus(line), "README line \(line): stderr \(stderr)")
        }
        #expect(!stderr.contains("unknown command"))
        // The tour's app query answers as the app, the broken copy is named by verify.
        #expect(stdout.contains("FAILED log at sequence"))
        #expect(fm.fileExists(atPath: dir.url.appendingPathComponent("my.ledger/ledger.log").path))
    }

    /// `--app ID`, `--app=ID`, `--ledger L`, `--ledger=L`: before or after the command,
    /// the same answer (before the fix `--app ID query` was "unknown command 'ID'").
    @Test func globalOptionsTakeBothFormsBeforeOrAfterTheCommand() throws {
        let dir = try StoreCommandTests.prepared()
        let forms: [[String]] = [
            ["--ledger", dir.path, "--app", "com.example.scale", "query", "bodyMass"],
            ["--ledger=\(dir.path)", "--app=com.example.scale", "query", "bodyMass"],
            ["query", "bodyMass", "--ledger", dir.path, "--app", "com.example.scale"],
            ["query", "--app=com.example.scale", "bodyMass", "--ledger=\(dir.path)"],
            ["--app", "com.example.scale", "query", "--ledger", dir.path, "bodyMass"],
        ]
        var outputs: [String] = []
        for args in forms {
            let r = try CLIRunner.run(args)
            #expect(r.status == 0, "\(args): \(r.stderr)")
            outputs.append(r.stdout)
        }
        #expect(Set(outputs).count == 1)
        #expect(outputs[0].contains("  154.3235835294143 lb  "))  // 70 kg in en_US's preferred unit
        let missing = try CLIRunner.run(["--ledger", dir.path, "query", "bodyMass", "--app"])
        #expect(missing.status == 2)
        #expect(missing.stderr == "healthledger: usage: --app needs a value\n")
    }

    /// A zip of stored (uncompressed) entries.
    static func storedZip(_ entries: [(String, [UInt8])]) -> [UInt8] {
        var out: [UInt8] = [], central: [UInt8] = []
        func u16(_ v: Int, _ into: inout [UInt8]) { into += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func u32(_ v: UInt32, _ into: inout [UInt8]) { for k in 0..<4 { into.append(UInt8(v >> (8 * UInt32(k)) & 0xFF)) } }
        for (name, data) in entries {
            let crc = CRC32.checksum(data), offset = UInt32(out.count), nameBytes = Array(name.utf8)
            u32(0x0403_4B50, &out); u16(20, &out); u16(0x800, &out); u16(0, &out); u16(0, &out); u16(0x21, &out)
            u32(crc, &out); u32(UInt32(data.count), &out); u32(UInt32(data.count), &out); u16(nameBytes.count, &out); u16(0, &out)
            out += nameBytes + data
            u32(0x0201_4B50, &central); u16(20, &central); u16(20, &central); u16(0x800, &central); u16(0, &central)
            u16(0, &central); u16(0x21, &central); u32(crc, &central); u32(UInt32(data.count), &central)
            u32(UInt32(data.count), &central); u16(nameBytes.count, &central); u16(0, &central); u16(0, &central)
            u16(0, &central); u16(0, &central); u32(0, &central); u32(offset, &central)
            central += nameBytes
        }
        let centralOffset = UInt32(out.count)
        out += central
        u32(0x0605_4B50, &out); u16(0, &out); u16(0, &out); u16(entries.count, &out); u16(entries.count, &out)
        u32(UInt32(central.count), &out); u32(centralOffset, &out); u16(0, &out)
        return out
    }
}
