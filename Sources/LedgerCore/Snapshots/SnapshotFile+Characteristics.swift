import Foundation
import HealthModel

extension SnapshotFile {
    /// Section 3: the characteristics set, as `characteristicSet` payloads by type.
    static let characteristicsSection = SnapshotSectionCodec(section: .characteristics, encode: { source, w in
        let characteristics = source.state.characteristics
        let types = characteristics.keys.sorted { $0.rawValue < $1.rawValue }
        w.varint(types.count)
        for t in types { w.append(contentsOf: EventCodec.payload(.characteristicSet(characteristics[t]!))) }
        return true
    }, decode: { r, contents in
        for _ in 0..<(try r.count()) {
            _ = try r.varint()  // actor (owner)
            contents.events.append(.characteristicSet(try EventCodec.characteristic(&r)))
        }
    }, required: true)
}
