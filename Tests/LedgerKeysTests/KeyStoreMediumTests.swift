import Foundation
import Synchronization
import Testing
@testable import LedgerKeys

/// The key store kept in a `KeyStoreMedium` instead of a folder (a PostgreSQL ledger's
/// row, rule P6), here an in-memory one that records what it was asked: the same
/// sealed bytes a folder's `keys.bin` holds, created once, replaced whole on every
/// change, and — only after keys were destroyed — asked to purge its earlier versions;
/// a purge that failed stays due until the next writer's open runs it.
@Suite struct KeyStoreMediumTests {
    /// A medium in memory: its bytes, how many writes, how many purges.
    final class MemoryMedium: KeyStoreMedium, Sendable {
        let state = Mutex<(bytes: [UInt8]?, writes: Int, purges: Int, failPurge: Bool, pending: Bool)>((nil, 0, 0, false, false))
        var name: String { "memory" }
        func create(_ bytes: [UInt8]) throws(KeyStoreError) {
            try state.withLock { (s: inout (bytes: [UInt8]?, writes: Int, purges: Int, failPurge: Bool, pending: Bool)) throws(KeyStoreError) in
                guard s.bytes == nil else { throw .storeExists(path: name) }
                s.bytes = bytes
                s.writes += 1
            }
        }
        func read() throws(KeyStoreError) -> [UInt8] {
            guard let bytes = state.withLock({ $0.bytes }) else { throw .storeMissing(path: name) }
            return bytes
        }
        func replace(_ bytes: [UInt8], destroying: Bool) throws(KeyStoreError) {
            try state.withLock { (s: inout (bytes: [UInt8]?, writes: Int, purges: Int, failPurge: Bool, pending: Bool)) throws(KeyStoreError) in
                guard s.bytes != nil else { throw .storeMissing(path: name) }
                s.bytes = bytes
                s.writes += 1
                s.pending = s.pending || destroying
            }
        }
        func version() -> [Int]? { state.withLock { [$0.writes] } }
        func purgeEarlierVersions() throws(KeyStoreError) {
            try state.withLock { (s: inout (bytes: [UInt8]?, writes: Int, purges: Int, failPurge: Bool, pending: Bool)) throws(KeyStoreError) in
                s.purges += 1
                if s.failPurge { throw .io(operation: "purge", path: name, errno: EIO) }
                s.pending = false
            }
        }
        func purgeIfPending() throws(KeyStoreError) {
            if state.withLock({ $0.pending }) { try purgeEarlierVersions() }
        }
    }

    @Test func aStoreInAMediumWritesWholeAndPurgesOnlyAfterADestruction() throws {
        let medium = MemoryMedium()
        #expect(throws: KeyStoreError.storeMissing(path: "memory")) { try KeyStore.open(medium: medium, kek: countingKEK) }
        let store = try KeyStore.create(medium: medium, kek: countingKEK)
        #expect(throws: KeyStoreError.storeExists(path: "memory")) { try KeyStore.create(medium: medium, kek: countingKEK) }
        let a = scope(source: 1, type: 2, year: 2026, month: 3), b = scope(source: 1, type: 2, year: 2026, month: 4)
        let keys = try store.prepare([a, b])
        #expect(medium.version() == [2] && medium.state.withLock { $0.purges } == 0)
        // The bytes are the sealed store: no key in the clear; they open as a folder's would.
        let bytes = try medium.read()
        for key in keys.values { #expect(bytes.firstRange(of: key.key.bytes) == nil) }
        #expect(try KeyStoreFile.decode(bytes, kek: countingKEK, path: "memory").0.live.count == 2)
        let reader = try KeyStore.open(medium: medium, kek: countingKEK, access: .read)
        #expect(reader.currentKey(for: a)?.id == keys[a]?.id)
        #expect(throws: KeyStoreError.readOnly) { try reader.prepare([scope(source: 2, type: 2, year: 2026, month: 3)]) }

        // Destroying: one write, then one purge; the key is in no later bytes.
        let victim = try #require(keys[a])
        #expect(try store.destroy(ids: [victim.id], at: 7).map(\.id) == [victim.id])
        #expect(medium.version() == [3] && medium.state.withLock { $0.purges } == 1)
        #expect(try medium.read().firstRange(of: victim.key.bytes) == nil)
        guard case .destroyed = try KeyStore.open(medium: medium, kek: countingKEK).lookup(id: victim.id) else {
            Issue.record("the key is not a tombstone")
            return
        }
        // Nothing destroyed: no purge. A purge that fails is told after the destruction.
        #expect(try store.destroy(ids: [victim.id], at: 8).isEmpty)
        #expect(medium.state.withLock { $0.purges } == 1)
        medium.state.withLock { $0.failPurge = true }
        #expect(throws: KeyStoreError.io(operation: "purge", path: "memory", errno: EIO)) {
            try store.destroy(at: 9) { $0 == b }
        }
        #expect(medium.state.withLock { $0.pending })
        // A reader leaves the purge due; the next writer to open the store runs it.
        _ = try KeyStore.open(medium: medium, kek: countingKEK, access: .read)
        #expect(medium.state.withLock { $0.pending && $0.purges == 2 })
        medium.state.withLock { $0.failPurge = false }
        guard case .destroyed = try KeyStore.open(medium: medium, kek: countingKEK).lookup(id: try #require(keys[b]).id) else {
            Issue.record("a failed purge undid the destruction")
            return
        }
        #expect(medium.state.withLock { !$0.pending && $0.purges == 3 })
    }
}
