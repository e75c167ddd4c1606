import Foundation
import HealthModel
import LedgerLog

/// One read answered to a client (the access log's record, kind 1 `readAnswered`):
/// who read (the credential and its subject), what (the route, the types, the
/// predicate), how much came back, the status, and which state of the ledger it was
/// read from. Never a value read: the access log holds no health data.
package struct AccessEntry: Sendable, Equatable {
    /// The credential presented (nil: none was, e.g. a refused request).
    package let credential: CredentialID?
    /// `owner`, or the app's bundle identifier (as the ledger's registry names it).
    package let subject: String
    /// The method and route template (`GET /v1/samples/{type}`).
    package let route: String
    /// The types asked for (identifiers), in the order asked.
    package let types: [String]
    /// The predicate as the client sent it (the `where` text and other filters), if any.
    package let predicate: String?
    /// Objects returned (samples, characteristics, statistics buckets, changes).
    package let returned: Int
    /// The HTTP status answered.
    package let status: Int
    /// The ledger's last sequence when it was read: the state the answer came from.
    package let ledgerSequence: UInt64
    /// The client's address (`127.0.0.1:51234`, `unix`).
    package let peer: String

    package init(credential: CredentialID?, subject: String, route: String, types: [String], predicate: String?, returned: Int,
                status: Int, ledgerSequence: UInt64, peer: String) {
        self.credential = credential
        self.subject = subject
        self.route = route
        self.types = types
        self.predicate = predicate
        self.returned = returned
        self.status = status
        self.ledgerSequence = ledgerSequence
        self.peer = peer
    }

    /// The access log's record kind.
    static let kind: UInt16 = 1
    static let version: UInt16 = 1

    /// The payload (events/FORMAT.md, "The access log"): u8 1 · varint credential id,
    /// or u8 0 · string subject · string route · varint n · n × string type · opt<string>
    /// predicate · varint returned · varint status · varint ledgerSequence · string peer.
    var payload: [UInt8] {
        var w = ByteWriter(capacity: 128)
        if let credential {
            w.u8(1)
            w.varint(credential.value)
        } else {
            w.u8(0)
        }
        w.string(subject)
        w.string(route)
        w.varint(types.count)
        for t in types { w.string(t) }
        SampleCodec.optionalString(predicate, into: &w)
        w.varint(returned)
        w.varint(status)
        w.varint(ledgerSequence)
        w.string(peer)
        return w.bytes
    }

    init(kind: UInt16, version: UInt16, payload: UnsafeRawBufferPointer) throws(EventDecodingError) {
        guard kind == Self.kind else { throw .unknownKind(kind: kind, version: version) }
        guard version == Self.version else { throw .unknownVersion(kind: kind, version: version) }
        var r = ByteReader(payload)
        credential = try EventCodec.bool(&r) ? CredentialID(try r.varint()) : nil
        subject = try r.string()
        route = try r.string()
        let n = try r.count(limit: r.remaining)
        var types: [String] = []
        for _ in 0..<n { types.append(try r.string()) }
        self.types = types
        predicate = try SampleCodec.optionalString(&r)
        returned = try r.count(limit: Int.max)
        status = try r.count(limit: 999)
        ledgerSequence = try r.varint()
        peer = try r.string()
        try r.finish()
    }
}

/// An access entry with what the access log stamped on it.
package struct StoredAccessEntry: Sendable, Equatable {
    package let sequence: UInt64
    /// Nanoseconds since the epoch.
    package let recordedAt: Int64
    package let entry: AccessEntry

    package var recordedDate: Date { Date(timeIntervalSince1970: Double(recordedAt) / 1e9) }
}
