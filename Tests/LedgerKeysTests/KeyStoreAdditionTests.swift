import Foundation
import LedgerCrypto
import Testing
@testable import LedgerKeys

/// Y8: a change that only adds keys is appended to `keys.bin` as a sealed addition;
/// the store is written whole again when the additions outgrow the base or a key is
/// destroyed. An addition cut short or, last, failing its tag was never acknowledged;
/// any other changed, moved or foreign addition is refused.
@Suite struct KeyStoreAdditionTests {
    /// Bytes of an addition holding `keys` keys.
    static func additionLength(_ keys: Int) -> Int { 16 + 12 + 63 * keys + 16 }
    /// Bytes of a store written whole with `live` keys and no tombstones.
    static func wholeLength(_ live: Int) -> Int { 36 + 16 + 63 * live + 16 }

    @Test func keysAreAppendedUntilTheAdditionsOutgrowTheBase() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try KeyStoreTests.makeStore(folder)
        // The empty base (68 bytes) cannot take a 91-byte addition: written whole.
        _ = try store.key(for: scope(type: 1))
        #expect(try bytes(store.path).count == Self.wholeLength(1))
        // 131 bytes of base: one addition of one key fits, a second does not.
        _ = try store.key(for: scope(type: 2))
        #expect(try bytes(store.path).count == Self.wholeLength(1) + Self.additionLength(1))
        _ = try store.key(for: scope(type: 3))
        #expect(try bytes(store.path).count == Self.wholeLength(3))
        // Two keys at a time: 170 bytes fit in 257, 340 do not (written whole, 7 keys).
        _ = try store.prepare([scope(type: 4), scope(type: 5)])
        #expect(try bytes(store.path).count == Self.wholeLength(3) + Self.additionLength(2))
        _ = try store.prepare([scope(type: 6), scope(type: 7)])
        #expect(try bytes(store.path).count == Self.wholeLength(7))
        _ = try store.prepare([scope(type: 8)])
        _ = try store.issueIDs(through: 20)  // an addition of no keys, only the next id
        #expect(try bytes(store.path).count == Self.wholeLength(8) - 63 + Self.additionLength(1) + Self.additionLength(0))
        let rotated = try store.rotate([scope(type: 1)])[scope(type: 1)]!
        #expect(rotated.id == 21)
        let reread = try KeyStore.open(folder: store.folder, kek: countingKEK, access: .read)
        #expect(reread.nextID == 22 && reread.liveCount == 9)
        #expect(reread.currentKey(for: scope(type: 1))?.id == 21 && reread.currentKey(for: scope(type: 7))?.id == 7)
        for id: UInt64 in [1, 2, 7, 8, 21] {
            guard case .live(let key) = reread.lookup(id: id), case .live(let mine) = store.lookup(id: id) else {
                Issue.record("key \(id) not live")
                continue
            }
            #expect(key.key.bytes == mine.key.bytes && key.scope == mine.scope)
        }
        // A destruction writes the store whole: no addition (with its keys) survives it.
        let old = store.keys(where: { $0.type == 1 }).first!
        _ = try store.destroy(ids: [old.id], at: 9)
        #expect(try bytes(store.path).count == Self.wholeLength(8) + 39)
        #expect(!contains(try bytes(store.path), old.key.bytes))
        #expect(!contains(try KeyStoreTests.decryptedBody(store.path), old.key.bytes))
    }

    /// A store written before additions existed (a version 1 base, whose length Y1 fixes)
    /// is read, and its first change writes it whole as version 2: an addition after a
    /// version 1 base would make it unreadable.
    @Test func aVersion1StoreIsWrittenWholeBeforeItTakesAdditions() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try KeyStoreTests.makeStore(folder)
        let first = try store.prepare([scope(type: 1), scope(type: 2)])
        // The same contents as a version 1 file: the header's version 1, sealed again.
        let current = try bytes(store.path)
        var header = Array(current[0..<36])
        header[8] = 1
        let body = try KeyStoreTests.decryptedBody(store.path)
        let nonce = try SealNonce(bytes: header[24..<36])
        try writeFile(store.path, header + (try ChaCha20Poly1305.seal(plaintext: body, key: countingKEK.key, nonce: nonce, associatedData: header)))
        let reopened = try KeyStore.open(folder: store.folder, kek: countingKEK)
        #expect(reopened.currentKey(for: scope(type: 1))?.key.bytes == first[scope(type: 1)]!.key.bytes)
        _ = try reopened.key(for: scope(type: 3))
        let after = try bytes(store.path)
        #expect(after[8] == 2 && after.count == Self.wholeLength(3))
        let again = try KeyStore.open(folder: store.folder, kek: countingKEK, access: .read)
        #expect(again.liveCount == 3 && again.currentKey(for: scope(type: 3))?.id == 3)
    }

    /// A store with a base of five keys and three additions of one key each (keys 6, 7,
    /// 8), and the offsets where each addition begins.
    static func storeWithAdditions(_ folder: TemporaryFolder) throws -> (KeyStore, [UInt8], [Int]) {
        let store = try KeyStoreTests.makeStore(folder)
        _ = try store.prepare((1...5).map { scope(type: $0) })
        let base = Self.wholeLength(5)
        for type: UInt16 in 6...8 { _ = try store.key(for: scope(type: type)) }
        let file = try bytes(store.path)
        #expect(file.count == base + 3 * Self.additionLength(1))
        return (store, file, (0..<3).map { base + $0 * Self.additionLength(1) })
    }

    /// Opens `file` in place of the store (for writing unless `read`) and says what came of it.
    static func open(_ store: KeyStore, _ file: [UInt8], read: Bool = false) -> Result<KeyStore, KeyStoreError> {
        do {
            try writeFile(store.path, file)
            return .success(try KeyStore.open(folder: store.folder, kek: countingKEK, access: read ? .read : .write))
        } catch let error as KeyStoreError {
            return .failure(error)
        } catch {
            return .failure(.io(operation: "\(error)", path: "", errno: 0))
        }
    }

    @Test func aCutOrBrokenLastAdditionWasNeverAcknowledged() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (store, file, starts) = try Self.storeWithAdditions(folder)
        // Cut anywhere inside the last addition: keys 1–7 read, and the writer cuts it off.
        for length in starts[2]..<file.count {
            let reader = try Self.open(store, Array(file[0..<length]), read: true).get()
            #expect(reader.liveCount == 7 && reader.nextID == 8, "length \(length)")
            #expect(try bytes(store.path).count == length)  // a reader changes nothing
        }
        let writer = try Self.open(store, Array(file[0..<(file.count - 1)])).get()
        #expect(try bytes(store.path).count == starts[2])
        #expect(try writer.key(for: scope(type: 9)).id == 8)  // id 8 issued again: never acknowledged
        // The last addition's tag broken (bytes on a disk that lost power): the same.
        var broken = file
        broken[file.count - 3] ^= 0x20
        #expect(try Self.open(store, broken).get().liveCount == 7)
        #expect(try bytes(store.path).count == starts[2])
        // An addition of another store (its own base header) appended: not this store's.
        let otherFolder = try TemporaryFolder()
        defer { otherFolder.remove() }
        let (_, other, otherStarts) = try Self.storeWithAdditions(otherFolder)
        let spliced = try Self.open(store, file + Array(other[otherStarts[0]..<otherStarts[1]])).get()
        #expect(spliced.liveCount == 8 && spliced.nextID == 9)
        #expect(try bytes(store.path) == file)
    }

    @Test func aChangedMovedOrForeignAdditionBeforeTheLastIsRefused() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (store, file, starts) = try Self.storeWithAdditions(folder)
        let tampered = KeyStoreError.tampered(path: store.path)
        // Every byte of the first two additions: its length, nonce, ciphertext, tag.
        for offset in starts[0]..<starts[2] {
            var changed = file
            changed[offset] ^= 0x01
            let opened = Self.open(store, changed, read: true)
            let length = offset - starts[0] < 4 || (offset - starts[1] >= 0 && offset - starts[1] < 4)
            if length {
                // A changed length reads the rest as other additions: refused or, where
                // it now runs past the end, a tail never acknowledged — never a key more.
                #expect((try? opened.get().liveCount).map { $0 <= 6 } ?? true, "byte \(offset)")
            } else {
                #expect(opened.failure == tampered, "byte \(offset)")
            }
        }
        // The first two additions swapped: each fails its index.
        let swapped = Array(file[0..<starts[0]]) + Array(file[starts[1]..<starts[2]]) + Array(file[starts[0]..<starts[1]])
            + Array(file[starts[2]...])
        #expect(Self.open(store, swapped).failure == tampered)
        // Another store's addition in the middle.
        let otherFolder = try TemporaryFolder()
        defer { otherFolder.remove() }
        let (_, other, otherStarts) = try Self.storeWithAdditions(otherFolder)
        let foreign = Array(file[0..<starts[1]]) + Array(other[otherStarts[1]..<otherStarts[2]]) + Array(file[starts[2]...])
        #expect(Self.open(store, foreign).failure == tampered)
        #expect(try Self.open(store, file).get().liveCount == 8)
    }

    /// An addition that authenticates (only a holder of the KEK could write it) but
    /// breaks Y8's order is `malformed`, each with its reason.
    @Test func authenticAdditionsOutOfOrderAreMalformed() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try KeyStoreTests.makeStore(folder)
        _ = try store.prepare([scope(type: 1), scope(type: 2), scope(type: 3)])
        let base = try bytes(store.path)
        let header = Array(base[0..<36])
        let key = { (id: UInt64) in DataKey(id: id, scope: scope(type: 9), key: try! SealKey(bytes: [UInt8](repeating: UInt8(id), count: 32))) }
        let cases: [([DataKey], UInt64, String)] = [
            ([key(4)], 5, ""),
            ([key(3)], 5, "addition 1: key id 3 not new, ascending and below next id 5"),
            ([key(4)], 4, "addition 1: key id 4 not new, ascending and below next id 4"),
            ([key(5), key(4)], 6, "addition 1: key id 4 not new, ascending and below next id 6"),
            ([], 2, "addition 1: next id 2 below the store's 4"),
        ]
        for (keys, nextID, reason) in cases {
            let addition = try KeyStoreFile.encodeAddition(keys, nextID: nextID, header: header, index: 1, kek: countingKEK,
                                                           nonce: SealNonce(bytes: [UInt8](repeating: 3, count: 12)))
            let opened = Self.open(store, base + addition, read: true)
            if reason.isEmpty {
                #expect(try opened.get().currentKey(for: scope(type: 9))?.id == 4)
            } else {
                #expect(opened.failure == .malformed(path: store.path, reason: reason))
            }
        }
    }
}
