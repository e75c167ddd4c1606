import Foundation
import Testing
import TestSupport
import LedgerLog

/// `tools/verify_proof.py` checks a consistency proof from the
/// checkpoint the verifier kept (`--old FILE`), requires every checkpoint it relies on
/// to be signed by the verifier key, and prints both roots. Before, it took the old
/// checkpoint from the proof itself and accepted it unsigned, so a rewritten and
/// re-chained log plus an unsigned checkpoint of its own passed as "consistency OK".
struct VerifyProofConsistencyTests {
    static let python = TransparencyCommandTests.python

    static func ok(_ dir: TemporaryDirectory, _ args: [String]) throws -> String {
        try TransparencyCommandTests.ok(dir, args)
    }

    static func check(_ text: String, key: String?, oldPath: String? = nil) throws -> (Int32, String) {
        try TransparencyCommandTests.pythonCheck(text, key: key, oldPath: oldPath)
    }

    /// A checkpoint note's tree size, root (base64) and the note without its signatures.
    static func size(_ note: String) -> Int { Int(note.components(separatedBy: "\n")[1]) ?? -1 }
    static func root(_ note: String) -> String { note.components(separatedBy: "\n")[2] }
    static func unsigned(_ note: String) -> String { note.components(separatedBy: "\n").prefix(3).joined(separator: "\n") + "\n" }

    /// A ledger with a key, the signed checkpoint its verifier kept (and where), then one
    /// more event: the state a consistency proof is asked for.
    static func ledgerPastAKeptCheckpoint() throws -> (dir: TemporaryDirectory, key: String, kept: String, keptPath: String) {
        let (dir, _) = try TransparencyCommandTests.ledger(samples: 2)
        let key = try ok(dir, ["key", "generate"]).trimmingCharacters(in: .newlines)
        let kept = try ok(dir, ["checkpoint"])
        let keptPath = try TransparencyCommandTests.keep(kept, "kept.txt", in: dir)
        _ = try ok(dir, ["save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "80", "--unit", "kg",
                         "--start", "2026-03-01T08:00:00Z"])
        return (dir, key, kept, keptPath)
    }

    @Test(.enabled(if: python != nil, "needs python3 for tools/verify_proof.py"))
    func aConsistencyProofFromTheKeptSignedCheckpointVerifiesAndPrintsBothRoots() throws {
        let (dir, key, kept, keptPath) = try Self.ledgerPastAKeptCheckpoint()
        let name = key.components(separatedBy: "+")[0]
        let proof = try Self.ok(dir, ["--json", "prove", "--from-checkpoint", keptPath])
        let now = try Self.ok(dir, ["checkpoint"])
        #expect(Self.size(now) == Self.size(kept) + 1)
        let (status, out) = try Self.check(proof, key: key, oldPath: keptPath)
        #expect(status == 0)
        #expect(out == """
            old checkpoint \(keptPath): signature by \(name): OK
            the proof's new checkpoint: signature by \(name): OK
            old root: \(Self.size(kept)) events, \(Self.root(kept)) (old checkpoint \(keptPath))
            new root: \(Self.size(now)) events, \(Self.root(now)) (the proof's new checkpoint)
            consistency \(Self.size(kept)) -> \(Self.size(now)) events: OK

            """)
        // Without --key the same checks hold; the signatures are named, not checked.
        let (plain, plainOut) = try Self.check(proof, key: nil, oldPath: keptPath)
        #expect(plain == 0)
        #expect(plainOut.hasPrefix("old checkpoint \(keptPath): signatures present but not checked (no --key): \(name)\n"))
        #expect(plainOut.hasSuffix("consistency \(Self.size(kept)) -> \(Self.size(now)) events: OK\n"))

        // The kept checkpoint with its signature damaged: refused, naming it.
        let signatureAt = kept.range(of: "\n\n— ")!.upperBound
        let lineEnd = kept[signatureAt...].firstIndex(of: "\n")!
        let i = kept.index(lineEnd, offsetBy: -10)
        var damaged = kept
        damaged.replaceSubrange(i...i, with: kept[i] == "A" ? "B" : "A")
        let damagedPath = try TransparencyCommandTests.keep(damaged, "damaged.txt", in: dir)
        let (bad, badOut) = try Self.check(proof, key: key, oldPath: damagedPath)
        #expect(bad == 1)
        #expect(badOut == "FAILED: old checkpoint \(damagedPath): its signature by \(name) does not verify\n")
        // The new checkpoint signed by another key only: refused, naming which.
        let otherKey = dir.url.appendingPathComponent("other.key").path
        _ = try Self.ok(dir, ["key", "generate", "--name", "someone-else", "--out", otherKey])
        let otherProof = try Self.ok(dir, ["--json", "prove", "--from-checkpoint", keptPath, "--key", otherKey])
        let (other, otherOut) = try Self.check(otherProof, key: key, oldPath: keptPath)
        #expect(other == 1)
        #expect(otherOut == """
            old checkpoint \(keptPath): signature by \(name): OK
            FAILED: the proof's new checkpoint carries no signature by \(name)+\(key.components(separatedBy: "+")[1])

            """)

        // A consistency proof needs --old; --old goes with nothing else.
        #expect(try Self.check(proof, key: key) == (2, ""))
        let inclusion = try Self.ok(dir, ["--json", "prove", "--seq", "1"])
        #expect(try Self.check(inclusion, key: key, oldPath: keptPath) == (2, ""))
        #expect(try Self.check(kept, key: key, oldPath: keptPath) == (2, ""))
    }

    /// The attack: one bodyMass value 70 → 99 kg, record CRC32Cs and the chain
    /// recomputed, the stale tree file deleted, and the attacker's own checkpoint of the
    /// rewritten history (unsigned) as the proof's old checkpoint.
    @Test(.enabled(if: python != nil, "needs python3 for tools/verify_proof.py"))
    func aRewrittenRechainedLogWithItsOwnUnsignedCheckpointIsRefused() async throws {
        let (dir, key, kept, keptPath) = try Self.ledgerPastAKeptCheckpoint()
        let parts = key.components(separatedBy: "+")
        let (from, to) = (withUnsafeBytes(of: Double(70).bitPattern.littleEndian, Array.init),
                          withUnsafeBytes(of: Double(99).bitPattern.littleEndian, Array.init))
        var changed = 0
        try await LogRewriter.rechain(dir.fs, from: 1) { record in
            var p = record.payload
            guard p.count >= 8, let i = (0...(p.count - 8)).first(where: { Array(p[$0..<$0 + 8]) == from }) else { return record }
            p.replaceSubrange(i..<i + 8, with: to)
            changed += 1
            return LogRecord(kind: record.kind, kindVersion: record.kindVersion, payload: p)
        }
        #expect(changed == 1)
        try FileManager.default.removeItem(at: dir.url.appendingPathComponent(MerkleTreeFile.fileName))
        #expect(try Self.ok(dir, ["--json", "query", "--owner", "bodyMass"]).contains("\"value\":99,"))
        let n = Self.size(kept)
        let forged = Self.unsigned(try Self.ok(dir, ["checkpoint", "--size", "\(n)"]))
        #expect(Self.root(forged) != Self.root(kept))
        let forgedPath = try TransparencyCommandTests.keep(forged, "forged.txt", in: dir)
        let proof = try Self.ok(dir, ["--json", "prove", "--from-checkpoint", forgedPath])

        // Without `--old` (the old checkpoint taken from the proof): no "OK" any more.
        #expect(try Self.check(proof, key: key) == (2, ""))
        // From the checkpoint the verifier kept: refused, both roots printed.
        let (status, out) = try Self.check(proof, key: key, oldPath: keptPath)
        #expect(status == 1)
        #expect(out.contains("old root: \(n) events, \(Self.root(kept)) (old checkpoint \(keptPath))\n"))
        #expect(out.hasSuffix("FAILED: the proof starts from another old checkpoint (\(n) events, root \(Self.root(forged))), not old checkpoint \(keptPath)\n"))
        // Without the key as well: the roots differ.
        #expect(try Self.check(proof, key: nil, oldPath: keptPath).0 == 1)
        // The attacker's unsigned copy given as --old: refused, it is unsigned.
        let (unsigned, unsignedOut) = try Self.check(proof, key: key, oldPath: forgedPath)
        #expect(unsigned == 1)
        #expect(unsignedOut == "FAILED: old checkpoint \(forgedPath) carries no signature by \(parts[0])+\(parts[1]) (it is unsigned)\n")
        // The proof doctored to name the kept checkpoint: its path leads elsewhere.
        var doc = try #require(try JSONSerialization.jsonObject(with: Data(proof.utf8)) as? [String: Any])
        doc["oldCheckpoint"] = kept
        doc["root1"] = Self.root(kept)
        let doctored = String(decoding: try JSONSerialization.data(withJSONObject: doc), as: UTF8.self)
        let (forgedPathStatus, forgedPathOut) = try Self.check(doctored, key: key, oldPath: keptPath)
        #expect(forgedPathStatus == 1)
        #expect(forgedPathOut.hasSuffix("FAILED: the proof does not lead to the roots\n"))
        // HealthLedger's own check agrees.
        #expect(try TransparencyCommandTests.run(dir, ["verify", "--checkpoint", keptPath]).status == 6)
    }
}
