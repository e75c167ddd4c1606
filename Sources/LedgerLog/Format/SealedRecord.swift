import Foundation
import LedgerCrypto

/// The payload of a sealed record (format version 2, record flag bit 0; issue 32):
///
/// ```
///   0   8  keyId       the data key's id in the key store (u64 LE)
///   8   4  salt        the writer's salt (u32 LE), drawn at random when it opened
///  12   …  ciphertext  ChaCha20-Poly1305 (RFC 8439) of the event's payload
///  L−16 16 tag
/// ```
///
/// - **Nonce** = salt ‖ sequence (`SealNonce(prefix: salt, counter: sequence)`: 4 bytes
///   LE, then 8 bytes LE). Why it never repeats under one key: a writer seals each
///   sequence number once, and sequence numbers only grow while it writes; a sequence
///   is sealed again only after a torn, never-acknowledged tail was cut and a later
///   writer reuses its numbers, and that writer drew a new random salt — the pair
///   repeats with probability 2^-32 per cut tail, and only if the same key seals it
///   again (the bound NIST SP 800-38D accepts for random 96-bit nonces). Derived, the
///   nonce costs no bytes beyond the salt and cannot be chosen by a reader.
/// - **Associated data** (52 bytes) = the ledger id (16) ‖ the record header's bytes
///   8..<32 (sequence, recordedAt, kind, kindVersion, flags) ‖ the payload's bytes
///   0..<12 (keyId, salt): a payload opens only in its own record of its own ledger;
///   moved to another sequence, kind or ledger, its tag fails.
/// - The record's CRC, its batch's link and its Merkle leaf are computed over these
///   bytes (the ciphertext), so the log's integrity is checked without any key.
///
/// Invariant: a sealed payload is at least `overhead` bytes (`payloadLength` ≥ 28,
/// rule R7); its plaintext is `payloadLength − 28` bytes.
package enum SealedRecord {
    /// Bytes before the ciphertext: keyId and salt.
    package static let prefixLength = 12
    /// Bytes of the tag.
    package static let tagLength = ChaCha20Poly1305.tagByteCount
    /// Bytes a sealed payload adds to its plaintext.
    package static let overhead = prefixLength + tagLength
    /// Bytes of associated data.
    static let associatedDataLength = 16 + 24 + prefixLength

    /// The nonce of the record `sequence` sealed by a writer with `salt`.
    package static func nonce(salt: UInt32, sequence: UInt64) -> SealNonce {
        SealNonce(prefix: salt, counter: sequence)
    }

    /// The associated data of a sealed record, from its framed bytes (header and the
    /// payload's first 12 bytes; `framed.count ≥ 32 + 12`).
    static func associatedData(ledgerId: UUID, framed: UnsafeRawBufferPointer) -> [UInt8] {
        var aad = [UInt8]()
        aad.reserveCapacity(associatedDataLength)
        withUnsafeBytes(of: ledgerId.uuid) { aad.append(contentsOf: $0) }
        aad.append(contentsOf: UnsafeRawBufferPointer(rebasing: framed[8..<LogFormat.recordHeaderLength + prefixLength]))
        return aad
    }

    /// The key id a sealed record names (its framed bytes; `framed.count ≥ 44`).
    static func keyId(framed: UnsafeRawBufferPointer) -> UInt64 {
        UInt64(littleEndian: framed.loadUnaligned(fromByteOffset: LogFormat.recordHeaderLength, as: UInt64.self))
    }

    /// The salt a sealed record was sealed with.
    static func salt(framed: UnsafeRawBufferPointer) -> UInt32 {
        UInt32(littleEndian: framed.loadUnaligned(fromByteOffset: LogFormat.recordHeaderLength + 8, as: UInt32.self))
    }

    /// Seals a record in place: `framed` is the whole record with its header's
    /// sequence, time, kind, version and flags already stored, the keyId at payload
    /// byte 0, the plaintext at payload byte 12 and 16 bytes of room for the tag at the
    /// end. Writes the salt, encrypts the plaintext in place and writes the tag. The
    /// caller then computes the record's CRC.
    static func seal(framed: UnsafeMutableRawBufferPointer, key: SealKey, salt: UInt32, sequence: UInt64, ledgerId: UUID) {
        framed.storeBytes(of: salt.littleEndian, toByteOffset: LogFormat.recordHeaderLength + 8, as: UInt32.self)
        let aad = associatedData(ledgerId: ledgerId, framed: UnsafeRawBufferPointer(framed))
        let start = LogFormat.recordHeaderLength + prefixLength
        let plaintext = UnsafeRawBufferPointer(rebasing: framed[start..<framed.count - tagLength])
        let output = UnsafeMutableRawBufferPointer(rebasing: framed[start...])
        do {
            try aad.withUnsafeBytes { aad in
                try ChaCha20Poly1305.seal(plaintext: plaintext, key: key, nonce: nonce(salt: salt, sequence: sequence),
                                          associatedData: aad, into: output)
            }
        } catch {
            // A payload is at most 16 MiB (far below P_MAX) and `output` is exactly
            // plaintext + tag by construction: sealing cannot fail.
            preconditionFailure("sealing a record of \(framed.count) bytes failed: \(error)")
        }
    }

    /// Opens a sealed record (`framed`: header and payload, the CRC already checked)
    /// into `output` (exactly `framed.count − 32 − 28` bytes).
    /// - Returns: false when the tag does not match (`output` is then left as it was).
    static func open(framed: UnsafeRawBufferPointer, key: SealKey, ledgerId: UUID,
                     into output: UnsafeMutableRawBufferPointer) -> Bool {
        let sequence = UInt64(littleEndian: framed.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        let aad = associatedData(ledgerId: ledgerId, framed: framed)
        let sealed = UnsafeRawBufferPointer(rebasing: framed[(LogFormat.recordHeaderLength + prefixLength)...])
        do {
            try aad.withUnsafeBytes { aad in
                try ChaCha20Poly1305.open(sealed: sealed, key: key, nonce: nonce(salt: salt(framed: framed), sequence: sequence),
                                          associatedData: aad, into: output)
            }
            return true
        } catch {
            return false
        }
    }

    /// The plaintext of the sealed record `framed` (header and payload, CRC checked),
    /// or why it cannot be opened: for readers that fetch one record by its offset.
    package static func open(framed: UnsafeRawBufferPointer, opening: RecordOpening) -> Result<[UInt8], RecordSealFailure> {
        let count = framed.count - LogFormat.recordHeaderLength - overhead
        var out = [UInt8](repeating: 0, count: max(count, 0))
        guard count >= 0 else { return .failure(RecordSealFailure(keyId: 0, reason: .authenticationFailed)) }
        let refused = out.withUnsafeMutableBytes { opening.open(framed: framed, into: $0) }
        if let refused { return .failure(RecordSealFailure(keyId: keyId(framed: framed), reason: refused)) }
        return .success(out)
    }
}

/// What a key store says of a key id: the key, destroyed (erased), or never issued.
public enum RecordKeyLookup: Sendable {
    /// The key is live: records it sealed open.
    case live(SealKey)
    /// The key was destroyed: what it sealed is erased.
    case destroyed
    /// The store never issued this id (another ledger's store, or damage).
    case unknown
    /// The key store could not be read (`reason`), and how the caller is to take it.
    case storeUnreadable(reason: String, trouble: KeyStoreTrouble)
}

/// Why a key store could not be read, as the caller is to take it.
public enum KeyStoreTrouble: Sendable, Hashable {
    /// The owner's to mend: sealed under another key-encryption key than the one given,
    /// or readable by others.
    case ownersToMend
    /// Its bytes do not open or decode: damage.
    case damaged
    /// It could not be reached (an I/O error, a database connection): not damage; the
    /// same read may succeed again.
    case unreachable
}

/// The data keys a log's sealed records name, by id: the layer above adapts its key
/// store (`LedgerKeys`) to this. The log knows keys only by id, never their scopes.
public protocol RecordKeys: Sendable {
    /// What the store holds for `keyId`.
    func lookup(keyId: UInt64) -> RecordKeyLookup
}

/// Why a sealed record's payload could not be opened.
///
/// Invariant: never made for a plain record; `keyId` is the id the record names.
public struct RecordSealFailure: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Reason: Sendable, Hashable {
        /// The log was read without a key store (no key-encryption key given).
        case noKeys
        /// The key was destroyed: the record is erased.
        case keyDestroyed
        /// The key store never issued this id.
        case keyUnknown
        /// The tag does not match: the bytes were changed (with a CRC made to fit),
        /// or the key is not the one that sealed them.
        case authenticationFailed
        /// The key store could not be read (`trouble`: the owner's to mend, damage, or
        /// out of reach).
        case keyStoreUnreadable(reason: String, trouble: KeyStoreTrouble)
    }

    public let keyId: UInt64
    public let reason: Reason

    package init(keyId: UInt64, reason: Reason) {
        self.keyId = keyId
        self.reason = reason
    }

    public var description: String {
        switch reason {
        case .noKeys: "sealed under key \(keyId), and no key-encryption key was given (--key-file or HEALTHLEDGER_KEY_FILE)"
        case .keyDestroyed: "sealed under key \(keyId), which was destroyed (erased)"
        case .keyUnknown: "sealed under key \(keyId), which the key store never issued"
        case .authenticationFailed: "sealed under key \(keyId), and its tag does not match: the bytes were changed, or the key is not the one that sealed them"
        case .keyStoreUnreadable(let reason, _): "sealed under key \(keyId), and the key store cannot be read: \(reason)"
        }
    }
}
