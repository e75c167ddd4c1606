import Foundation
import HealthModel
import LedgerLog

/// Reads samples out of the log by the offsets the sample index holds: the log is
/// the store, the index only knows where to look.
package struct SampleFetcher {
    private let reader: LogReader
    private var cached: (offset: UInt64, samples: [Sample])?

    package init(reader: LogReader) { self.reader = reader }

    /// The sample in `slot`, decoded from its record, stamped with its source.
    package mutating func sample(_ slot: UInt32, in state: LedgerState) throws -> Sample {
        let entry = state.samples.entry(slot)
        if let cached, cached.offset == entry.recordOffset, Int(entry.position) < cached.samples.count {
            return cached.samples[Int(entry.position)]
        }
        let record = try reader.record(atOffset: entry.recordOffset)
        try SealScopes.requireSealed(kind: record.kind, inSealedLog: reader.header.allowsSealedRecords,
                                     sealed: record.sealedKeyId != nil)
        let event = try EventCodec.decode(record, source: state.registry.source)
        guard case .samplesSaved(_, let saved) = event else {
            throw EventDecodingError.malformed(offset: 0, reason: "record at \(entry.recordOffset) is not a save")
        }
        var flat: [Sample] = []
        for s in saved {
            flat.append(s.sample)
            if case .correlation(let c) = s.sample { flat.append(contentsOf: c.objects.map(Sample.quantity)) }
        }
        // The index holds no UUID: the sample there must be of the slot's interval.
        guard Int(entry.position) < flat.count,
              flat[Int(entry.position)].startDate.timeIntervalSinceReferenceDate.bitPattern == entry.start.bitPattern,
              flat[Int(entry.position)].endDate.timeIntervalSinceReferenceDate.bitPattern == entry.end.bitPattern else {
            throw EventDecodingError.malformed(offset: 0, reason: "sample index and log disagree at slot \(slot)")
        }
        cached = (entry.recordOffset, flat)
        return flat[Int(entry.position)]
    }
}
