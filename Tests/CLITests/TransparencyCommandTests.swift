import Foundation
import Testing
import TestSupport
import LedgerLog

/// checkpoint, prove, key generate and verify --checkpoint through the built binary, with
/// every printed proof checked by tools/verify_proof.py (Python standard library only).
struct TransparencyCommandTests {
    static func run(_ dir: TemporaryDirectory, _ args: [String]) throws -> CLIResult {
        try CLIRunner.run(["--ledger", dir.path] + args)
    }

    static func ok(_ dir: TemporaryDirectory, _ args: [String]) throws -> String {
        let r = try run(dir, args)
        guard r.status == 0 else { throw StoreCommandTests.CLIError(args: args, result: r) }
        return r.stdout
    }

    /// A ledger of a few batches; returns it and the UUIDs of its samples.
    static func ledger(samples: Int) throws -> (TemporaryDirectory, [String]) {
        let dir = try StoreCommandTests.prepared()
        var uuids: [String] = []
        for i in 0..<samples {
            let out = try ok(dir, ["--json", "save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "\(60 + i)",
                                   "--unit", "kg", "--start", "2026-02-0\(1 + i % 9)T09:00:00Z"])
            guard let r = out.range(of: "\"uuid\":\"") else { throw StoreCommandTests.CLIError(args: [out], result: CLIResult(status: 0, stdout: out, stderr: "")) }
            uuids.append(String(out[r.upperBound...].prefix(36)))
        }
        return (dir, uuids)
    }

    static let python: String? = ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let verifier = SharedData.repositoryRoot.appendingPathComponent("tools/verify_proof.py").path

    /// Runs tools/verify_proof.py on `text` (written to a file), with `--old oldPath` (the
    /// checkpoint the verifier kept) when given; its exit status and output.
    static func pythonCheck(_ text: String, key: String?, oldPath: String? = nil) throws -> (Int32, String) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("proof-\(UUID().uuidString)")
        try text.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let options = (key.map { ["--key", $0] } ?? []) + (oldPath.map { ["--old", $0] } ?? [])
        let run = try ChildProcess.run(python!, [verifier] + options + [file.path], stderr: .null)
        return (run.status, run.stdoutText)
    }

    /// Writes `text` to `name` in the ledger's temporary folder; its path.
    static func keep(_ text: String, _ name: String, in dir: TemporaryDirectory) throws -> String {
        let file = dir.url.appendingPathComponent(name)
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    @Test(.enabled(if: python != nil, "needs python3 for tools/verify_proof.py"))
    func everyProofTheCLIPrintsVerifiesInPython() throws {
        let (dir, uuids) = try Self.ledger(samples: 5)
        let key = try Self.ok(dir, ["key", "generate"]).trimmingCharacters(in: .newlines)
        #expect(key.hasPrefix("healthledger/"))
        let attributes = try FileManager.default.attributesOfItem(atPath: dir.path + "/keys/checkpoint.key")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(try Self.run(dir, ["key", "generate"]).status == 5)

        let old = try Self.ok(dir, ["checkpoint", "--size", "4"])
        let now = try Self.ok(dir, ["checkpoint"])
        #expect(old.components(separatedBy: "\n")[1] == "4")
        for note in [old, now] {
            let (status, out) = try Self.pythonCheck(note, key: key)
            #expect(status == 0, "\(out)")
        }
        let size = Int(now.components(separatedBy: "\n")[1])!
        // Each proof, with the old checkpoint a consistency proof is checked from (--old).
        var proofs: [(proof: String, oldPath: String?)] = []
        for seq in 1...size { proofs.append((try Self.ok(dir, ["--json", "prove", "--seq", "\(seq)"]), nil)) }
        for s in [4, size - 1] { proofs.append((try Self.ok(dir, ["--json", "prove", "--seq", "3", "--size", "\(s)"]), nil)) }
        proofs.append((try Self.ok(dir, ["--json", "prove", uuids[2]]), nil))
        let oldFile = try Self.keep(old, "old.txt", in: dir)
        proofs.append((try Self.ok(dir, ["--json", "prove", "--from-checkpoint", oldFile]), oldFile))
        for m in 1...size {
            let cpFile = try Self.keep(try Self.ok(dir, ["checkpoint", "--size", "\(m)"]), "old-\(m).txt", in: dir)
            proofs.append((try Self.ok(dir, ["--json", "prove", "--from-checkpoint", cpFile]), cpFile))
        }
        #expect(proofs[size + 2].proof.contains("\"sample\":{\"uuid\":\"\(uuids[2])\""))
        for (proof, oldPath) in proofs {
            let (status, out) = try Self.pythonCheck(proof, key: key, oldPath: oldPath)
            #expect(status == 0, "\(proof)\n\(out)")
            // A flipped character in a path hash is refused.
            if let r = proof.range(of: "\"path\":[\"") {
                var bad = proof
                let i = r.upperBound
                bad.replaceSubrange(i...i, with: proof[i] == "A" ? "B" : "A")
                #expect(try Self.pythonCheck(bad, key: key, oldPath: oldPath).0 == 1)
            }
        }
        // A checkpoint signed by another key is refused.
        let other = "someone+00000000+AWSk9sZKu/Y51pyOnf5f513vu+LVmQTNgCtbRkwBRluc"
        #expect(try Self.pythonCheck(now, key: other).0 == 1)
        #expect(try Self.run(dir, ["verify"]).status == 0)
    }

    @Test func rewrittenAndRechainedHistoryPassesVerifyButNotVerifyCheckpoint() async throws {
        let (dir, _) = try Self.ledger(samples: 4)
        _ = try Self.ok(dir, ["key", "generate"])
        let checkpoint = try Self.ok(dir, ["checkpoint"])
        let file = dir.url.appendingPathComponent("cp.txt")
        try checkpoint.write(to: file, atomically: true, encoding: .utf8)
        let before = try Self.ok(dir, ["verify", "--checkpoint", file.path])
        #expect(before.contains("checkpoint signature by healthledger/"))
        #expect(before.contains("OK: the ledger is intact"))

        // Rewrite from event 6 on and re-chain: a valid log, different history — the
        // 63 kg reading becomes 99 kg.
        let (from, to) = (withUnsafeBytes(of: Double(63).bitPattern.littleEndian, Array.init),
                          withUnsafeBytes(of: Double(99).bitPattern.littleEndian, Array.init))
        var changed = 0
        try await LogRewriter.rechain(dir.fs, from: 6) { record in
            var p = record.payload
            guard p.count >= 8, let i = (0...(p.count - 8)).first(where: { Array(p[$0..<$0 + 8]) == from }) else { return record }
            p.replaceSubrange(i..<i + 8, with: to)
            changed += 1
            return LogRecord(kind: record.kind, kindVersion: record.kindVersion, payload: p)
        }
        #expect(changed == 1)
        #expect(try Self.ok(dir, ["--json", "query", "--owner", "bodyMass"]).contains("\"value\":99,"))
        // The stale tree file gives it away…
        let stale = try Self.run(dir, ["verify"])
        #expect(stale.status == 6)
        #expect(stale.stdout.contains("FAILED tree: index/merkle.bin is damaged: does not match the log"))
        // …so a careful attacker deletes it (it is derived): today's verify then passes.
        try FileManager.default.removeItem(at: dir.url.appendingPathComponent(MerkleTreeFile.fileName))
        let plain = try Self.run(dir, ["verify"])
        #expect(plain.status == 0, "\(plain.stdout)\(plain.stderr)")
        let caught = try Self.run(dir, ["verify", "--checkpoint", file.path])
        #expect(caught.status == 6)
        let size = checkpoint.components(separatedBy: "\n")[1]
        #expect(caught.stdout.contains("FAILED checkpoint: the ledger's first \(size) events hash to "))
        #expect(caught.stdout.contains("history up to event \(size) was rewritten"))
        #expect(try Self.run(dir, ["prove", "--from-checkpoint", file.path]).status == 6)

        // Events only appended after the checkpoint: still extends it.
        let (dir2, _) = try Self.ledger(samples: 2)
        let cp2 = try Self.ok(dir2, ["checkpoint"])
        try cp2.write(to: file, atomically: true, encoding: .utf8)
        _ = try Self.ok(dir2, ["save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "80", "--unit", "kg", "--start", "2026-03-01T08:00:00Z"])
        let extended = try Self.ok(dir2, ["verify", "--checkpoint", file.path])
        #expect(extended.contains("the ledger extends the checkpoint of"))
        #expect(extended.contains("checkpoint signature not checked (no verifier key)"))
    }

    @Test func treeFileDeletedIsRebuiltAndDamageIsNamedByVerify() throws {
        let (dir, _) = try Self.ledger(samples: 3)
        let first = try Self.ok(dir, ["checkpoint"])
        let tree = dir.url.appendingPathComponent(MerkleTreeFile.fileName)
        let good = try Data(contentsOf: tree)
        try FileManager.default.removeItem(at: tree)
        #expect(try Self.ok(dir, ["checkpoint"]) == first)
        #expect(try Data(contentsOf: tree) == good)
        // Few events: the file holds its header only (nodes start at 256 events); damage it.
        #expect(good.count == 4096)
        var bad = good
        bad[40] ^= 1
        try bad.write(to: tree)
        let r = try Self.run(dir, ["verify"])
        #expect(r.status == 6)
        #expect(r.stdout.contains("FAILED tree: index/merkle.bin is damaged: "))
        let again = try Self.run(dir, ["checkpoint"])
        #expect(again.stdout == first)
        #expect(again.stderr.contains("index/merkle.bin rebuilt"))
        #expect(try Self.run(dir, ["verify"]).status == 0)
    }

    @Test func badInputIsRefusedWithTheRightStatus() throws {
        let (dir, _) = try Self.ledger(samples: 1)
        let file = dir.url.appendingPathComponent("junk.txt")
        try "not a checkpoint\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(try Self.run(dir, ["verify", "--checkpoint", file.path]).status == 3)
        #expect(try Self.run(dir, ["prove", "--from-checkpoint", file.path]).status == 3)
        #expect(try Self.run(dir, ["prove", "--seq", "999"]).status == 4)
        #expect(try Self.run(dir, ["prove", "--seq", "0"]).status == 2)
        #expect(try Self.run(dir, ["prove"]).status == 2)
        #expect(try Self.run(dir, ["prove", "00000000-0000-0000-0000-000000000000"]).status == 4)
        #expect(try Self.run(dir, ["checkpoint", "--size", "99999"]).status == 2)
        #expect(try Self.run(dir, ["verify", "--checkpoint", "/nonexistent"]).status == 4)
        let foreign = "healthledger/00000000-0000-0000-0000-000000000000\n1\n\(String(repeating: "A", count: 43))=\n"
        try foreign.write(to: file, atomically: true, encoding: .utf8)
        let r = try Self.run(dir, ["verify", "--checkpoint", file.path])
        #expect(r.status == 6)
        #expect(r.stdout.contains("FAILED checkpoint: the checkpoint is of healthledger/00000000-0000-0000-0000-000000000000"))
    }
}
