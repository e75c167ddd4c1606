import Foundation
import HealthModel
import LedgerCore

extension ExportMapper {
    // MARK: Correlation

    func correlation() throws(ImportError) -> MappedCorrelation {
        let mark = pendingChildren.count
        let head = try recordHead()
        var metadata = Metadata()
        var members: [MappedRecord] = []
        let depth = scanner.depth
        loop: while true {
            switch try nextToken() {
            case .endElement where scanner.depth == depth - 1: break loop
            case .endElement: continue
            case .endOfDocument: throw invalid("the document ends inside a Correlation")
            case .startElement:
                switch ExportName(rawValue: scanner.element) {
                case .MetadataEntry? where scanner.depth == depth + 1:
                    let entry = try metadataEntry()
                    metadata.append(entry.key, entry.value)
                case .Record? where scanner.depth == depth + 1:
                    members.append(try record(member: true))
                default:
                    try keepChild(below: depth)
                }
            }
        }
        let uuid = identity.uuid(.correlation)
        try attachPendingChildren(from: mark, to: "Correlation", [MetadataEntry(key: "uuid", value: .string(uuid.uuidString))])
        let source = sourceValue(head.source, head.sourceVersion)
        guard case .correlation(let type)? = head.type else {
            throw invalid("a Correlation of unknown type '\(typeName(head))'")
        }
        var linked: [QuantitySample] = []
        var fingerprints: [UInt64] = []
        var unlinked: [MappedRecord] = []
        for m in members {
            if case .quantity(let q) = m.sample, type.admits(q.type) {
                linked.append(q)
                fingerprints.append(m.exactFingerprint)
            } else {
                unlinked.append(m)
            }
        }
        do {
            let common = try SampleCommon(uuid: uuid, startDate: head.start.0, endDate: head.end.0, metadata: metadata,
                                          device: device(head), source: source, creationDate: head.creation?.0,
                                          writtenOffsets: WrittenOffsets(start: head.start.1, end: head.end.1, creation: head.creation?.1))
            let c = try Correlation(type: type, objects: linked, common: common)
            return MappedCorrelation(sample: .correlation(c), source: head.source, memberFingerprints: fingerprints,
                                     unlinked: unlinked)
        } catch {
            throw invalid("Correlation: \(error)")
        }
    }
}
