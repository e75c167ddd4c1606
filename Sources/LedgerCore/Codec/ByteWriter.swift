import Foundation
import HealthModel
import LedgerLog

/// Writes the event encoding's primitives: the log's `PayloadWriter` (which reaches
/// only the payload it writes — in a batch, one record's; on its own, a buffer of its
/// own) with the primitives below.
///
/// Primitives (events/FORMAT.md, Part 2): unsigned LEB128 varints; signed integers
/// zigzag-encoded then varint; IEEE-754 doubles little-endian; strings as a varint
/// byte length and UTF-8; UUIDs as 16 bytes; dates as the double
/// `timeIntervalSinceReferenceDate` (seconds since 2001-01-01T00:00:00Z, exactly as
/// Foundation's `Date` holds them, so dates round-trip bit for bit).
typealias ByteWriter = PayloadWriter

extension PayloadWriter {
    mutating func u8(_ v: UInt8) { append(v) }

    /// `opt<T>`: a 0 byte when absent, else a 1 byte and `write` of the value.
    mutating func optional<T>(_ value: T?, _ write: (inout ByteWriter, T) -> Void) {
        guard let value else { return u8(0) }
        u8(1)
        write(&self, value)
    }

    mutating func u16(_ v: UInt16) {
        append(UInt8(truncatingIfNeeded: v))
        append(UInt8(truncatingIfNeeded: v >> 8))
    }

    mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        append(UInt8(v))
    }

    mutating func varint(_ value: Int) { varint(UInt64(value)) }

    mutating func zigzag(_ value: Int64) { varint(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    mutating func f64(_ v: Double) {
        withUnsafeBytes(of: v.bitPattern.littleEndian) { append(contentsOf: $0) }
    }

    mutating func date(_ d: Date) { f64(d.timeIntervalSinceReferenceDate) }

    mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            varint(utf8.count)
            append(contentsOf: UnsafeRawBufferPointer(utf8))
        }
    }

    mutating func uuid(_ u: UUID) {
        withUnsafeBytes(of: u.uuid) { append(contentsOf: $0) }
    }

    /// Writes `body`'s bytes preceded by their varint length.
    mutating func lengthPrefixed(_ body: (inout ByteWriter) -> Void) {
        // Written in place after a one-byte length (most samples are shorter than 128
        // bytes); a longer body is shifted to make room for its longer varint. The
        // bytes are the same as writing the body apart and appending it, without an
        // allocation and a copy per sample.
        let start = count
        append(0)
        body(&self)
        let length = count - start - 1
        if length < 0x80 {
            overwrite(at: start, with: UInt8(length))
            return
        }
        // The varint's length beyond the one byte reserved, then the body moved up by
        // that much in place (one memmove of the body, no allocation).
        var extra = 0
        var rest = length >> 7
        while rest > 0 { extra += 1; rest >>= 7 }
        openGap(at: start + 1, count: extra)
        var v = length, at = start
        while v >= 0x80 {
            overwrite(at: at, with: UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
            at += 1
        }
        overwrite(at: at, with: UInt8(v))
    }
}
