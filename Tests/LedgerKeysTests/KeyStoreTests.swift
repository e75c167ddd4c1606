import Foundation
import LedgerCrypto
import Testing
@testable import LedgerKeys

/// The key store: round trips, durability order, erasure leaving only tombstones,
/// every damaged or cut file a typed error, permissions, leftovers of a killed write.
@Suite struct KeyStoreTests {
    /// A store in a fresh folder's `keys/`, with the counting KEK.
    static func makeStore(_ folder: TemporaryFolder) throws -> KeyStore {
        try KeyStore.create(folder: folder.join("keys"), kek: countingKEK)
    }

    @Test func roundTripOfManyScopes() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try Self.makeStore(folder)
        var scopes: [KeyScope] = []
        for source in 1...3 as ClosedRange<UInt64> {
            for type in 0..<10 as Range<UInt16> {
                for month in 1...12 { scopes.append(scope(source: source, type: type, year: 2025, month: month)) }
            }
        }
        scopes.append(scope(source: 9, kind: .importRun))
        let keys = try store.prepare(scopes + scopes)  // repeated scopes: one key each
        #expect(keys.count == 361)
        #expect(Set(keys.values.map(\.id)) == Set(1...361))
        // In the order first asked for.
        #expect(keys[scopes[0]]?.id == 1 && keys[scopes[360]]?.id == 361)
        let reopened = try KeyStore.open(folder: folder.join("keys"), kek: countingKEK)
        #expect(reopened.nextID == 362)
        #expect(reopened.liveCount == 361)
        for scope in scopes {
            let key = try #require(reopened.currentKey(for: scope))
            #expect(key.id == keys[scope]!.id && key.key.bytes == keys[scope]!.key.bytes && key.scope == scope)
            guard case .live(let byID) = reopened.lookup(id: key.id) else { Issue.record("id \(key.id) not live"); continue }
            #expect(byID.scope == scope && byID.key.bytes == key.key.bytes)
        }
        #expect({ if case .unknown = reopened.lookup(id: 362) { true } else { false } }())
        #expect({ if case .unknown = reopened.lookup(id: 0) { true } else { false } }())
        // 36-byte header, 16-byte body head, 63 bytes a key, 16-byte tag.
        #expect(try bytes(reopened.path).count == 36 + 16 + 361 * 63 + 16)
    }

    @Test func existingScopesWriteNothing() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try Self.makeStore(folder)
        let first = try store.key(for: scope())
        let file = try bytes(store.path)
        let again = try store.key(for: scope())
        #expect(again.id == first.id && again.key.bytes == first.key.bytes)
        #expect(try bytes(store.path) == file)  // a write would have a fresh nonce
        #expect(try store.prepare([scope()]).count == 1)
        #expect(try bytes(store.path) == file)
    }

    @Test func wrongKeyIsNotTampering() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try Self.makeStore(folder)
        _ = try store.key(for: scope())
        let other = KeyEncryptionKey(key: try SealKey.random())
        #expect(error { try KeyStore.open(folder: store.folder, kek: other) } == .wrongKey(path: store.path))
        #expect(KeyStoreError.wrongKey(path: "k").description == "key store k was sealed under another key file: wrong key file")
    }

    /// A small store: two keys and a tombstone (36 + 16 + 2·63 + 39 + 16 = 233 bytes).
    static func smallStoreBytes(_ folder: TemporaryFolder) throws -> [UInt8] {
        let store = try makeStore(folder)
        let keys = try store.prepare([scope(type: 1), scope(type: 2), scope(type: 3)])
        _ = try store.destroy(ids: [keys[scope(type: 2)]!.id], at: 1_796_542_200_000_000_000)
        let file = try bytes(store.path)
        #expect(file.count == 233)
        return file
    }

    /// Opens `file` as a store in a fresh folder, mode 0600 in 0700.
    static func open(_ file: [UInt8], in folder: TemporaryFolder, name: String) throws -> (KeyStoreError?, String) {
        let keys = folder.join(name)
        try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try writeFile(keys + "/keys.bin", file)
        defer { try? FileManager.default.removeItem(atPath: keys) }
        return (error { try KeyStore.open(folder: keys, kek: countingKEK) }, keys + "/keys.bin")
    }

    /// Y1: each header field's refusal, in the reader's order, for every byte.
    @Test func everyFlippedByteIsATypedError() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try Self.smallStoreBytes(folder)
        #expect(try Self.open(file, in: folder, name: "good").0 == nil)
        for offset in file.indices {
            for mask: UInt8 in [0x01, 0x80, 0xff] {
                var damaged = file
                damaged[offset] ^= mask
                let (failure, path) = try Self.open(damaged, in: folder, name: "k\(offset)-\(mask)")
                let expected: KeyStoreError
                switch offset {
                case 0..<8: expected = .notAKeyStore(path: path)
                case 8..<10:
                    expected = .unknownVersion(path: path, version: UInt16(damaged[8]) | UInt16(damaged[9]) << 8)
                case 10..<12: expected = .tampered(path: path)
                case 12..<16:
                    let n = (12..<16).reduce(0) { $0 | Int(damaged[$1]) << (8 * ($1 - 12)) }
                    expected = 36 + n + 16 > file.count ? .truncated(path: path, length: file.count, expected: 36 + n + 16)
                                                         : .tampered(path: path)
                case 16..<24: expected = .wrongKey(path: path)
                default: expected = .tampered(path: path)
                }
                #expect(failure == expected, "byte \(offset) ^ \(mask)")
            }
        }
    }

    /// Y1: shorter is truncated, longer tampered.
    @Test func everyTruncationIsATypedError() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try Self.smallStoreBytes(folder)
        for length in 0..<file.count {
            let (failure, path) = try Self.open(Array(file[0..<length]), in: folder, name: "t\(length)")
            let expected = length < 36 ? 52 : 233
            #expect(failure == .truncated(path: path, length: length, expected: expected), "length \(length)")
        }
        // Longer: bytes after the base are additions (Y8); a few stray bytes are one cut
        // short, never acknowledged (KeyStoreAdditionTests).
        #expect(try Self.open(file + [0], in: folder, name: "longer").0 == nil)
        let (other, otherPath) = try Self.open(Array("not a key store at all".utf8), in: folder, name: "other")
        #expect(other == .notAKeyStore(path: otherPath))
    }

    /// Y2: a body that authenticates but breaks a rule (only a writer with the KEK could
    /// make one) is `malformed`, each rule with its reason.
    @Test func authenticBadBodiesAreMalformed() throws {
        let nonce = try SealNonce(bytes: [UInt8](repeating: 7, count: 12))
        func body(_ next: UInt64, _ entries: [(UInt64, UInt8)], tombstones: [UInt64] = [], extra: [UInt8] = []) -> [UInt8] {
            var out: [UInt8] = []
            ByteWriter.append(next, to: &out)
            ByteWriter.append(UInt32(entries.count), to: &out)
            ByteWriter.append(UInt32(tombstones.count), to: &out)
            for (id, kind) in entries {
                ByteWriter.append(id, to: &out)
                out += [kind] + [UInt8](repeating: 0, count: 22) + [UInt8](repeating: 9, count: 32)
            }
            for id in tombstones {
                ByteWriter.append(id, to: &out)
                out += [1] + [UInt8](repeating: 0, count: 22) + [UInt8](repeating: 0, count: 8)
            }
            return out + extra
        }
        func sealedFile(_ body: [UInt8]) throws -> [UInt8] {
            let header = KeyStoreFile.header(ciphertextCount: UInt32(body.count), kek: countingKEK, nonce: nonce)
            return header + (try ChaCha20Poly1305.seal(plaintext: body, key: countingKEK.key, nonce: nonce, associatedData: header))
        }
        let cases: [([UInt8], String)] = [
            (body(3, [(1, 1), (2, 1)]), ""),
            (body(2, [(1, 1), (2, 1)]), "live key id 2 outside 1..<2"),
            (body(3, [(2, 1), (1, 1)]), "key id 1 after 2: not ascending"),
            (body(3, [(0, 1)]), "key id 0 after 0: not ascending"),
            (body(3, [(1, 4)]), "source kind 4 is none of 1 (app), 2 (import), 3 (imported app)"),
            (body(3, [(1, 3), (2, 1)]), ""),
            (body(3, [(1, 1)], tombstones: [1]), "key id 1 both live and destroyed"),
            (body(3, [(1, 1)], tombstones: [5]), "destroyed key id 5 outside 1..<3"),
            (body(3, [(1, 1)], extra: [0]), "1 keys and 0 tombstones need 63 bytes; 64 follow"),
            (body(0, []), "next id 0"),
            (Array(body(3, [])[0..<15]), "a body of 15 bytes is shorter than its 16-byte head"),
        ]
        for (body, reason) in cases {
            let file = try sealedFile(body)
            let decoded = Result { () throws(KeyStoreError) in try KeyStoreFile.decode(file, kek: countingKEK, path: "p") }
            if reason.isEmpty {
                #expect(try decoded.get().0.live.count == 2)
            } else {
                #expect(decoded.failure == .malformed(path: "p", reason: reason))
            }
        }
    }

    /// Y4: a tombstone, never a key byte; Y5: gone from the file on return.
    @Test func destroyedKeysLeaveOnlyTombstones() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try Self.makeStore(folder)
        let a = scope(source: 1, type: 5), b = scope(source: 2, type: 5), c = scope(source: 1, type: 6)
        let keys = try store.prepare([a, b, c])
        let victim = keys[a]!
        let bodyBefore = try Self.decryptedBody(store.path)
        #expect(contains(bodyBefore, victim.key.bytes))  // the scan finds a key that is there
        #expect(!(try Self.folderBytes(store.folder).contains { contains($0, victim.key.bytes) }))  // sealed at rest

        let destroyed = try store.destroy(ids: [victim.id, 999], at: 42)
        #expect(destroyed == [Tombstone(id: victim.id, scope: a, destroyedAt: 42)])
        for file in try Self.folderBytes(store.folder) { #expect(!contains(file, victim.key.bytes)) }
        let body = try Self.decryptedBody(store.path)
        #expect(!contains(body, victim.key.bytes))
        #expect(contains(body, keys[b]!.key.bytes) && contains(body, keys[c]!.key.bytes))
        let reopened = try KeyStore.open(folder: store.folder, kek: countingKEK)
        guard case .destroyed(let tombstone) = reopened.lookup(id: victim.id) else {
            Issue.record("not a tombstone")
            return
        }
        #expect(tombstone == Tombstone(id: victim.id, scope: a, destroyedAt: 42))
        #expect(reopened.tombstones == [tombstone])
        #expect(reopened.liveCount == 2)
        #expect(reopened.currentKey(for: a) == nil)
        // Destroying it again destroys nothing and writes nothing.
        let file = try bytes(store.path)
        #expect(try reopened.destroy(ids: [victim.id], at: 43) == [])
        #expect(try bytes(store.path) == file)
    }

    @Test func erasuresBySourceTypeAndAll() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try Self.makeStore(folder)
        let scopes = [scope(source: 1, type: 5), scope(source: 2, type: 5), scope(source: 1, type: 6), scope(source: 3, type: 7)]
        let keys = try store.prepare(scopes)
        let source1 = KeySource.app(ordinal: 1)
        #expect(try store.destroy(at: 1, where: { $0.source == source1 }).map(\.id) == [keys[scopes[0]]!.id, keys[scopes[2]]!.id])
        #expect(try store.destroy(at: 2, where: { $0.type == 5 }).map(\.id) == [keys[scopes[1]]!.id])
        #expect(try store.destroy(at: 3, where: { _ in true }).map(\.id) == [keys[scopes[3]]!.id])
        #expect(store.liveCount == 0)
        #expect(store.tombstones.map(\.destroyedAt) == [1, 2, 1, 3])
        let reopened = try KeyStore.open(folder: store.folder, kek: countingKEK)
        #expect(reopened.liveCount == 0 && reopened.tombstones.count == 4)
        // A scope erased may be written again: under a new key, a new id.
        #expect(try reopened.key(for: scopes[0]).id == 5)
    }

    /// Y3: the current key of a scope is its highest live id.
    @Test func rotationKeepsTheOldKeyUntilDestroyed() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try Self.makeStore(folder)
        let month = scope(month: 3)
        let old = try store.key(for: month)
        let new = try #require(try store.rotate([month])[month])
        #expect(new.id == old.id + 1)
        #expect(store.currentKey(for: month)?.id == new.id)
        #expect(store.keys(where: { $0 == month }).map(\.id) == [old.id, new.id])
        let reopened = try KeyStore.open(folder: store.folder, kek: countingKEK)
        #expect(reopened.currentKey(for: month)?.id == new.id)
        #expect(try reopened.destroy(ids: [old.id], at: 5).map(\.id) == [old.id])
        #expect(reopened.currentKey(for: month)?.id == new.id)
        // Destroying the current key of a scope with an older live one falls back to it.
        let newer = try #require(try reopened.rotate([month])[month])
        #expect(try reopened.destroy(ids: [newer.id], at: 6).count == 1)
        #expect(reopened.currentKey(for: month)?.id == new.id)
    }

    /// Y3: ids are never issued twice, across destruction and reopening.
    @Test func idsAreNeverReused() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try Self.makeStore(folder)
        let scopes = (1...5).map { scope(type: UInt16($0)) }
        _ = try store.prepare(scopes)
        _ = try store.destroy(at: 9, where: { _ in true })
        let reopened = try KeyStore.open(folder: store.folder, kek: countingKEK)
        #expect(reopened.nextID == 6)
        #expect(try reopened.key(for: scopes[0]).id == 6)
        _ = try reopened.destroy(ids: [6], at: 10)
        #expect(try KeyStore.open(folder: store.folder, kek: countingKEK).key(for: scopes[0]).id == 7)
    }

    /// Y6: a leftover `.new` is removed by a writer, left by a reader.
    @Test func leftoverNewFileOfAKilledWriteIsRemoved() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try Self.makeStore(folder)
        let kept = try store.key(for: scope(type: 1))
        // A write killed after its `.new` was written whole, before the rename: a store
        // with a key never acknowledged.
        let other = try TemporaryFolder()
        defer { other.remove() }
        let ahead = try KeyStore.create(folder: other.join("keys"), kek: countingKEK)
        _ = try ahead.prepare([scope(type: 1), scope(type: 2)])
        let newPath = store.folder + "/keys.bin.new"
        try writeFile(newPath, try bytes(ahead.path))
        // A reader leaves it alone; the writer removes it and opens the old store.
        let reader = try KeyStore.open(folder: store.folder, kek: countingKEK, access: .read)
        #expect(FileManager.default.fileExists(atPath: newPath))
        #expect(reader.liveCount == 1)
        #expect(error { try reader.key(for: scope(type: 2)) } == .readOnly)
        let writer = try KeyStore.open(folder: store.folder, kek: countingKEK)
        #expect(!FileManager.default.fileExists(atPath: newPath))
        #expect(writer.liveCount == 1 && writer.currentKey(for: scope(type: 1))?.key.bytes == kept.key.bytes)
        // A half-written one too.
        try writeFile(newPath, [0x48, 0x4c])
        #expect(try KeyStore.open(folder: store.folder, kek: countingKEK).liveCount == 1)
        #expect(!FileManager.default.fileExists(atPath: newPath))
    }

    /// Y5: `kill -9` at every step of a write, for a key's creation and for an erasure: the
    /// store opened afterwards is the one before, up to the rename, and the one after
    /// from the rename on; never a third state, never an error.
    @Test(arguments: WriteStep.allCases)
    func killAtEveryStepLeavesBeforeOrAfter(step: WriteStep) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try Self.makeStore(folder)
        let keys = try store.prepare([scope(type: 1), scope(type: 2)])
        let victim = keys[scope(type: 1)]!
        let after = step == .renamed || step == .folderSynced
        let newPath = store.folder + "/keys.bin.new"

        // An erasure killed at `step`.
        let erasing = try KeyStore.open(folder: store.folder, kek: countingKEK, access: .write, crashAt: step)
        #expect(error { try erasing.destroy(ids: [victim.id], at: 7) }
                == .io(operation: "simulated crash after \(step)", path: after ? store.path : newPath, errno: 0))
        #expect(error { try erasing.destroy(ids: [victim.id], at: 7) } == .unusableAfterFailedWrite)
        let reopened = try KeyStore.open(folder: store.folder, kek: countingKEK)
        #expect(!FileManager.default.fileExists(atPath: newPath))
        if after {
            #expect({ if case .destroyed(Tombstone(id: victim.id, scope: victim.scope, destroyedAt: 7)) = reopened.lookup(id: victim.id) { true } else { false } }())
            for file in try Self.folderBytes(store.folder) { #expect(!contains(file, victim.key.bytes)) }
            #expect(!contains(try Self.decryptedBody(store.path), victim.key.bytes))
        } else {
            #expect(reopened.currentKey(for: victim.scope)?.key.bytes == victim.key.bytes)
            #expect(reopened.tombstones.isEmpty)
        }
        #expect(reopened.liveCount == (after ? 1 : 2))

        // A key's creation killed at `step` — an addition (Y8): before, while nothing or
        // half of it is written (the scope has no key, and its id is issued again: no
        // ciphertext can name it, the call never returned); after, once it is whole
        // (`kill -9` leaves written bytes in the file, fsynced or not).
        let sizeBefore = try bytes(store.path).count
        let creating = try KeyStore.open(folder: store.folder, kek: countingKEK, access: .write, crashAt: step)
        #expect(error { try creating.key(for: scope(type: 3)) }
                == .io(operation: "simulated crash after \(step)", path: store.path, errno: 0))
        let appended = step != .created && step != .halfWritten
        #expect(try bytes(store.path).count > sizeBefore || !appended)
        let again = try KeyStore.open(folder: store.folder, kek: countingKEK)
        #expect(again.currentKey(for: scope(type: 3))?.id == (appended ? 3 : nil))
        #expect(again.nextID == (appended ? 4 : 3))
        #expect(try bytes(store.path).count == (appended ? 1 : 0) * 107 + sizeBefore)  // a half addition cut off
        #expect(try again.key(for: scope(type: 4)).id == (appended ? 4 : 3))
    }

    /// Y7: every write seals under a nonce of its own, so the same contents written
    /// twice share no keystream.
    @Test func everyWriteHasAFreshNonce() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try Self.makeStore(folder)
        var nonces: Set<[UInt8]> = [Array(try bytes(store.path)[24..<36])]
        let key = try store.key(for: scope())
        for time in 0..<20 as Range<Int64> {
            nonces.insert(Array(try bytes(store.path)[24..<36]))
            _ = try store.destroy(ids: [try store.key(for: scope()).id], at: time)
        }
        nonces.insert(Array(try bytes(store.path)[24..<36]))
        #expect(nonces.count == 22)
        #expect(store.tombstones.first?.id == key.id)
    }

    @Test func aFailedWriteMakesTheHandleUnusable() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try Self.makeStore(folder)
        let first = try store.key(for: scope(type: 1))
        // Something in the way of the next whole write (a planted `.new`): O_EXCL refuses it.
        let newPath = store.folder + "/keys.bin.new"
        try writeFile(newPath, [1, 2, 3])
        #expect(error { try store.destroy(ids: [first.id], at: 5) } == .io(operation: "create", path: newPath, errno: EEXIST))
        #expect(try bytes(newPath) == [1, 2, 3])  // not written through
        #expect(store.currentKey(for: scope(type: 1))?.id == first.id)  // nothing published
        #expect(error { try store.key(for: scope(type: 3)) } == .unusableAfterFailedWrite)
        #expect(error { try store.destroy(at: 0, where: { _ in true }) } == .unusableAfterFailedWrite)
        let reopened = try KeyStore.open(folder: store.folder, kek: countingKEK)
        #expect(reopened.liveCount == 1)
        #expect(try reopened.key(for: scope(type: 2)).id == 2)
    }

    @Test func permissionsOnCreateAndRefusalsOnOpen() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try Self.makeStore(folder)
        #expect(try mode(store.folder) == 0o700)
        #expect(try mode(store.path) == 0o600)
        _ = try store.key(for: scope())
        #expect(try mode(store.path) == 0o600)  // every write
        #expect(error { try KeyStore.create(folder: store.folder, kek: countingKEK) } == .storeExists(path: store.path))
        try setMode(store.path, 0o644)
        #expect(error { try KeyStore.open(folder: store.folder, kek: countingKEK) } == .unprotected(path: store.path, mode: 0o644))
        try setMode(store.path, 0o600)
        try setMode(store.folder, 0o755)
        #expect(error { try KeyStore.open(folder: store.folder, kek: countingKEK) } == .unprotected(path: store.folder, mode: 0o755))
        #expect(error { try KeyStore.create(folder: store.folder, kek: countingKEK) } == .unprotected(path: store.folder, mode: 0o755))
        try setMode(store.folder, 0o700)
        #expect(error { try KeyStore.open(folder: store.folder, kek: countingKEK) } == nil)
        // Missing; a symbolic link in place of the file.
        let empty = folder.join("empty")
        #expect(error { try KeyStore.open(folder: empty, kek: countingKEK) } == .storeMissing(path: empty + "/keys.bin"))
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        #expect(error { try KeyStore.open(folder: empty, kek: countingKEK) } == .storeMissing(path: empty + "/keys.bin"))
        try FileManager.default.createSymbolicLink(atPath: empty + "/keys.bin", withDestinationPath: store.path)
        #expect(error { try KeyStore.open(folder: empty, kek: countingKEK) } == .notAKeyStore(path: empty + "/keys.bin"))
    }

    @Test func concurrentCallersShareOneKeyPerScope() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try Self.makeStore(folder)
        let scopes = (0..<8).map { scope(type: UInt16($0)) }
        let ids = try await withThrowingTaskGroup(of: [UInt64].self) { group in
            for _ in 0..<4 { group.addTask { try scopes.map { try store.key(for: $0).id } } }
            var all: [[UInt64]] = []
            for try await ids in group { all.append(ids) }
            return all
        }
        #expect(Set(ids).count == 1)
        #expect(Set(ids[0]) == Set(1...8))
        #expect(store.nextID == 9)
    }

    // MARK: Helpers

    /// The decrypted body of the store at `path`.
    /// The plaintext of the base and of every addition (Y8) after it, one after the other.
    static func decryptedBody(_ path: String) throws -> [UInt8] {
        let file = try bytes(path)
        let header = Array(file[0..<36])
        let word = { (at: Int) in (0..<4).reduce(0) { $0 | Int(file[at + $1]) << (8 * $1) } }
        var end = 36 + word(12) + 16
        var plain = try ChaCha20Poly1305.open(sealed: Array(file[36..<end]), key: countingKEK.key,
                                              nonce: SealNonce(bytes: file[24..<36]), associatedData: header)
        var index: UInt32 = 1
        while end < file.count {
            let start = end
            end = start + 16 + word(start) + 16
            let aad = header + (0..<4).map { UInt8(truncatingIfNeeded: index >> (8 * $0)) } + Array(file[start..<(start + 16)])
            plain += try ChaCha20Poly1305.open(sealed: Array(file[(start + 16)..<end]), key: countingKEK.key,
                                               nonce: SealNonce(bytes: file[(start + 4)..<(start + 16)]), associatedData: aad)
            index += 1
        }
        return plain
    }

    /// The bytes of every file in `folder`.
    static func folderBytes(_ folder: String) throws -> [[UInt8]] {
        try FileManager.default.contentsOfDirectory(atPath: folder).map { try bytes(folder + "/" + $0) }
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
