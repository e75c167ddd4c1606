import Foundation
import LedgerCrypto
import Testing
@testable import LedgerKeys

/// The key-encryption-key file: created new (never overwriting), 0600, exact text;
/// loaded with exact parsing; refused when missing, malformed or too open; its path from
/// `--key-file` or the environment.
@Suite struct KeyFileTests {
    /// F5: the check id.
    @Test func checkIDIsTheHashOfTheKey() {
        // python3: hashlib.sha256(b'healthledger kek id' + bytes(range(32))).hexdigest()[:16]
        #expect(countingKEK.checkID == [0x1f, 0x5f, 0x43, 0xe2, 0x72, 0x32, 0x18, 0x11])
        #expect("\(countingKEK)" == "KeyEncryptionKey(check 1f5f43e272321811)")
    }

    /// F1: the text.
    @Test func fileTextIsPrefixHexAndLineFeed() {
        let text = String(decoding: KeyEncryptionKey.fileBytes(of: countingKEK.key), as: UTF8.self)
        #expect(text == "healthledger-kek-v1:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n")
    }

    @Test func createWritesA0600FileThatLoadsBack() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.join("owner.kek")
        let created = try KeyEncryptionKey.create(at: path)
        #expect(try mode(path) == 0o600)
        let text = try bytes(path)
        #expect(text.count == 85)
        #expect(text.starts(with: Array("healthledger-kek-v1:".utf8)))
        let loaded = try KeyEncryptionKey.load(from: path)
        #expect(loaded.key.bytes == created.key.bytes)
        #expect(loaded.checkID == created.checkID)
        #expect(text == KeyEncryptionKey.fileBytes(of: created.key))
    }

    /// F2: never overwritten, not through a symbolic link.
    @Test func createNeverOverwrites() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.join("owner.kek")
        let first = try KeyEncryptionKey.create(at: path)
        let before = try bytes(path)
        #expect(error { try KeyEncryptionKey.create(at: path) } == .keyFileExists(path: path))
        #expect(try bytes(path) == before)
        #expect(try KeyEncryptionKey.load(from: path).key.bytes == first.key.bytes)
        // Not through a symbolic link either, dangling or not.
        let link = folder.join("link.kek")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: folder.join("elsewhere"))
        #expect(error { try KeyEncryptionKey.create(at: link) } == .keyFileExists(path: link))
        #expect(!FileManager.default.fileExists(atPath: folder.join("elsewhere")))
    }

    @Test func missingIsSaidPlainly() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.join("absent.kek")
        #expect(error { try KeyEncryptionKey.load(from: path) } == .keyFileMissing(path: path))
        #expect(KeyStoreError.keyFileMissing(path: path).description
                == "key file \(path) is missing: without it the ledger's health data cannot be read")
    }

    /// F3: group or other permissions refused.
    @Test func tooOpenIsRefused() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.join("owner.kek")
        _ = try KeyEncryptionKey.create(at: path)
        for bits in [0o644, 0o640, 0o604, 0o660, 0o700 | 0o010] {
            try setMode(path, bits)
            #expect(error { try KeyEncryptionKey.load(from: path) } == .unprotected(path: path, mode: UInt32(bits)))
        }
        try setMode(path, 0o400)
        #expect(error { try KeyEncryptionKey.load(from: path) } == nil)
        #expect(KeyStoreError.unprotected(path: "k", mode: 0o644).description
                == "k has mode 0644: refused, group and others must have no access (chmod go-rwx)")
    }

    /// F1 and F3: exact parsing; not a regular file.
    @Test func malformedTextIsRefused() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.join("k")
        let good = Array("healthledger-kek-v1:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n".utf8)
        #expect(try KeyEncryptionKey.parse(good, path: path).bytes == countingKEK.key.bytes)
        let cases: [(String, String)] = [
            ("healthledger-kek-v1:000102030405060708090A0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n",
             "character 41 onwards is not 64 lower-case hex digits"),
            ("healthledger-kek-v1:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
             "84 bytes, not 85: the key is cut short"),
            ("healthledger-kek-v1:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\r\n",
             "more than 85 bytes: text after the key"),
            ("healthledger-kek-v1:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n\n",
             "more than 85 bytes: text after the key"),
            ("healthledger-kek-v1:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f0\n",
             "more than 85 bytes: text after the key"),
            ("healthledger-kek-v1:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1 \n",
             "character 83 onwards is not 64 lower-case hex digits"),
            ("healthledger-kek-v1:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1fx",
             "the 64 hex digits are not followed by exactly one line feed"),
            ("healthledger-kek-v2:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n",
             "it does not begin with \"healthledger-kek-v1:\""),
            ("", "it does not begin with \"healthledger-kek-v1:\""),
        ]
        for (text, reason) in cases {
            try writeFile(path, Array(text.utf8))
            #expect(error { try KeyEncryptionKey.load(from: path) } == .keyFileMalformed(path: path, reason: reason), "\(text)")
        }
        // A FIFO is refused without blocking.
        let fifo = folder.join("fifo")
        #expect(unsafe mkfifo(fifo, 0o600) == 0)
        #expect(error { try KeyEncryptionKey.load(from: fifo) } == .keyFileMalformed(path: fifo, reason: "not a regular file"))
        // A folder is not a key file.
        try FileManager.default.createDirectory(atPath: folder.join("d"), withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        #expect(error { try KeyEncryptionKey.load(from: folder.join("d")) }
                == .keyFileMalformed(path: folder.join("d"), reason: "not a regular file"))
    }

    /// F4: --key-file, then HEALTHLEDGER_KEY_FILE, empty as absent.
    @Test func pathFromOptionThenEnvironment() throws {
        #expect(try KeyEncryptionKey.resolvePath(keyFileOption: "/a", environment: "/b") == "/a")
        #expect(try KeyEncryptionKey.resolvePath(keyFileOption: nil, environment: "/b") == "/b")
        #expect(try KeyEncryptionKey.resolvePath(keyFileOption: "", environment: "/b") == "/b")
        #expect(error { try KeyEncryptionKey.resolvePath(keyFileOption: nil, environment: nil) } == .keyFileNotGiven)
        #expect(error { try KeyEncryptionKey.resolvePath(keyFileOption: nil, environment: "") } == .keyFileNotGiven)
        #expect(KeyStoreError.keyFileNotGiven.description
                == "no key file: pass --key-file PATH or set HEALTHLEDGER_KEY_FILE (the file `init --encrypt --key-file PATH` wrote)")
        #expect(KeyEncryptionKey.environmentVariable == "HEALTHLEDGER_KEY_FILE")
    }
}

/// UTC months: the calendar arithmetic at its edges.
@Suite struct UTCMonthTests {
    @Test func monthsOfInstants() throws {
        let second: Int64 = 1_000_000_000
        let day = 86_400 * second
        #expect(UTCMonth(containingNanoseconds: 0) == (try UTCMonth(year: 1970, month: 1)))
        #expect(UTCMonth(containingNanoseconds: -1) == (try UTCMonth(year: 1969, month: 12)))
        #expect(UTCMonth(containingNanoseconds: 31 * day - 1) == (try UTCMonth(year: 1970, month: 1)))
        #expect(UTCMonth(containingNanoseconds: 31 * day) == (try UTCMonth(year: 1970, month: 2)))
        // 2024-02-29T23:59:59.999999999Z and 2024-03-01T00:00:00Z (1709251200 s).
        #expect(UTCMonth(containingNanoseconds: 1_709_251_200 * second - 1) == (try UTCMonth(year: 2024, month: 2)))
        #expect(UTCMonth(containingNanoseconds: 1_709_251_200 * second) == (try UTCMonth(year: 2024, month: 3)))
        // 2026-12-06T07:30:00Z (1796542200 s).
        #expect(UTCMonth(containingNanoseconds: 1_796_542_200 * second).description == "2026-12")
        #expect(UTCMonth(containingNanoseconds: .min).description == "1677-09")
        #expect(UTCMonth(containingNanoseconds: .max).description == "2262-04")
        #expect(try UTCMonth(year: 2026, month: 12).index == 2026 * 12 + 11)
        #expect(error { try UTCMonth(year: 2026, month: 13) } == .badMonth(year: 2026, month: 13))
        #expect(error { try UTCMonth(year: 2026, month: 0) } == .badMonth(year: 2026, month: 0))
        #expect(error { try UTCMonth(year: -1, month: 1) } == .badMonth(year: -1, month: 1))
    }

    /// A month's first day and the month of a day agree, proleptic Gregorian on both
    /// sides (no Julian switch in 1582), from year 1 to 9999 and past 1970 both ways.
    @Test func firstDaysOfMonthsReadBackAsTheirMonths() throws {
        #expect(try UTCMonth(year: 1970, month: 1).firstDaySince1970 == 0)
        #expect(try UTCMonth(year: 2024, month: 3).firstDaySince1970 == 19_783)  // 1709251200 s / 86400
        #expect(try UTCMonth(year: 1, month: 1).firstDaySince1970 == -719_162)
        #expect(try UTCMonth(year: 1500, month: 3).firstDaySince1970 == -171_605)  // proleptic: no ten-day shift
        for year in [1, 4, 100, 400, 1500, 1582, 1600, 1900, 1969, 1970, 2000, 2024, 2100, 9999] {
            for month in 1...12 {
                let m = try UTCMonth(year: year, month: month)
                #expect(UTCMonth(daysSince1970: m.firstDaySince1970) == m, "\(m)")
                #expect(UTCMonth(daysSince1970: m.firstDaySince1970 - 1).index == m.index - 1, "the day before \(m)")
            }
        }
    }

    @Test func sourceIDs() throws {
        let id = (0..<16).map { UInt8($0 * 3) }
        let source = try KeySource(kind: .importRun, id: id)
        #expect(source.id == id)
        #expect("\(source)" == "import:000306090c0f1215181b1e2124272a2d")
        #expect(KeySource.app(ordinal: 0x0102).id == [2, 1] + [UInt8](repeating: 0, count: 14))
        #expect(error { try KeySource(kind: .app, id: [1, 2, 3]) } == .badSourceID(byteCount: 3))
    }
}
