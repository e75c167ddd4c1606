import LedgerCrypto

/// The key store file `keys/keys.bin`, format version 2 (events/FORMAT.md, Part 5,
/// rules Y1–Y8; the reader below checks Y1, Y2 and Y8 in their order). Version 1 is
/// version 2 without additions, and is still read. All integers little-endian.
///
/// ```
/// header (36 bytes, the associated data of the seal):
///   0  magic "HLKEYS\r\n" (48 4c 4b 45 59 53 0d 0a)
///   8  u16 format version = 2 (1 is read too)
///  10  u16 reserved = 0
///  12  u32 n, bytes of ciphertext
///  16  8 bytes: the KEK's check id (KeyEncryptionKey.checkID)
///  24  12 bytes: nonce, fresh from the system's random source for every write
/// 36  n bytes: ChaCha20-Poly1305 ciphertext of the body, under the KEK
/// 36+n 16 bytes: the tag (over the header and the ciphertext)
/// body:
///   u64 next id · u32 L · u32 T
///   L × live key  (63 bytes): u64 id · scope (23) · 32 key bytes, ids ascending
///   T × tombstone (39 bytes): u64 id · scope (23) · i64 destroyedAt (ns), ids ascending
/// scope (23 bytes): u8 source kind (1 app, 2 import) · 16 bytes source id · u16 type
///   · u32 month (year * 12 + month - 1)
/// then zero or more additions (version 2), each new keys only (Y8):
///   u32 a · 12-byte nonce · a bytes of ciphertext · 16-byte tag, under the KEK; the
///   associated data is the file's header, u32 the addition's index (1 for the first)
///   and its own first 16 bytes
///   body: u64 next id · u32 L · L × live key (63 bytes), ids ascending, each at least
///   the next id before it
/// ```
enum KeyStoreFile {
    static let magic: [UInt8] = Array("HLKEYS\r\n".utf8)
    /// The version written.
    static let version: UInt16 = 2
    static let headerByteCount = 36
    static let scopeByteCount = 23
    static let liveEntryByteCount = 8 + scopeByteCount + 32
    static let tombstoneByteCount = 8 + scopeByteCount + 8
    /// The body's fixed part: next id and the two counts.
    static let bodyHeadByteCount = 16

    // MARK: Writing

    /// The whole file for `contents`, sealed under `kek` with a fresh `nonce`.
    static func encode(_ contents: KeyStoreContents, kek: KeyEncryptionKey, nonce: SealNonce) throws(KeyStoreError) -> [UInt8] {
        var body = encodeBody(contents)
        defer { wipe(&body) }
        guard body.count <= Int(UInt32.max) else { throw .malformed(path: "keys.bin", reason: "a body of \(body.count) bytes exceeds 4 GiB") }
        let header = self.header(ciphertextCount: UInt32(body.count), kek: kek, nonce: nonce)
        let sealed: [UInt8]
        do { sealed = try ChaCha20Poly1305.seal(plaintext: body, key: kek.key, nonce: nonce, associatedData: header) } catch {
            throw .malformed(path: "keys.bin", reason: "\(error)")  // unreachable: the length was checked
        }
        return header + sealed
    }

    static func header(ciphertextCount: UInt32, kek: KeyEncryptionKey, nonce: SealNonce) -> [UInt8] {
        var header = magic
        ByteWriter.append(version, to: &header)
        ByteWriter.append(UInt16(0), to: &header)
        ByteWriter.append(ciphertextCount, to: &header)
        header += kek.checkID
        header += nonce.bytes
        assert(header.count == headerByteCount)
        return header
    }

    static func encodeBody(_ contents: KeyStoreContents) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bodyHeadByteCount + contents.live.count * liveEntryByteCount
                            + contents.tombstones.count * tombstoneByteCount)
        ByteWriter.append(contents.nextID, to: &out)
        ByteWriter.append(UInt32(contents.live.count), to: &out)
        ByteWriter.append(UInt32(contents.tombstones.count), to: &out)
        for id in contents.live.keys.sorted() {
            let entry = contents.live[id]!
            ByteWriter.append(id, to: &out)
            append(entry.scope, to: &out)
            entry.key.appendBytes(to: &out)
        }
        for id in contents.tombstones.keys.sorted() {
            let tombstone = contents.tombstones[id]!
            ByteWriter.append(id, to: &out)
            append(tombstone.scope, to: &out)
            ByteWriter.append(UInt64(bitPattern: tombstone.destroyedAt), to: &out)
        }
        return out
    }

    static func append(_ scope: KeyScope, to out: inout [UInt8]) {
        out.append(scope.source.kind.rawValue)
        ByteWriter.append(scope.source.low, to: &out)
        ByteWriter.append(scope.source.high, to: &out)
        ByteWriter.append(scope.type, to: &out)
        ByteWriter.append(scope.month.index, to: &out)
    }

    // MARK: Reading

    /// The header's fields, checked in the order a reader should: magic, version,
    /// reserved, then the file's length against the header's, then the KEK.
    /// `fileLength` is the file's length (the bytes may be just the header).
    /// Returns the whole file's expected length and the nonce.
    static func checkHeader(_ bytes: [UInt8], fileLength: Int, kek: KeyEncryptionKey,
                            path: String) throws(KeyStoreError) -> (expectedLength: Int, nonce: SealNonce) {
        // A file too short for the magic is truncated when what is there is the magic's start.
        guard bytes.count >= magic.count else {
            guard magic.starts(with: bytes) else { throw .notAKeyStore(path: path) }
            throw .truncated(path: path, length: fileLength, expected: headerByteCount + ChaCha20Poly1305.tagByteCount)
        }
        guard bytes.starts(with: magic) else { throw .notAKeyStore(path: path) }
        var cursor = ByteCursor(bytes, offset: magic.count)
        guard let version = cursor.u16() else {
            throw .truncated(path: path, length: fileLength, expected: headerByteCount + ChaCha20Poly1305.tagByteCount)
        }
        guard version == 1 || version == self.version else { throw .unknownVersion(path: path, version: version) }
        guard let reserved = cursor.u16(), let count = cursor.u32(), let check = cursor.take(8),
              let nonceBytes = cursor.take(SealNonce.byteCount) else {
            throw .truncated(path: path, length: fileLength, expected: headerByteCount + ChaCha20Poly1305.tagByteCount)
        }
        guard reserved == 0 else { throw .tampered(path: path) }
        let expected = headerByteCount + Int(count) + ChaCha20Poly1305.tagByteCount
        guard fileLength >= expected else { throw .truncated(path: path, length: fileLength, expected: expected) }
        // Version 1 has no additions; a version 2 file's additions follow its base (Y8).
        guard fileLength == expected || version == self.version else { throw .tampered(path: path) }
        guard Array(check) == kek.checkID else { throw .wrongKey(path: path) }
        let nonce: SealNonce
        do { nonce = try SealNonce(bytes: nonceBytes) } catch { throw .malformed(path: path, reason: "\(error)") }
        return (expected, nonce)
    }

    /// The contents of a whole key store file, and where its parts end.
    static func decode(_ bytes: [UInt8], kek: KeyEncryptionKey, path: String) throws(KeyStoreError) -> (KeyStoreContents, KeyStoreLayout) {
        let (expected, nonce) = try checkHeader(bytes, fileLength: bytes.count, kek: kek, path: path)
        let header = Array(bytes[0..<headerByteCount])
        var body: [UInt8]
        do {
            body = try ChaCha20Poly1305.open(sealed: Array(bytes[headerByteCount..<expected]), key: kek.key, nonce: nonce, associatedData: header)
        } catch {
            throw .tampered(path: path)
        }
        defer { wipe(&body) }
        var contents = try decodeBody(body, path: path)
        var layout = KeyStoreLayout(header: header, baseLength: expected, additions: 0, validLength: expected)
        try readAdditions(bytes, into: &contents, layout: &layout, kek: kek, path: path)
        return (contents, layout)
    }

    // MARK: Additions (Y8)

    /// An addition's bytes before its ciphertext: u32 length, 12-byte nonce.
    static let additionHeadByteCount = 16
    /// An addition body's fixed part: next id and the count.
    static let additionBodyHeadByteCount = 12

    /// An addition holding `keys` (new, ids ascending, each at least the store's next id
    /// before it) and the store's `nextID` after it, as the `index`-th addition to the
    /// file whose header is `header`, sealed under `kek` with a fresh `nonce`.
    static func encodeAddition(_ keys: [DataKey], nextID: UInt64, header: [UInt8], index: UInt32,
                               kek: KeyEncryptionKey, nonce: SealNonce) throws(KeyStoreError) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(additionBodyHeadByteCount + keys.count * liveEntryByteCount)
        defer { wipe(&body) }
        ByteWriter.append(nextID, to: &body)
        ByteWriter.append(UInt32(keys.count), to: &body)
        for entry in keys {
            ByteWriter.append(entry.id, to: &body)
            append(entry.scope, to: &body)
            entry.key.appendBytes(to: &body)
        }
        guard body.count <= Int(UInt32.max) else { throw .malformed(path: "keys.bin", reason: "an addition of \(body.count) bytes exceeds 4 GiB") }
        var head: [UInt8] = []
        ByteWriter.append(UInt32(body.count), to: &head)
        head += nonce.bytes
        do {
            return head + (try ChaCha20Poly1305.seal(plaintext: body, key: kek.key, nonce: nonce,
                                                      associatedData: additionAssociatedData(header, index: index, head: head[...])))
        } catch {
            throw .malformed(path: "keys.bin", reason: "\(error)")  // unreachable: the length was checked
        }
    }

    /// An addition's associated data: the file's header, its index, its first 16 bytes.
    static func additionAssociatedData(_ header: [UInt8], index: UInt32, head: ArraySlice<UInt8>) -> [UInt8] {
        var aad = header
        ByteWriter.append(index, to: &aad)
        return aad + head
    }

    /// Reads the additions after the base (`layout.validLength` on), into `contents`.
    /// One cut short, or the last one failing its tag, is a write never acknowledged
    /// (Y8): it and what follows are left out of `layout.validLength`. An earlier one
    /// failing its tag is `tampered`; an authentic one breaking Y8's order, `malformed`.
    static func readAdditions(_ bytes: [UInt8], into contents: inout KeyStoreContents, layout: inout KeyStoreLayout,
                              kek: KeyEncryptionKey, path: String) throws(KeyStoreError) {
        var offset = layout.validLength
        while bytes.count - offset >= additionHeadByteCount + ChaCha20Poly1305.tagByteCount {
            var cursor = ByteCursor(bytes, offset: offset)
            guard let count = cursor.u32(), let nonceBytes = cursor.take(SealNonce.byteCount) else { return }
            let end = offset + additionHeadByteCount + Int(count) + ChaCha20Poly1305.tagByteCount
            guard end <= bytes.count else { return }  // cut short: never acknowledged
            let index = UInt32(truncatingIfNeeded: layout.additions + 1)
            var body: [UInt8]
            do {
                let nonce = try SealNonce(bytes: nonceBytes)
                body = try ChaCha20Poly1305.open(sealed: Array(bytes[(offset + additionHeadByteCount)..<end]), key: kek.key, nonce: nonce,
                                                 associatedData: additionAssociatedData(layout.header, index: index, head: bytes[offset..<(offset + additionHeadByteCount)]))
            } catch {
                if end == bytes.count { return }  // the last one, torn: never acknowledged
                throw .tampered(path: path)
            }
            defer { wipe(&body) }
            try apply(addition: body, to: &contents, index: index, path: path)
            layout.additions += 1
            offset = end
            layout.validLength = end
        }
    }

    /// An authentic addition's keys, checked (Y8) and added to `contents`.
    static func apply(addition body: [UInt8], to contents: inout KeyStoreContents, index: UInt32, path: String) throws(KeyStoreError) {
        var cursor = ByteCursor(body)
        guard let nextID = cursor.u64(), let count = cursor.u32(), Int(count) * liveEntryByteCount == cursor.remaining else {
            throw .malformed(path: path, reason: "addition \(index): \(body.count) bytes do not hold a next id, a count and that many keys")
        }
        guard nextID >= contents.nextID else {
            throw .malformed(path: path, reason: "addition \(index): next id \(nextID) below the store's \(contents.nextID)")
        }
        var previous = contents.nextID
        for _ in 0..<count {
            guard let id = cursor.u64(), let scope = try scope(&cursor, path: path), let keyBytes = cursor.take(SealKey.byteCount) else {
                throw .malformed(path: path, reason: "addition \(index): a key entry cut short")
            }
            guard id >= previous, id < nextID else {
                throw .malformed(path: path, reason: "addition \(index): key id \(id) not new, ascending and below next id \(nextID)")
            }
            previous = id + 1
            let key: SealKey
            do { key = try SealKey(bytes: keyBytes) } catch { throw .malformed(path: path, reason: "\(error)") }
            contents.live[id] = DataKey(id: id, scope: scope, key: key)
            contents.current[scope] = id  // above every id before it
        }
        contents.nextID = nextID
        assert(contents.invariantFailure() == nil, contents.invariantFailure() ?? "")
    }

    /// The body's contents, every count checked against the bytes left and every
    /// invariant of `KeyStoreContents` checked.
    static func decodeBody(_ body: [UInt8], path: String) throws(KeyStoreError) -> KeyStoreContents {
        var cursor = ByteCursor(body)
        guard let nextID = cursor.u64(), let liveCount = cursor.u32(), let tombstoneCount = cursor.u32() else {
            throw .malformed(path: path, reason: "a body of \(body.count) bytes is shorter than its 16-byte head")
        }
        // In Int (64-bit): u32 counts times entry sizes cannot overflow.
        let needed = Int(liveCount) * liveEntryByteCount + Int(tombstoneCount) * tombstoneByteCount
        guard needed == cursor.remaining else {
            throw .malformed(path: path, reason: "\(liveCount) keys and \(tombstoneCount) tombstones need \(needed) bytes; \(cursor.remaining) follow")
        }
        guard nextID >= 1 else { throw .malformed(path: path, reason: "next id 0") }
        var contents = KeyStoreContents()
        contents.nextID = nextID
        contents.live.reserveCapacity(Int(liveCount))
        var previous: UInt64 = 0
        for _ in 0..<liveCount {
            // The lengths were checked above: these reads cannot come up short.
            guard let id = cursor.u64(), let scope = try scope(&cursor, path: path), let keyBytes = cursor.take(SealKey.byteCount) else {
                throw .malformed(path: path, reason: "a key entry cut short")
            }
            guard id > previous else { throw .malformed(path: path, reason: "key id \(id) after \(previous): not ascending") }
            guard id < nextID else { throw .malformed(path: path, reason: "live key id \(id) outside 1..<\(nextID)") }
            previous = id
            let key: SealKey
            do { key = try SealKey(bytes: keyBytes) } catch { throw .malformed(path: path, reason: "\(error)") }
            contents.live[id] = DataKey(id: id, scope: scope, key: key)
            if id > (contents.current[scope] ?? 0) { contents.current[scope] = id }
        }
        previous = 0
        contents.tombstones.reserveCapacity(Int(tombstoneCount))
        for _ in 0..<tombstoneCount {
            guard let id = cursor.u64(), let scope = try scope(&cursor, path: path), let time = cursor.u64() else {
                throw .malformed(path: path, reason: "a tombstone cut short")
            }
            guard id > previous else { throw .malformed(path: path, reason: "tombstone id \(id) after \(previous): not ascending") }
            guard id < nextID else { throw .malformed(path: path, reason: "destroyed key id \(id) outside 1..<\(nextID)") }
            guard contents.live[id] == nil else { throw .malformed(path: path, reason: "key id \(id) both live and destroyed") }
            previous = id
            contents.tombstones[id] = Tombstone(id: id, scope: scope, destroyedAt: Int64(bitPattern: time))
        }
        // Every invariant was checked above, entry by entry (ids ascending from 1 and below
        // next id, none both live and destroyed; `current` built as the highest id).
        assert(contents.invariantFailure() == nil, contents.invariantFailure() ?? "")
        return contents
    }

    static func scope(_ cursor: inout ByteCursor, path: String) throws(KeyStoreError) -> KeyScope? {
        guard let kindByte = cursor.u8(), let low = cursor.u64(), let high = cursor.u64(), let type = cursor.u16(),
              let month = cursor.u32() else { return nil }
        guard let kind = KeySource.Kind(rawValue: kindByte) else {
            throw .malformed(path: path, reason: "source kind \(kindByte) is none of 1 (app), 2 (import), 3 (imported app)")
        }
        return KeyScope(source: KeySource(kind: kind, low: low, high: high), type: type, month: UTCMonth(index: month))
    }
}

/// Where a key store file's parts end: its base (header, sealed body, tag) and the
/// additions after it (Y8). A writer appends the next addition at `validLength`.
struct KeyStoreLayout: Sendable {
    /// The base's 36-byte header (every addition's associated data begins with it).
    let header: [UInt8]
    /// Bytes of the base.
    let baseLength: Int
    /// Additions read or written after the base.
    var additions: Int
    /// Bytes of the base and its whole additions: a longer file's rest is a write never
    /// acknowledged.
    var validLength: Int

    /// Whether additions may follow the base: a version 2 base (a version 1 file is a
    /// base alone, Y1; its next change writes it whole, as version 2).
    var acceptsAdditions: Bool {
        header.count == KeyStoreFile.headerByteCount
            && UInt16(header[8]) | UInt16(header[9]) << 8 == KeyStoreFile.version
    }

    /// A file written whole, `bytes`: its base alone.
    init(whole bytes: [UInt8]) {
        self.init(header: Array(bytes.prefix(KeyStoreFile.headerByteCount)), baseLength: bytes.count, additions: 0, validLength: bytes.count)
    }

    init(header: [UInt8], baseLength: Int, additions: Int, validLength: Int) {
        self.header = header
        self.baseLength = baseLength
        self.additions = additions
        self.validLength = validLength
    }
}
