import Foundation
import Testing
import TestSupport

/// `encrypt SRC DST` (issue 32): a plain ledger — an import, an aborted import, an
/// app's saves and a deletion — copied into a new encrypted one answers every read as
/// the source does, holds none of its content in any file, begins with an event naming
/// the source and its chain head, keeps the events' times, and verifies; the source is
/// untouched; what it refuses changes nothing.
@Suite struct EncryptCommandTests {
    typealias E = EncryptedLedgerCommandTests

    @Test func aPlainLedgerCopiedIntoAnEncryptedOneAnswersAsItDoes() throws {
        let dir = TemporaryDirectory("encrypt")
        try SmallExport.write(in: dir.path)
        try SmallExport.write(String(SmallExport.xml.prefix(3000)), named: "broken.xml", in: dir.path)
        #expect(try E.run(dir, "P", ["import-apple-health", "export.xml"]).status == 0)
        #expect(try E.run(dir, "P", ["import-apple-health", "broken.xml"]).status != 0)  // aborted, in the log
        try E.saveWeight(dir, "P", key: nil)
        let weight = "0D15EA5E-0000-4000-8000-000000000032"
        #expect(try E.run(dir, "P", ["delete", "--owner", weight]).status == 0)
        let sourceLog = try Data(contentsOf: URL(fileURLWithPath: dir.path + "/P/ledger.log"))
        let head = try E.run(dir, "P", ["--json", "stats"]).stdout

        let encrypted = try E.run(dir, "P", ["--json", "--key-file", dir.path + "/kek", "encrypt", dir.path + "/P", dir.path + "/E"])
        #expect(encrypted.status == 0, "\(encrypted.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(encrypted.stdout.utf8)) as? [String: Any])
        let sourceHead = try #require(report["sourceChainHead"] as? String)
        #expect(head.contains(sourceHead), "\(head)")
        #expect((try FileManager.default.attributesOfItem(atPath: dir.path + "/kek")[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        // The source is untouched.
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.path + "/P/ledger.log")) == sourceLog)

        // Every read answers as the source's.
        let reads: [[String]] = [
            ["--owner", "query", "bodyMass", "--json"], ["--owner", "query", "heartRateVariabilitySDNN", "--json"],
            ["--owner", "query", "HKCorrelationTypeIdentifierBloodPressure", "--json"], ["--owner", "query", "HKWorkoutTypeIdentifier", "--json"],
            ["--owner", "activity", "--from", "2019-05-01", "--to", "2019-05-31", "--json"], ["--owner", "profile", "--json"],
            ["--owner", "changes", "bodyMass", "--json"], ["audit", weight], ["characteristic", "get", "dateOfBirth"],
        ]
        for args in reads {
            let e = try E.run(dir, "E", args, key: "kek"), p = try E.run(dir, "P", args)
            #expect(e.status == p.status && e.status == 0, "\(args): \(e.stderr) | \(p.stderr)")
            if args.first == "audit" {
                // Sequence numbers move by one (the first event); what happened, by whom, does not.
                let strip = { (s: String) in s.split(separator: "\n").map { $0.split(separator: "\t").dropFirst().joined(separator: "\t") } }
                #expect(strip(e.stdout) == strip(p.stdout), "\(e.stdout) | \(p.stdout)")
            } else if args.contains("changes") {
                #expect(e.stdout.split(separator: "\n").dropLast() == p.stdout.split(separator: "\n").dropLast(), "\(args)")
            } else {
                #expect(e.stdout == p.stdout, "\(args)")
            }
        }
        // Its first event names the source; every other event keeps its time and kind.
        let eLog = try E.run(dir, "E", ["log"], key: "kek").stdout.split(separator: "\n")
        let pLog = try E.run(dir, "P", ["log"]).stdout.split(separator: "\n")
        #expect(eLog.first?.contains("encryptedFrom") == true && eLog.first?.contains(sourceHead) == true, "\(eLog.first ?? "")")
        let columns = { (line: Substring) in line.split(separator: "\t").dropFirst().prefix(2).joined(separator: "\t") }
        // (A save whose samples fall under several key scopes is one record per scope: runs collapse.)
        let runs = { (lines: [String]) in lines.enumerated().filter { $0.offset == 0 || lines[$0.offset - 1] != $0.element }.map(\.element) }
        #expect(runs(eLog.dropFirst().map(columns)) == runs(pLog.map(columns)))
        #expect(eLog.count > pLog.count)
        #expect(eLog.contains { $0.contains("[not applied: import aborted]") })
        // Nothing of the content in any file of the copy; it verifies.
        for (name, bytes) in try E.files(dir.path + "/E") {
            for (what, needle) in E.needles + [("birth date", Array("1985-03-14".utf8))] {
                #expect(bytes.firstRange(of: needle) == nil, "\(name) holds the \(what)")
            }
        }
        let verify = try E.run(dir, "E", ["verify"], key: "kek")
        #expect(verify.status == 0 && verify.stdout.contains("OK: the ledger is intact"), "\(verify.stdout)\(verify.stderr)")

        // Refused, changing nothing: an encrypted source, a destination holding a
        // ledger, a key file that exists, no key file.
        let again = try E.run(dir, "P", ["--key-file", dir.path + "/kek2", "encrypt", dir.path + "/E", dir.path + "/F"])
        #expect(again.status == 2 && again.stderr.contains("is encrypted already"), "\(again.stderr)")
        let exists = try E.run(dir, "P", ["--key-file", dir.path + "/kek3", "encrypt", dir.path + "/P", dir.path + "/E"])
        #expect(exists.status == 5 && exists.stderr.contains("ledgerExists"), "\(exists.stderr)")
        let keyThere = try E.run(dir, "P", ["--key-file", dir.path + "/kek", "encrypt", dir.path + "/P", dir.path + "/G"])
        #expect(keyThere.status != 0 && !FileManager.default.fileExists(atPath: dir.path + "/G/ledger.log"), "\(keyThere.stderr)")
        let noKey = try E.run(dir, "P", ["encrypt", dir.path + "/P", dir.path + "/H"])
        #expect(noKey.status == 2 && noKey.stderr.contains("encrypt needs --key-file"), "\(noKey.stderr)")
        for name in ["F", "H", "kek2", "kek3"] { #expect(!FileManager.default.fileExists(atPath: dir.path + "/" + name), "\(name)") }
    }
}
