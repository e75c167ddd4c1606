import Foundation
import LedgerCrypto

/// What a writer seals records with: the key store (by id), its salt and the ledger's
/// id (`SealedRecord` says how each enters a sealed payload).
///
/// Invariant: `salt` is drawn once per writer (`LogWriter.create`/`open`), at random
/// unless a test or golden file fixes it (`LogWriterOptions.sealSalt`); a writer never
/// seals two records with one sequence number.
struct RecordSealing: Sendable {
    let keys: any RecordKeys
    let salt: UInt32
    let ledgerId: UUID

    /// The live key with `id`, if the store has one.
    func key(_ id: UInt64) -> SealKey? {
        if case .live(let key) = keys.lookup(keyId: id) { return key }
        return nil
    }

    /// A random salt from the system's entropy source.
    /// - Throws: `LogError.io` naming `getentropy` when the system has none to give.
    static func randomSalt() throws -> UInt32 {
        var salt: UInt32 = 0
        let result = withUnsafeMutableBytes(of: &salt) { getentropy($0.baseAddress, 4) }
        guard result == 0 else { throw LogError.io(operation: "getentropy", path: "", errno: errno) }
        return salt
    }
}

/// What a reader opens sealed records with: the key store (nil when none was given:
/// every sealed record is then lent unopened, `noKeys`) and the ledger's id (part of
/// the associated data).
package struct RecordOpening: Sendable {
    package let keys: (any RecordKeys)?
    let ledgerId: UUID

    package init(keys: (any RecordKeys)?, ledgerId: UUID) {
        self.keys = keys
        self.ledgerId = ledgerId
    }

    /// Opens the sealed record `framed` (CRC checked) into `output` (its plaintext's
    /// length); nil when opened, else why not.
    func open(framed: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> RecordSealFailure.Reason? {
        guard let keys else { return .noKeys }
        switch keys.lookup(keyId: SealedRecord.keyId(framed: framed)) {
        case .destroyed: return .keyDestroyed
        case .unknown: return .keyUnknown
        case .storeUnreadable(let reason, let trouble): return .keyStoreUnreadable(reason: reason, trouble: trouble)
        case .live(let key):
            return SealedRecord.open(framed: framed, key: key, ledgerId: ledgerId, into: output) ? nil : .authenticationFailed
        }
    }
}
