import Foundation
import HealthModel

extension SampleCodec {
    /// A quantity or category sample's UUID and where its device's bytes lie (absolute
    /// payload offsets; nil: no device), read without decoding the rest; nil for any
    /// other kind (a correlation, a workout, an unrecognized sample: decode those).
    /// Checks the frame as `decode` does (`readFrame`).
    static func deviceSpan(_ r: inout ByteReader, version: UInt16) throws(EventDecodingError)
        -> (start: Double, end: Double, device: Range<Int>?)? {
        let (kind, _, _, startDate, endDate, flags) = try readFrame(&r, version: version, asMember: false)
        let (start, end) = (startDate.timeIntervalSinceReferenceDate, endDate.timeIntervalSinceReferenceDate)
        guard kind == .quantity || kind == .category else { return nil }
        if flags.contains(.replaces) { _ = try r.uuid() }
        if flags.contains(.sync) {
            try r.skipString()
            _ = try r.zigzag()
        }
        if kind == .quantity {
            _ = try r.f64()
            try r.skipString()
        } else {
            _ = try r.zigzag()
        }
        if flags.contains(.metadata) { try skipMetadata(&r) }
        guard flags.contains(.device) else { return (start, end, nil) }
        let from = r.absolutePosition
        let present = try r.u8()
        for i in 0..<8 where present & (1 << UInt8(i)) != 0 { try r.skipString() }
        return (start, end, from..<r.absolutePosition)
    }

    /// Moves past an encoded metadata dictionary.
    static func skipMetadata(_ r: inout ByteReader) throws(EventDecodingError) {
        let n = try r.count(limit: r.remaining)
        for _ in 0..<n {
            try r.skipString()
            switch try r.u8() {
            case 1: try r.skipString()
            case 2: _ = try r.zigzag()
            case 3, 5: _ = try r.f64()
            case 4: _ = try r.u8()
            case 6:
                _ = try r.f64()
                try r.skipString()
            default: throw r.malformed("unknown metadata value tag")
            }
        }
    }
}
