import Foundation
import HealthModel
import LedgerLog

/// What the rules and the projections need of an event.
///
/// For every kind but `samplesSaved` that is the event itself. For a save it is the
/// flattened list of sample headers (identity, type, interval, replacement, sync
/// identity), which replay reads straight from the bytes without decoding the
/// samples. The store, replay and `verify` all check and fold facts, so one piece of
/// code decides what is allowed and what state results.
enum EventFacts {
    case other(Event)
    /// `syncIdentifiers` holds the strings a header's `syncIndex` counts into (from
    /// the slice's start).
    case samplesSaved(app: AppOrdinal, headers: ArraySlice<SampleCodec.Header>, syncIdentifiers: ArraySlice<String>)

    /// Facts of a decoded event (the store's path). Equal to `read(_:)` on its bytes.
    init(_ event: Event) {
        guard case .samplesSaved(let app, let samples) = event else {
            self = .other(event)
            return
        }
        var headers: [SampleCodec.Header] = []
        var strings: [String] = []
        for saved in samples {
            Self.appendHeaders(saved.sample, replaces: saved.replaces, memberOf: nil, into: &headers, strings: &strings)
        }
        self = .samplesSaved(app: app, headers: headers[...], syncIdentifiers: strings[...])
    }

    /// Appends the headers of `sample` (then of its members, for a correlation) to
    /// `headers`, its sync identifier to `strings`: the facts of one saved sample.
    static func appendHeaders(_ sample: Sample, replaces: UUID?, memberOf: Int?, into headers: inout [SampleCodec.Header],
                              strings: inout [String]) {
        let (kind, code) = SampleCodec.kindAndCode(sample)
        let sync = (try? sample.common.metadata.syncIdentity()) ?? nil
        let index = headers.count
        var syncIndex: Int32 = -1
        if let sync {
            syncIndex = Int32(strings.count)
            strings.append(sync.identifier)
        }
        headers.append(SampleCodec.Header(kind: kind, uuid: sample.uuid, typeCode: code,
                                          start: sample.startDate.timeIntervalSinceReferenceDate,
                                          end: sample.endDate.timeIntervalSinceReferenceDate, replaces: replaces,
                                          syncIndex: syncIndex, syncVersion: sync?.version ?? 0, memberOf: memberOf))
        if case .quantity(let q) = sample {
            headers[index].value = SampleCodec.canonicalValue(q.quantity, typeCode: code)
            headers[index].userEntered = q.common.metadata[Metadata.WellKnownKey.wasUserEntered].map(SampleCodec.saysYes) ?? false
        }
        if case .correlation(let c) = sample {
            for member in c.objects {
                appendHeaders(.quantity(member), replaces: nil, memberOf: index, into: &headers, strings: &strings)
            }
        }
    }

    /// Facts read from a record: a save's headers without decoding its samples, any
    /// other kind decoded in full. `scratch` and `strings` are reused between calls.
    static func read(kind: UInt16, version: UInt16, payload: UnsafeRawBufferPointer,
                     scratch: inout [SampleCodec.Header], strings: inout [String]) throws(EventDecodingError) -> EventFacts {
        guard kind == EventKind.samplesSaved.rawValue else {
            return .other(try EventCodec.decode(kind: kind, version: version, payload: payload))
        }
        scratch.removeAll(keepingCapacity: true)
        strings.removeAll(keepingCapacity: true)
        let app = try readSave(version: version, payload: payload, into: &scratch, strings: &strings)
        return .samplesSaved(app: app, headers: scratch[...], syncIdentifiers: strings[...])
    }

    /// `readSave` of a payload lent as a span (`RecordView.withPayload`).
    static func readSave(version: UInt16, payload: RawSpan, into headers: inout [SampleCodec.Header],
                         strings: inout [String]) throws(EventDecodingError) -> AppOrdinal {
        try payload.withUnsafeBytes { (bytes) throws(EventDecodingError) -> AppOrdinal in
            try readSave(version: version, payload: bytes, into: &headers, strings: &strings)
        }
    }

    /// Appends a save's sample headers to `headers` (and sync identifiers to
    /// `strings`, indexed from where they start) without decoding the samples.
    /// Replay's reader thread decodes straight into its chunks with this.
    static func readSave(version: UInt16, payload: UnsafeRawBufferPointer, into headers: inout [SampleCodec.Header],
                         strings: inout [String]) throws(EventDecodingError) -> AppOrdinal {
        guard version >= 1 && version <= EventKind.samplesSaved.currentVersion else {
            throw .unknownVersion(kind: EventKind.samplesSaved.rawValue, version: version)
        }
        var r = ByteReader(payload)
        let actor = try r.varint()
        guard actor != 0, actor <= UInt64(UInt32.max) else { throw .malformed(offset: 0, reason: "samplesSaved needs an app as its actor") }
        let stringBase = strings.count
        let n = try r.count(limit: r.remaining)
        for _ in 0..<n {
            var sub = try r.lengthPrefixed()
            try SampleCodec.headers(&sub, into: &headers, strings: &strings, stringBase: stringBase, version: version)
        }
        try r.finish()
        return AppOrdinal(actor)
    }
}
