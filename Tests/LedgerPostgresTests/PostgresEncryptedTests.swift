import Foundation
import LedgerLog
@testable import LedgerPostgres
import Testing
import TestSupport

/// An encrypted ledger in PostgreSQL (issue 32, item 6; rule P6): its key store is a row of
/// `healthledger_keys` beside the log (sealed under the owner's key file, which never
/// reaches the server), so the database holds ciphertext only; `erase` destroys keys
/// there and runs `VACUUM FULL healthledger_keys` (the dead row versions that still
/// held the destroyed keys are written away); the history still verifies, against a
/// checkpoint taken before too, with and without the key; `copy` carries the key
/// store both ways.
///
/// Serialized: one test holds a transaction open across an erase on purpose, and its
/// lock on `healthledger_keys` would make the other's `VACUUM FULL` wait and fail
/// (CI under AddressSanitizer, where the two overlapped).
@Suite(.serialized, .enabled(if: PGTest.enabled, PGTest.reason))
struct PostgresEncryptedTests {
    static let needles: [(String, [UInt8])] = [
        ("note text", Array("ZZ-ERASE-ME".utf8)),
        ("value as f64", withUnsafeBytes(of: (123.456 as Double).bitPattern.littleEndian) { Array($0) }),
    ]

    static func keyRow(_ ledger: String) throws -> (bytes: [UInt8], version: Int64)? {
        let c = try PGTest.connection()
        defer { c.close() }
        let rows = try c.execute("SELECT store, version FROM healthledger_keys WHERE ledger = $1", [.text(ledger)])
        guard let row = rows.rows.first, let store = row[0] else { return nil }
        return (store, rows.integer(0, 1) ?? -1)
    }

    static func keysFileNode() throws -> Int64? {
        let c = try PGTest.connection()
        defer { c.close() }
        return try c.execute("SELECT pg_relation_filenode('healthledger_keys')::bigint").integer(0, 0)
    }

    /// A new ledger name in the test server, a cache, a folder for the key file, and
    /// `healthledger` run on that ledger (with the key file, or without).
    struct Fixture {
        let cache = TemporaryDirectory("cache")
        let dir: TemporaryDirectory
        let name: String
        var url: String { PGTest.ledgerURL(name) }
        var kek: String { dir.path + "/kek" }

        init(_ prefix: String) throws {
            dir = TemporaryDirectory("pg-" + prefix)
            try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
            name = PGTest.freshName(prefix)
        }

        func hl(_ args: [String], key: Bool = true) throws -> PGCLI.Result {
            try PGCLI.run((key ? ["--key-file", kek] : []) + ["--ledger", url] + args, cache: cache)
        }
    }

    @Test func anEncryptedLedgerInPostgresHoldsCiphertextErasesAndStillVerifies() throws {
        let f = try Fixture("enc")
        let (cache, dir, name, url, kek) = (f.cache, f.dir, f.name, f.url, f.kek)
        func hl(_ args: [String], key: Bool = true) throws -> PGCLI.Result { try f.hl(args, key: key) }
        let created = try hl(["init", "--encrypt"])
        #expect(created.status == 0 && created.stdout.hasPrefix("created encrypted ledger "), "\(created.stdout)\(created.stderr)")
        #expect(try Self.keyRow(name) != nil, "no key store row")
        for (app, value, extra) in [("com.example.scale", "123.456", ["--meta", "note=ZZ-ERASE-ME"]), ("com.example.other", "70.5", [])] {
            for args in [["--app", app, "app", "register", "--name", "A", "--share-purpose", "s", "--read-purpose", "r"],
                         ["--app", app, "request", "--share", "bodyMass", "--read", "bodyMass"],
                         ["authorize", "--app", app, "--share", "bodyMass", "--read", "bodyMass"],
                         ["save", "--app", app, "--type", "bodyMass", "--value", value, "--unit", "kg",
                          "--start", "2026-11-03T08:00:00Z"] + extra] {
                let r = try hl(args)
                #expect(r.status == 0, "\(args): \(r.stderr)")
            }
        }
        // The database holds ciphertext only: no batch, no key row holds the value or the note.
        let stored = try PGTest.storedLog(name)
        let keys = try #require(try Self.keyRow(name))
        for (what, needle) in Self.needles {
            #expect(stored.firstRange(of: needle) == nil, "a batch holds the \(what)")
            #expect(keys.bytes.firstRange(of: needle) == nil, "the key row holds the \(what)")
        }
        let before = try hl(["--owner", "--json", "query", "bodyMass"])
        #expect(before.status == 0 && before.stdout.contains("ZZ-ERASE-ME") && before.stdout.contains("70.5"), "\(before.stderr)")
        let shut = try hl(["--owner", "--json", "query", "bodyMass"], key: false)
        #expect(shut.status != 0 && !shut.stdout.contains("123.456"), "\(shut.stdout)")
        let checkpoint = try hl(["checkpoint"], key: false)
        #expect(checkpoint.status == 0, "\(checkpoint.stderr)")
        try Data(checkpoint.stdout.utf8).write(to: dir.url.appendingPathComponent("old.txt"))
        let node = try Self.keysFileNode()

        let erased = try hl(["erase", "--source", "com.example.scale", "--reason", "the user asked (Art. 17)"])
        #expect(erased.status == 0, "\(erased.stdout)\(erased.stderr)")
        // VACUUM FULL wrote the table anew (the dead versions holding the keys are gone
        // from it); the row was written again.
        #expect(try Self.keysFileNode() != node, "healthledger_keys was not rewritten")
        #expect((try Self.keyRow(name)?.version ?? 0) > keys.version)
        let after = try hl(["--owner", "--json", "query", "bodyMass"])
        #expect(after.status == 0 && !after.stdout.contains("123.456") && !after.stdout.contains("ZZ-ERASE-ME")
                && after.stdout.contains("70.5"), "\(after.stdout)\(after.stderr)")
        let verify = try hl(["verify"])
        #expect(verify.status == 0 && verify.stdout.contains("OK: the ledger is intact"), "\(verify.stdout)\(verify.stderr)")
        let extends = try hl(["verify", "--checkpoint", dir.path + "/old.txt"])
        #expect(extends.status == 0 && extends.stdout.contains("the ledger extends the checkpoint"), "\(extends.stdout)\(extends.stderr)")
        let structure = try hl(["verify", "--structure"], key: false)
        #expect(structure.status == 0, "\(structure.stdout)\(structure.stderr)")

        // copy carries the key store: into a folder, and from it into another ledger here.
        let folder = dir.path + "/copy"
        let out = try PGCLI.run(["--key-file", kek, "copy", url, folder], cache: cache)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder + "/keys/keys.bin"))
        let other = PGTest.freshName("enc-copy")
        let back = try PGCLI.run(["--key-file", kek, "copy", folder, PGTest.ledgerURL(other)], cache: cache)
        #expect(back.status == 0, "\(back.stderr)")
        #expect(try Self.keyRow(other)?.bytes == (try Data(contentsOf: URL(fileURLWithPath: folder + "/keys/keys.bin"))).map { $0 })
        for location in [folder, PGTest.ledgerURL(other)] {
            let q = try PGCLI.run(["--key-file", kek, "--ledger", location, "--owner", "--json", "query", "bodyMass"], cache: cache)
            #expect(q.status == 0 && q.stdout == after.stdout, "\(location): \(q.stdout)\(q.stderr)")
            let v = try PGCLI.run(["--key-file", kek, "--ledger", location, "verify"], cache: cache)
            #expect(v.status == 0, "\(location): \(v.stdout)\(v.stderr)")
        }
        // A second init of the same name is refused as `init` refuses one in a folder (exit
        // 1, ledgerExists); the key file given is not made.
        let again = try PGCLI.run(["--key-file", dir.path + "/kek2", "--ledger", url, "init", "--encrypt"], cache: cache)
        #expect(again.status == 1 && again.stderr.contains("ledgerExists"), "\(again.status) \(again.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/kek2"))
    }

    /// A transaction older than the erasure, still open, can see the key row's earlier
    /// version, and VACUUM FULL keeps that version ("dead row versions cannot be removed
    /// yet"): the erasure does not report success (the keys are destroyed in the store;
    /// it says what is left), the purge stays due, and once the old transaction ended the
    /// next writer to open the ledger runs it.
    @Test func anOlderOpenTransactionKeepsThePurgeDueUntilTheNextWriter() throws {
        let f = try Fixture("purge")
        let name = f.name
        func hl(_ args: [String]) throws -> PGCLI.Result { try f.hl(args) }
        let app = "com.example.scale"
        for args in [["init", "--encrypt"], ["--app", app, "app", "register", "--name", "A", "--share-purpose", "s", "--read-purpose", "r"],
                     ["--app", app, "request", "--share", "bodyMass", "--read", "bodyMass"],
                     ["authorize", "--app", app, "--share", "bodyMass", "--read", "bodyMass"],
                     ["save", "--app", app, "--type", "bodyMass", "--value", "123.456", "--unit", "kg", "--start", "2026-11-03T08:00:00Z"]] {
            let r = try hl(args)
            #expect(r.status == 0, "\(args): \(r.stderr)")
        }
        func pending() throws -> Bool? {
            let c = try PGTest.connection()
            defer { c.close() }
            return try c.execute("SELECT purge_pending FROM healthledger_keys WHERE ledger = $1", [.text(name)]).bool(0, 0)
        }
        // An older transaction, open across the erasure (it holds a transaction id).
        let old = try PGTest.connection()
        try old.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        try old.execute("SELECT txid_current(), count(*) FROM healthledger_keys")
        let erased = try hl(["erase", "--source", app, "--reason", "asked"])
        #expect(erased.status != 0 && erased.stderr.contains("dead row versions are still seen by older transactions"),
                "\(erased.status) \(erased.stdout)\(erased.stderr)")
        #expect(try pending() == true)
        // Erased all the same: the key is gone from the store, nothing reads the weight.
        let query = try hl(["--owner", "--json", "query", "bodyMass"])
        #expect(query.status == 0 && !query.stdout.contains("123.456"), "\(query.stdout)\(query.stderr)")
        try old.execute("COMMIT")
        old.close()
        let node = try Self.keysFileNode()
        // The next writer runs the purge due, then does its own work.
        let save = try hl(["save", "--app", app, "--type", "bodyMass", "--value", "80", "--unit", "kg", "--start", "2026-11-04T08:00:00Z"])
        #expect(save.status == 0, "\(save.stderr)")
        #expect(try pending() == false)
        #expect(try Self.keysFileNode() != node, "healthledger_keys was not rewritten")
        let verify = try hl(["verify"])
        #expect(verify.status == 0 && verify.stdout.contains("OK: the ledger is intact"), "\(verify.stdout)\(verify.stderr)")
    }
}
