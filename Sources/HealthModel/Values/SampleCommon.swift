import Foundation

/// What every sample has: identity, time interval, provenance and metadata.
///
/// Invariants (checked by `init`): dates are finite, in `ISO8601.validRange` (years
/// 0001…9999) and `endDate >= startDate`; UTC offsets within ±23:59;
/// metadata numbers are finite; a sync identifier comes with an integer sync version.
public struct SampleCommon: Hashable, Sendable {
    /// The object's identity, unique in a ledger.
    public let uuid: UUID
    /// When the sample starts.
    public let startDate: Date
    /// When the sample ends (equal to `startDate` for an instant).
    public let endDate: Date
    /// Metadata, keys verbatim.
    public let metadata: Metadata
    /// The device that measured it, if known.
    public let device: Device?
    /// The app that saved it; stamped by the store (a caller's value is replaced).
    public let source: Source?
    /// When the source created the object (exports carry it), if known.
    public let creationDate: Date?
    /// The UTC offsets the dates were written with, for imported samples.
    public let writtenOffsets: WrittenOffsets?

    /// Validates and builds; `field` names the sample in errors.
    public init(uuid: UUID = UUID(), startDate: Date, endDate: Date, metadata: Metadata = Metadata(),
                device: Device? = nil, source: Source? = nil, creationDate: Date? = nil,
                writtenOffsets: WrittenOffsets? = nil, field: String = "sample") throws {
        try Self.check(startDate: startDate, endDate: endDate, metadata: metadata, creationDate: creationDate,
                       writtenOffsets: writtenOffsets, field: field)
        self.uuid = uuid
        self.startDate = startDate
        self.endDate = endDate
        self.metadata = metadata
        self.device = device
        self.source = source
        self.creationDate = creationDate
        self.writtenOffsets = writtenOffsets
    }

    /// The checks `init` makes, without building the value: what a caller that encodes a
    /// sample's parts itself (the importer's direct encoding) runs, so that one
    /// definition of a valid sample holds whichever way it is written. Throws what
    /// `init` would throw for the same parts.
    public static func check(startDate: Date, endDate: Date, metadata: Metadata, creationDate: Date?,
                             writtenOffsets: WrittenOffsets?, field: String = "sample") throws {
        // The common case costs comparisons only: the texts naming the field are made
        // when a check fails, by the checks below, in their order.
        let limit = ISO8601.maxOffsetSeconds
        if ISO8601.isInRange(startDate), ISO8601.isInRange(endDate), endDate >= startDate,
           creationDate.map(ISO8601.isInRange) ?? true,
           writtenOffsets.map({ w in
               w.start.magnitude <= UInt(limit) && w.end.magnitude <= UInt(limit) && (w.creation ?? 0).magnitude <= UInt(limit)
                   && (w.creation != nil) == (creationDate != nil)
           }) ?? true {
            if !metadata.isEmpty { try metadata.validate() }
            return
        }
        guard startDate.timeIntervalSince1970.isFinite else { throw HealthModelError.nonFiniteValue(field: "\(field) startDate") }
        guard endDate.timeIntervalSince1970.isFinite else { throw HealthModelError.nonFiniteValue(field: "\(field) endDate") }
        try ISO8601.checkRange(startDate, field: "\(field) startDate")
        try ISO8601.checkRange(endDate, field: "\(field) endDate")
        guard endDate >= startDate else { throw HealthModelError.endBeforeStart(field: field, start: startDate, end: endDate) }
        if let creationDate {
            guard creationDate.timeIntervalSince1970.isFinite else { throw HealthModelError.nonFiniteValue(field: "\(field) creationDate") }
            try ISO8601.checkRange(creationDate, field: "\(field) creationDate")
        }
        try metadata.validate()
        if let w = writtenOffsets {
            // Start, end, creation, in that order (no array: this runs for every sample an import writes).
            func checkOffset(_ o: Int) throws {
                guard o.magnitude > UInt(ISO8601.maxOffsetSeconds) else { return }  // not abs: abs(Int.min) traps
                throw HealthModelError.valueOutOfRange(field: "\(field) UTC offset", value: Double(o),
                                                       range: "±\(ISO8601.maxOffsetSeconds) s (±23:59)")
            }
            try checkOffset(w.start)
            try checkOffset(w.end)
            try checkOffset(w.creation ?? 0)
            guard (w.creation != nil) == (creationDate != nil) else {
                throw HealthModelError.invalidField(field: "\(field) UTC offsets", reason: "a creation offset needs a creation date")
            }
        }
    }

    /// The same sample attributed to `source` (the store does this on save).
    public func stamped(source: Source?) -> SampleCommon {
        SampleCommon(unchecked: uuid, startDate, endDate, metadata, device, source, creationDate, writtenOffsets)
    }

    init(unchecked uuid: UUID, _ start: Date, _ end: Date, _ metadata: Metadata, _ device: Device?,
         _ source: Source?, _ creationDate: Date?, _ writtenOffsets: WrittenOffsets?) {
        self.uuid = uuid
        self.startDate = start
        self.endDate = end
        self.metadata = metadata
        self.device = device
        self.source = source
        self.creationDate = creationDate
        self.writtenOffsets = writtenOffsets
    }
}

/// A sample of any kind exposes its common part.
public protocol SampleValue: Hashable, Sendable {
    /// Identity, interval, provenance and metadata.
    var common: SampleCommon { get }
}

extension SampleValue {
    /// The object's UUID.
    public var uuid: UUID { common.uuid }
    /// When the sample starts.
    public var startDate: Date { common.startDate }
    /// When the sample ends.
    public var endDate: Date { common.endDate }
    /// The sample's metadata.
    public var metadata: Metadata { common.metadata }
    /// The measuring device, if known.
    public var device: Device? { common.device }
    /// The app that saved the sample (set once stored).
    public var source: Source? { common.source }
}
