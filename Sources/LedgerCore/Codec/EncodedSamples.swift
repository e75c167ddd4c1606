import Foundation
import HealthModel
import LedgerLog

/// Samples already encoded as the body of a `samplesSaved` payload (`n × (varint
/// length · sample)`, events/FORMAT.md, "sample"), with the facts the rules and the
/// projections fold (their headers): what a bulk writer — the Apple Health importer —
/// hands the ledger (`LedgerCommand.saveEncoded`), so that no `Sample` is built,
/// copied, encoded again or taken apart again on the ledger's side.
///
/// Filled by `append(_:)`, from a model value (encoded by `SampleCodec.encode`, its
/// headers as `EventFacts` takes them), or `append(_: SampleParts)`, from parts the
/// model's own checks accepted when the `SampleParts` was made (`SampleCommon.check`,
/// `QuantityType.validate`, `CategoryType.validate`): the bytes are those
/// `SampleCodec.encode` writes for the same sample (tests hold the two ways to the
/// same bytes over whole exports).
///
/// Invariants: `frameEnds` and `headerEnds` have one entry per top-level sample and
/// increase strictly; the last of each is `body.count` and `headers.count`; a
/// header's `memberOf` names the top-level header of its own sample; a header's
/// `syncIndex` indexes `syncIdentifiers`; no sample replaces anything until the
/// ledger decides it does (`replacing(_:)`).
package struct EncodedSamples: Sendable {
    /// `n × (varint length · sample)`, n = `count`.
    private(set) var body = PayloadWriter(capacity: 0)
    /// Per top-level sample, where its frame (length prefix included) ends in `body`.
    private(set) var frameEnds: [Int] = []
    /// The samples' headers in flattened order (a correlation's members after it).
    private(set) var headers: [SampleCodec.Header] = []
    /// Per top-level sample, where its headers end in `headers`.
    private(set) var headerEnds: [Int] = []
    /// The sync identifiers the headers' `syncIndex` count into.
    private(set) var syncIdentifiers: [String] = []

    /// No samples; `samples` and `bytes` are hints for the room to reserve.
    package init(reservingSamples samples: Int = 0, bytes: Int = 0) {
        body = PayloadWriter(capacity: bytes)
        frameEnds.reserveCapacity(samples)
        headerEnds.reserveCapacity(samples)
        headers.reserveCapacity(samples)
    }

    /// Top-level samples (a correlation's members are part of it).
    package var count: Int { frameEnds.count }
    /// Whether it holds no sample.
    package var isEmpty: Bool { frameEnds.isEmpty }
    /// Bytes of the encoded samples (the payload is this plus its actor and count).
    package var byteCount: Int { body.count }

    // MARK: Filling

    /// Appends `sample` (top-level; a correlation with its members), encoded as a
    /// save of it writes it (no replacement: the ledger decides that).
    package mutating func append(_ sample: Sample) {
        body.lengthPrefixed { SampleCodec.encode(sample, replaces: nil, into: &$0) }
        EventFacts.appendHeaders(sample, replaces: nil, memberOf: nil, into: &headers, strings: &syncIdentifiers)
        frameEnds.append(body.count)
        headerEnds.append(headers.count)
    }

    /// Appends a quantity or category sample from its checked parts (their units,
    /// devices and versions in `table`), as `SampleCodec.encode` writes the same sample
    /// (flags 2, 4, 8, 64 as present).
    package mutating func append(_ p: SampleParts, from table: SamplePartsTable) {
        var flags = SampleCodec.Flags()
        if p.device >= 0 { flags.insert(.device) }
        if p.creation != nil { flags.insert(.creationDate) }
        if p.sourceVersion >= 0 { flags.insert(.sourceVersion) }
        if p.offsets != nil { flags.insert(.writtenOffsets) }
        let creationOffset = p.creation != nil ? Int64(p.offsets?.creation ?? 0) : nil
        do {
            let unit = table.spelling(ofUnit: p.unitIndex), device = table.piece(p.device), version = table.piece(p.sourceVersion)
            var length = 36  // kind, uuid, type, start, end, flags
            switch p.body {
            case .quantity: length += 8 + unit.count
            case .category(let value): length += Self.varintLength(Self.zigzag(Int64(value)))
            }
            length += device.count
            if p.creation != nil { length += 8 }
            length += version.count
            if let o = p.offsets {
                length += Self.varintLength(Self.zigzag(Int64(o.start))) + Self.varintLength(Self.zigzag(Int64(o.end)))
                if let c = creationOffset { length += Self.varintLength(Self.zigzag(c)) }
            }
            let total = Self.varintLength(UInt64(length)) + length
            // Written on the stack, then appended in one copy (no zero-fill of the tail).
            withUnsafeTemporaryAllocation(byteCount: total, alignment: 8) { out in
                var w = RawWriter(out)
                w.varint(UInt64(length))
                w.u8(p.kind.rawValue)
                withUnsafeBytes(of: p.uuid.uuid) { w.bytes($0) }
                w.u16(p.typeCode)
                w.f64(p.start)
                w.f64(p.end)
                w.u8(flags.rawValue)
                switch p.body {
                case .quantity(let value, _):
                    w.f64(value)
                    w.bytes(unit)
                case .category(let value):
                    w.varint(Self.zigzag(Int64(value)))
                }
                w.bytes(device)
                if let c = p.creation { w.f64(c) }
                w.bytes(version)
                if let o = p.offsets {
                    w.varint(Self.zigzag(Int64(o.start)))
                    w.varint(Self.zigzag(Int64(o.end)))
                    if let c = creationOffset { w.varint(Self.zigzag(c)) }
                }
                precondition(w.written == total, "a sample's parts encode to the length computed for them")
                body.append(contentsOf: UnsafeRawBufferPointer(out))
            }
        }
        var h = SampleCodec.Header(kind: p.kind, uuid: p.uuid, typeCode: p.typeCode, start: p.start, end: p.end, replaces: nil,
                                   syncIndex: -1, syncVersion: 0, memberOf: nil)
        if case .quantity(_, let canonical) = p.body { h.value = canonical }
        headers.append(h)
        frameEnds.append(body.count)
        headerEnds.append(headers.count)
    }

    /// Empties it, keeping its storage (when not shared) for the next samples.
    package mutating func removeAll() {
        body.removeAll()
        frameEnds.removeAll(keepingCapacity: true)
        headers.removeAll(keepingCapacity: true)
        headerEnds.removeAll(keepingCapacity: true)
        syncIdentifiers.removeAll(keepingCapacity: true)
    }

    // MARK: Reading

    private func headerIndex(ofSample i: Int) -> Int { i == 0 ? 0 : headerEnds[i - 1] }
    private func frameStart(ofSample i: Int) -> Int { i == 0 ? 0 : frameEnds[i - 1] }

    /// The UUID of top-level sample `i`.
    package func uuid(ofSample i: Int) -> UUID { headers[headerIndex(ofSample: i)].uuid }

    /// The type code of top-level sample `i` (0 for a record kept raw).
    package func typeCode(ofSample i: Int) -> UInt16 { headers[headerIndex(ofSample: i)].typeCode }

    /// The start date of top-level sample `i` (seconds since 2001-01-01T00:00:00Z).
    package func start(ofSample i: Int) -> Double { headers[headerIndex(ofSample: i)].start }

    /// The sync identity of top-level sample `i`, if its metadata has one.
    package func syncIdentity(ofSample i: Int) -> (identifier: String, version: Int64)? {
        let h = headers[headerIndex(ofSample: i)]
        guard h.syncIndex >= 0 else { return nil }
        return (syncIdentifiers[Int(h.syncIndex)], h.syncVersion)
    }

    /// The type identifier of top-level sample `i` as its save names it: the model's
    /// identifier, or for a record kept raw (type code 0) the identifier it was written with.
    package func typeIdentifier(ofSample i: Int) -> String {
        let code = typeCode(ofSample: i)
        if code != 0 { return ObjectType(code: code)?.identifier ?? "type \(code)" }
        // Our own frame: length · kind · uuid · type · start · end · flags · [replaces] ·
        // [sync] · typeIdentifier · … (it reads; a failure would be a bug, not input).
        return body.withWrittenBytes { all in
            var outer = ByteReader(UnsafeRawBufferPointer(rebasing: all[frameStart(ofSample: i)..<frameEnds[i]]))
            do {
                var r = try outer.lengthPrefixed()
                let flags = try SampleCodec.readFrame(&r, version: EventKind.samplesSaved.currentVersion, asMember: false).5
                if flags.contains(.replaces) { _ = try r.uuid() }
                if flags.contains(.sync) { try r.skipString(); _ = try r.zigzag() }
                return try r.string()
            } catch {
                preconditionFailure("an encoded sample reads back: \(error)")
            }
        }
    }

    /// The headers and sync identifiers as a save's facts (`EventFacts`).
    func facts(app: AppOrdinal) -> EventFacts {
        .samplesSaved(app: app, headers: headers[...], syncIdentifiers: syncIdentifiers[...])
    }

    /// Writes a `samplesSaved` payload (current version) of these samples by `app`.
    func writePayload(app: AppOrdinal, into w: inout PayloadWriter) {
        w.varint(UInt64(app))
        w.varint(count)
        body.withWrittenBytes { w.append(contentsOf: $0) }
    }

    // MARK: Deriving

    /// The samples `keep` keeps (by top-level index), in order, with their headers
    /// (members' `memberOf` and sync indices renumbered).
    package func filtered(keeping keep: (Int) -> Bool) -> EncodedSamples {
        var out = EncodedSamples(reservingSamples: count, bytes: body.count)
        body.withWrittenBytes { all in
            for i in 0..<count where keep(i) {
                out.body.append(contentsOf: UnsafeRawBufferPointer(rebasing: all[frameStart(ofSample: i)..<frameEnds[i]]))
                out.copyHeaders(of: i, from: self, replaces: nil)
                out.frameEnds.append(out.body.count)
                out.headerEnds.append(out.headers.count)
            }
        }
        return out
    }

    /// The samples grouped by `group(i)` (of each top-level index), groups in the order
    /// of their first sample, samples in order within each: one pass over the bytes.
    /// One group (the common case: an import's batch is one type, an ingest's samples
    /// come in date order) is these samples themselves, not a copy; a key equal to the
    /// previous sample's is not hashed again.
    package func split<Key: Hashable>(by group: (Int) -> Key) -> [(key: Key, samples: EncodedSamples)] {
        guard count > 0 else { return [] }
        var keys: [Key] = []
        keys.reserveCapacity(count)
        var uniform = true
        for i in 0..<count {
            let key = group(i)
            if uniform, let first = keys.first, first != key { uniform = false }
            keys.append(key)
        }
        if uniform { return [(keys[0], self)] }
        var order: [Key] = []
        var slots: [Key: Int] = [:]
        var groups: [EncodedSamples] = []
        var last: (key: Key, slot: Int)?
        body.withWrittenBytes { all in
            for i in 0..<count {
                let key = keys[i]
                let g: Int
                if let last, last.key == key {
                    g = last.slot
                } else if let known = slots[key] {
                    g = known
                } else {
                    g = groups.count
                    slots[key] = g
                    order.append(key)
                    groups.append(EncodedSamples())
                }
                last = (key, g)
                groups[g].body.append(contentsOf: UnsafeRawBufferPointer(rebasing: all[frameStart(ofSample: i)..<frameEnds[i]]))
                groups[g].copyHeaders(of: i, from: self, replaces: headers[headerIndex(ofSample: i)].replaces)
                groups[g].frameEnds.append(groups[g].body.count)
                groups[g].headerEnds.append(groups[g].headers.count)
            }
        }
        return order.indices.map { (order[$0], groups[$0]) }
    }

    /// These samples with top-level sample `i` replacing `replacements[i]` where one is
    /// given: its frame gains the replaced UUID after its flags (flag 16) and its header
    /// names it, exactly as `SampleCodec.encode` writes a sample that replaces another.
    func replacing(_ replacements: [Int: UUID]) -> EncodedSamples {
        guard !replacements.isEmpty else { return self }
        var out = EncodedSamples(reservingSamples: count, bytes: body.count + 17 * replacements.count)
        body.withWrittenBytes { all in
            for i in 0..<count {
                let frame = UnsafeRawBufferPointer(rebasing: all[frameStart(ofSample: i)..<frameEnds[i]])
                if let replaced = replacements[i] {
                    var r = ByteReader(frame)
                    // Our own frames: the prefix reads (a failure here is a bug, not input).
                    guard let sample = try? r.lengthPrefixed().bytes else { preconditionFailure("an encoded frame reads back") }
                    precondition(sample.count > 36 && sample[35] & SampleCodec.Flags.replaces.rawValue == 0,
                                 "a sample is given its replacement once")
                    out.body.lengthPrefixed { w in
                        w.append(contentsOf: UnsafeRawBufferPointer(rebasing: sample[0..<35]))
                        w.append(sample[35] | SampleCodec.Flags.replaces.rawValue)
                        withUnsafeBytes(of: replaced.uuid) { w.append(contentsOf: $0) }
                        w.append(contentsOf: UnsafeRawBufferPointer(rebasing: sample[36...]))
                    }
                } else {
                    out.body.append(contentsOf: frame)
                }
                out.copyHeaders(of: i, from: self, replaces: replacements[i])
                out.frameEnds.append(out.body.count)
                out.headerEnds.append(out.headers.count)
            }
        }
        return out
    }

    /// Appends sample `i`'s headers from `source`, renumbered for this list.
    private mutating func copyHeaders(of i: Int, from source: EncodedSamples, replaces: UUID?) {
        let first = source.headerIndex(ofSample: i)
        let top = headers.count
        for k in first..<source.headerEnds[i] {
            var h = source.headers[k]
            if h.memberOf != nil { h.memberOf = top }
            if k == first { h.replaces = replaces }
            if h.syncIndex >= 0 {
                syncIdentifiers.append(source.syncIdentifiers[Int(h.syncIndex)])
                h.syncIndex = Int32(syncIdentifiers.count - 1)
            }
            headers.append(h)
        }
    }

    // MARK: Primitives

    @inline(__always) static func zigzag(_ v: Int64) -> UInt64 { UInt64(bitPattern: (v << 1) ^ (v >> 63)) }

    @inline(__always) static func varintLength(_ v: UInt64) -> Int {
        var n = 1, x = v
        while x >= 0x80 { x >>= 7; n += 1 }
        return n
    }

    /// Writes the encoding's primitives into memory sized for them beforehand.
    private struct RawWriter {
        let base: UnsafeMutableRawBufferPointer
        var written = 0
        init(_ base: UnsafeMutableRawBufferPointer) { self.base = base }
        @inline(__always) mutating func u8(_ v: UInt8) { base[written] = v; written += 1 }
        @inline(__always) mutating func u16(_ v: UInt16) {
            base.storeBytes(of: v.littleEndian, toByteOffset: written, as: UInt16.self)
            written += 2
        }
        @inline(__always) mutating func f64(_ v: Double) {
            base.storeBytes(of: v.bitPattern.littleEndian, toByteOffset: written, as: UInt64.self)
            written += 8
        }
        @inline(__always) mutating func varint(_ value: UInt64) {
            var v = value
            while v >= 0x80 { u8(UInt8(truncatingIfNeeded: v) | 0x80); v >>= 7 }
            u8(UInt8(v))
        }
        @inline(__always) mutating func bytes(_ b: UnsafeRawBufferPointer) {
            guard b.count > 0 else { return }
            precondition(written + b.count <= base.count, "a sample's parts encode to the length computed for them")
            (base.baseAddress! + written).copyMemory(from: b.baseAddress!, byteCount: b.count)
            written += b.count
        }
    }
}
