import Foundation

extension SnapshotFile {
    /// Section 60, only when credentials were issued: varint n · n × (varint length ·
    /// `credentialIssued` payload · varint issuedAt sequence · zigzag its recordedAt ·
    /// varint revokedAt sequence or 0 · zigzag its recordedAt (0 when not revoked) ·
    /// optional string reason), by credential id ascending.
    static let credentialsSection = SnapshotSectionCodec(section: .credentials, encode: { source, w in
        let entries = source.state.credentials.all
        guard !entries.isEmpty else { return false }
        w.varint(entries.count)
        for e in entries {
            w.lengthPrefixed { $0.append(contentsOf: EventCodec.payload(.credentialIssued(e.issue))) }
            w.varint(e.issuedAt)
            w.zigzag(e.issuedRecordedAt)
            w.varint(e.revokedAt ?? 0)
            w.zigzag(e.revokedRecordedAt ?? 0)
            SampleCodec.optionalString(e.revocationReason, into: &w)
        }
        return true
    }, decode: { r, contents in
        for _ in 0..<(try r.count()) {
            guard case .credentialIssued(let issue) = try SnapshotContents.event(&r, .credentialIssued) else {
                throw r.malformed("credential")
            }
            var entry = CredentialRegistry.Entry(issue: issue, issuedAt: try r.varint(), issuedRecordedAt: try r.zigzag())
            let revokedAt = try r.varint(), revokedRecordedAt = try r.zigzag()
            let reason = try SampleCodec.optionalString(&r)
            if revokedAt > 0 {
                entry.revokedAt = revokedAt
                entry.revokedRecordedAt = revokedRecordedAt
                entry.revocationReason = reason
            }
            contents.credentials.append(entry)
        }
    }, required: false)
}
