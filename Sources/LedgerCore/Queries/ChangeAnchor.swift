import Foundation
import HealthModel
import LedgerChecksums
import LedgerLog

/// A position in a ledger's change feed (HKQueryAnchor), as an opaque printable
/// token (`text`: base64url). It never expires.
///
/// It holds the ledger's id, the feed position — how many saved samples (index
/// slots, in log order) and how many deletions (tombstones, in log order) it
/// covers — and a **check**: SHA-256 over the bytes of the log record that saved the
/// last covered slot, the sequence number and UUID of the last covered deletion
/// (truncated to 16 bytes). An anchor is accepted only by the ledger it came from
/// and only while the history it covers is unchanged: a ledger with fewer samples or
/// deletions than the anchor covers was rolled back, a different check means the
/// history was rewritten (a copy whose tail was cut and re-appended).
///
/// It also carries the visibility it was issued under (for an app: the queried types
/// whose other apps' samples it could read), so that a later read grant delivers the
/// older samples it reveals exactly once (DESIGN.md, "The change feed").
///
/// And the last erasure it knew (issue 32): erased samples leave the feed's history, so
/// an anchor issued before an erasure is answered with the erased samples as deletions,
/// then everything current, as a fetch from the start (`erasedCursor`: how far through
/// the erased samples that answer has come, when a limit cut it).
public struct ChangeAnchor: Sendable, Hashable, CustomStringConvertible {
    /// The ledger it belongs to.
    public let ledgerId: UUID
    /// Saved samples covered (slots `0..<slots`).
    public let slots: UInt64
    /// Deletions covered (tombstones `0..<tombstones`).
    public let tombstones: UInt64
    /// The history check (16 bytes).
    let check: [UInt8]
    /// Types whose others' samples the caller could read when the anchor was issued.
    let readable: [UInt16]
    /// Types newly readable whose older samples are being delivered, and the slot to resume that at.
    let backfill: [UInt16]
    let backfillSlot: UInt64
    /// The sequence number of the last `erased` event of the ledger when issued (0: none).
    let erasuresSeen: UInt64
    /// Answering an anchor from before an erasure: how many of the samples erased since
    /// `erasuresSeen` (in log order) were gone through. Then `slots` and `tombstones` are 0.
    let erasedCursor: UInt64?

    /// Version 2 added `erasuresSeen` and `erasedCursor` (a version 1 token reads as
    /// knowing no erasure).
    static let version: UInt8 = 2

    /// The printable token (base64url, no padding).
    public var text: String {
        var b: [UInt8] = [Self.version]
        withUnsafeBytes(of: ledgerId.uuid) { b.append(contentsOf: $0) }
        func u64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { b.append(contentsOf: $0) } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { b.append(contentsOf: $0) } }
        u64(slots)
        u64(tombstones)
        b.append(contentsOf: check)
        u64(backfillSlot)
        u16(UInt16(readable.count))
        readable.forEach(u16)
        u16(UInt16(backfill.count))
        backfill.forEach(u16)
        u64(erasuresSeen)
        if let erasedCursor {
            b.append(1)
            u64(erasedCursor)
        } else {
            b.append(0)
        }
        return Data(b).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    public var description: String { text }

    /// Parses a token (`text`); anything else is `ChangeFeedError.malformedAnchor`.
    public init(text: String) throws(ChangeFeedError) {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard s.count <= 4096, s.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "/") }) else {
            throw .malformedAnchor(text)
        }
        while s.count % 4 != 0 { s += "=" }
        guard let data = Data(base64Encoded: s) else { throw .malformedAnchor(text) }
        let b = [UInt8](data)
        var at = 0
        func take(_ n: Int) throws(ChangeFeedError) -> ArraySlice<UInt8> {
            guard n <= b.count - at else { throw .malformedAnchor(text) }
            defer { at += n }
            return b[at..<at + n]
        }
        func u64() throws(ChangeFeedError) -> UInt64 { try take(8).reversed().reduce(0) { $0 << 8 | UInt64($1) } }
        func u16() throws(ChangeFeedError) -> UInt16 { try take(2).reversed().reduce(0) { $0 << 8 | UInt16($1) } }
        guard let version = try take(1).first, version == 1 || version == Self.version else { throw .malformedAnchor(text) }
        let id = Array(try take(16))
        ledgerId = UUID(uuid: (id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7], id[8], id[9], id[10], id[11], id[12],
                               id[13], id[14], id[15]))
        slots = try u64()
        tombstones = try u64()
        check = Array(try take(16))
        backfillSlot = try u64()
        var r: [UInt16] = []
        for _ in 0..<(try u16()) { r.append(try u16()) }
        readable = r
        var f: [UInt16] = []
        for _ in 0..<(try u16()) { f.append(try u16()) }
        backfill = f
        if version >= 2 {
            erasuresSeen = try u64()
            switch try take(1).first {
            case 0: erasedCursor = nil
            case 1: erasedCursor = try u64()
            default: throw .malformedAnchor(text)
            }
        } else {
            erasuresSeen = 0
            erasedCursor = nil
        }
        guard at == b.count, backfillSlot <= slots, erasedCursor == nil || (slots == 0 && tombstones == 0) else {
            throw .malformedAnchor(text)
        }
    }

    init(ledgerId: UUID, slots: UInt64, tombstones: UInt64, check: [UInt8], readable: [UInt16], backfill: [UInt16],
         backfillSlot: UInt64, erasuresSeen: UInt64, erasedCursor: UInt64? = nil) {
        precondition(erasedCursor == nil || (slots == 0 && tombstones == 0), "an anchor going through erased samples is at the start")
        self.erasuresSeen = erasuresSeen
        self.erasedCursor = erasedCursor
        self.ledgerId = ledgerId
        self.slots = slots
        self.tombstones = tombstones
        self.check = check
        self.readable = readable
        self.backfill = backfill
        self.backfillSlot = backfillSlot
    }
}
