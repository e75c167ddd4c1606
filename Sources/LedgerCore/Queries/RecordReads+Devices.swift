import Foundation
import HealthModel
import LedgerLog

extension RecordReads {
    /// The device of each of `slots` (ascending slot numbers, so records come in log
    /// order and each is read once): `ids[i]` is 0 for no device, else `devices[ids[i] − 1]`.
    /// Only the device bytes of a quantity or category sample are read; a correlation
    /// (and its members), a workout or an unrecognized sample is decoded whole. Each
    /// record's CRC32C is checked; a slot whose bytes hold another UUID is
    /// `QueryError.indexDisagrees`.
    func devices(of slots: [UInt32], in index: SampleIndex) throws -> (ids: [UInt32], devices: [Device]) {
        var ids: [UInt32] = []
        ids.reserveCapacity(slots.count)
        var devices: [Device] = []
        var known: [[UInt8]: UInt32] = [:]
        var lastBytes: [UInt8] = [], lastId: UInt32 = 0
        func intern(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws -> UInt32 {
            if bytes.elementsEqual(lastBytes) { return lastId }
            let key = [UInt8](bytes)
            if let id = known[key] {
                lastId = id
            } else {
                var r = ByteReader(bytes)
                r.base = offset
                devices.append(try SampleCodec.decodeDevice(&r))
                try r.finish()
                lastId = UInt32(devices.count)
                known[key] = lastId
            }
            lastBytes = key
            return lastId
        }
        func intern(_ device: Device?) throws -> UInt32 {
            guard let device else { return 0 }
            var w = ByteWriter(capacity: 64)
            SampleCodec.encodeDevice(device, into: &w)
            return try w.bytes.withUnsafeBytes { try intern($0, at: 0) }
        }
        var i = 0
        while i < slots.count {
            let offset = index.slots[Int(slots[i])].recordOffset
            var j = i + 1
            while j < slots.count, index.slots[Int(slots[j])].recordOffset == offset { j += 1 }
            let (version, length) = try readRecord(at: offset)
            let payload = Array(scratch[LogFormat.recordHeaderLength..<LogFormat.recordHeaderLength + length])
            let table = try makeTable(payload, version: version, offset: offset)
            try payload.withUnsafeBytes { p throws in
                var decoded: (top: Int, sample: Sample)?
                for slot in slots[i..<j] {
                    let e = index.slots[Int(slot)]
                    let position = index.position(slot)
                    guard let at = table.locate(position) else {
                        throw QueryError.indexDisagrees(slot: slot, reason: "no position \(position) in its record")
                    }
                    let from = Int(table.starts[at.top]), to = Int(table.starts[at.top + 1])
                    var r = ByteReader(UnsafeRawBufferPointer(rebasing: p[from..<to]))
                    r.base = from
                    var sub = try r.lengthPrefixed()
                    let top = sub
                    if at.member < 0, let span = try SampleCodec.deviceSpan(&sub, version: table.version) {
                        guard span.start.bitPattern == e.start.bitPattern, span.end.bitPattern == e.end.bitPattern else {
                            throw QueryError.indexDisagrees(slot: slot, reason: "the log holds a sample from \(span.start) to \(span.end) "
                                                            + "there, the index one from \(e.start) to \(e.end)")
                        }
                        ids.append(try span.device.map { try intern(UnsafeRawBufferPointer(rebasing: p[$0]), at: $0.lowerBound) } ?? 0)
                        continue
                    }
                    if decoded?.top != at.top {
                        var whole = top
                        decoded = (at.top, try SampleCodec.decode(&whole, source: nil, version: table.version).sample)
                    }
                    var sample = decoded!.sample
                    if at.member >= 0 {
                        guard case .correlation(let c) = sample, at.member < c.objects.count else {
                            throw QueryError.indexDisagrees(slot: slot, reason: "member \(at.member) is not in its correlation")
                        }
                        sample = .quantity(c.objects[at.member])
                    }
                    let (s, t) = (sample.startDate.timeIntervalSinceReferenceDate, sample.endDate.timeIntervalSinceReferenceDate)
                    guard s.bitPattern == e.start.bitPattern, t.bitPattern == e.end.bitPattern else {
                        throw QueryError.indexDisagrees(slot: slot, reason: "the log holds a sample from \(s) to \(t) there, "
                                                        + "the index one from \(e.start) to \(e.end)")
                    }
                    ids.append(try intern(sample.common.device))
                }
            }
            i = j
        }
        return (ids, devices)
    }
}
