import Foundation
@testable import LedgerCore
import LedgerKeys
import LedgerLog
import Testing
import TestSupport

/// A key store that cannot be read says how to take it (issue 32): out of reach (a
/// database connection, an I/O error) is a failure to try again, not damage; bytes
/// that do not open are damage; another key-encryption key, the owner's to mend.
@Suite struct KeyRingTroubleTests {
    /// A medium whose reads fail as `failure`, or hand out `bytes`.
    struct Medium: KeyStoreMedium {
        let failure: KeyStoreError?
        let bytes: [UInt8]
        var name: String { "medium" }
        func create(_ bytes: [UInt8]) throws(KeyStoreError) { throw .io(operation: "create", path: name, errno: EROFS) }
        func read() throws(KeyStoreError) -> [UInt8] {
            if let failure { throw failure }
            return bytes
        }
        func replace(_ bytes: [UInt8], destroying: Bool) throws(KeyStoreError) { throw .io(operation: "write", path: name, errno: EROFS) }
        func version() -> [Int]? { nil }
        func purgeEarlierVersions() throws(KeyStoreError) {}
        func purgeIfPending() throws(KeyStoreError) {}
    }

    @Test func aStoreOutOfReachIsAFailureNotDamage() throws {
        let dir = TemporaryDirectory("trouble")
        try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
        let kek = try KeyEncryptionKey.create(at: dir.path + "/kek")
        func trouble(_ medium: Medium) -> KeyStoreTrouble? {
            guard case .storeUnreadable(_, let trouble) = LedgerKeyRing(medium: medium, kek: kek).lookup(keyId: 1) else { return nil }
            return trouble
        }
        #expect(trouble(Medium(failure: .io(operation: "postgres connect (connection refused)", path: "medium", errno: EIO), bytes: [])) == .unreachable)
        #expect(trouble(Medium(failure: nil, bytes: Array("not a key store".utf8))) == .damaged)
        #expect(trouble(Medium(failure: .wrongKey(path: "medium"), bytes: [])) == .ownersToMend)
        // (How the front ends report each: ErrorTableTests.)
    }
}
