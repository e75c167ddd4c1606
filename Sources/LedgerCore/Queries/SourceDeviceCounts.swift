import Foundation
import HealthModel
import LedgerLog

/// How many samples of one type one source saved with one device.
public struct SourceDeviceCount: Sendable, Hashable {
    /// The samples' type.
    public let type: ObjectType
    /// The source as samples carry it (`AppRegistry.source`).
    public let source: Source?
    /// The device the samples name (nil: none).
    public let device: Device?
    /// How many samples (at least 1).
    public let count: Int
}

/// "Where the data came from": samples counted per (type, source, device) without
/// decoding them. The sample index picks the samples exactly as a sample query of each
/// type would (`LedgerState.slots(matching:visibility:)`: live, visible, matching the
/// date predicate); the log gives only each one's device bytes (`RecordReads.devices`).
public enum SourceDeviceCounts {
    /// The counts for `types` (characteristic types have no samples), rows ordered by
    /// type code, source (app ordinal), then device (first seen in the log first).
    package static func count(types: [ObjectType], predicate: DatePredicate?, visibility: (ObjectType, LedgerState) -> QueryVisibility,
                             fs: any LogFileSystem, in state: inout LedgerState) throws -> [SourceDeviceCount] {
        var slots: [UInt32] = []
        for type in types {
            if case .characteristic = type { continue }
            let v = visibility(type, state)
            slots += state.slots(matching: SampleQuery(type: type, predicate: predicate), visibility: v)
        }
        slots.sort()
        let reads = try RecordReads(fs: fs)
        let (ids, devices) = try reads.devices(of: slots, in: state.samples)
        struct Key: Hashable {
            let type: UInt16
            let app: UInt32
            let device: UInt32
        }
        var tallies: [Key: Int] = [:]
        var last: Key?, run = 0
        state.samples.slots.withUnsafeBufferPointer { s in
            for (slot, id) in zip(slots, ids) {
                let key = Key(type: s[Int(slot)].typeCode, app: state.samples.app(slot), device: id)
                if key == last { run += 1; continue }
                if let last { tallies[last, default: 0] += run }
                last = key
                run = 1
            }
        }
        if let last { tallies[last, default: 0] += run }
        return tallies.keys.sorted { ($0.type, $0.app, $0.device) < ($1.type, $1.app, $1.device) }.compactMap { k in
            guard let type = ObjectType(code: k.type) else { return nil }
            return SourceDeviceCount(type: type, source: state.registry.source(AppOrdinal(k.app)),
                                     device: k.device == 0 ? nil : devices[Int(k.device) - 1], count: tallies[k]!)
        }
    }
}
