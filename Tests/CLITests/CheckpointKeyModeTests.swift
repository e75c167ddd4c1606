import Foundation
import Testing
import TestSupport

/// `checkpoint` and `prove` sign with a private key that others can read
/// no more: a key file with any group or other permission is refused (as ssh refuses an
/// unprotected private key), naming the file, its mode and the fix; nothing is printed.
struct CheckpointKeyModeTests {
    static func refusal(_ path: String, mode: Int) -> String {
        "healthledger: unprotectedKey: \(path) has mode \(String(format: "%04o", mode)): a private key must be readable "
            + "by its owner alone (chmod 600 \(path))\n"
    }

    @Test func aKeyFileOthersCanReadIsRefusedNamingTheFileItsModeAndTheFix() throws {
        let (dir, _) = try TransparencyCommandTests.ledger(samples: 1)
        _ = try TransparencyCommandTests.ok(dir, ["key", "generate"])
        let key = dir.path + "/keys/checkpoint.key"
        let fm = FileManager.default
        for mode in [0o644, 0o640, 0o604, 0o620, 0o602, 0o660, 0o700 | 0o004] {
            try fm.setAttributes([.posixPermissions: mode], ofItemAtPath: key)
            for args in [["checkpoint"], ["--json", "prove", "--seq", "1"]] {
                let r = try TransparencyCommandTests.run(dir, args)
                #expect(r.status == 5, "\(args) mode \(String(mode, radix: 8))")
                #expect(r.stdout == "")
                #expect(r.stderr == Self.refusal(key, mode: mode))
            }
        }
        // --key FILE: the same rule.
        let copy = dir.url.deletingLastPathComponent().appendingPathComponent("copy.key").path
        try fm.copyItem(atPath: key, toPath: copy)
        try fm.setAttributes([.posixPermissions: 0o644], ofItemAtPath: copy)
        let given = try TransparencyCommandTests.run(dir, ["checkpoint", "--key", copy])
        #expect(given.status == 5)
        #expect(given.stderr == Self.refusal(copy, mode: 0o644))
        // The fix it names works; 0400 is as private as 0600.
        for mode in [0o600, 0o400] {
            try fm.setAttributes([.posixPermissions: mode], ofItemAtPath: key)
            let signed = try TransparencyCommandTests.run(dir, ["checkpoint"])
            #expect(signed.status == 0)
            #expect(signed.stdout.contains("\n\n— "))
        }
    }
}
