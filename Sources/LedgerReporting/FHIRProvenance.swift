import Foundation
import HealthModel

/// Who wrote a set of exported resources, and how a receiver proves it: the FHIR
/// Provenance of one saving event's resources (DESIGN.md, "FHIR export").
package struct FHIRProvenance: Sendable, Equatable {
    /// The Provenance's id.
    package let id: String
    /// References (`Observation/<uuid>`).
    package var targets: [String]
    /// When the event was recorded (the log record's time).
    package let recorded: Date
    /// The ledger's origin line, `healthledger/<ledger id>`.
    package let origin: String
    /// The ledger's id (the namespace of its event sequence numbers).
    package let ledgerId: UUID
    /// The event (log record) that wrote the targets; nil for resources derived from
    /// the ledger's state as a whole (the Patient).
    package let sequence: UInt64?
    /// The app that saved the samples, when known.
    package let author: String?
    /// The checkpoint the export was read at: its tree size and root.
    package let checkpoint: FHIRCheckpoint?

    package init(id: String, targets: [String], recorded: Date, origin: String, ledgerId: UUID, sequence: UInt64?,
                 author: String?, checkpoint: FHIRCheckpoint?) {
        self.id = id
        self.targets = targets
        self.recorded = recorded
        self.origin = origin
        self.ledgerId = ledgerId
        self.sequence = sequence
        self.author = author
        self.checkpoint = checkpoint
    }
}

/// A ledger's checkpoint: the Merkle tree of its first `size` events and that tree's root.
package struct FHIRCheckpoint: Sendable, Equatable {
    /// Events in the tree (the checkpoint's size).
    package let size: UInt64
    /// The RFC 9162 root hash, 32 bytes.
    package let root: [UInt8]

    package init(size: UInt64, root: [UInt8]) {
        self.size = size
        self.root = root
    }

    /// The root in lower-case hexadecimal.
    package var rootHex: String { root.map { String($0, radix: 16).leftPadded(2) }.joined() }
    /// The root in base64, as `checkpoint` prints it.
    package var rootBase64: String { Data(root).base64EncodedString() }
}

extension FHIRResources {
    /// A Provenance: its targets, the ledger as custodian, the app as author, the
    /// event as source entity (identifier: the sequence number in the ledger's
    /// namespace, `urn:uuid:<ledger id>`) and the checkpoint as an extension
    /// (`checkpointExtension`: origin, size, root in hex and base64).
    package static func provenance(_ p: FHIRProvenance, into j: inout JSONBytes) {
        j.openObject()
        j.member("resourceType", "Provenance")
        j.member("id", p.id)
        j.key("extension")
        j.openArray()
        j.openObject()
        j.member("url", checkpointExtension)
        j.key("extension")
        j.openArray()
        stringExtension("origin", p.origin, &j)
        if let sequence = p.sequence { stringExtension("event", String(sequence), &j) }
        if let checkpoint = p.checkpoint {
            stringExtension("checkpointSize", String(checkpoint.size), &j)
            stringExtension("checkpointRootHex", checkpoint.rootHex, &j)
            stringExtension("checkpointRoot", checkpoint.rootBase64, &j)
        }
        j.closeArray()
        j.closeObject()
        j.closeArray()
        j.key("target")
        j.openArray()
        for target in p.targets { reference(target, &j) }
        j.closeArray()
        j.member("recorded", ISO8601.string(p.recorded))
        j.key("agent")
        j.openArray()
        if let author = p.author { agent("author", "Author", author, system: "urn:healthledger:source", &j) }
        agent("custodian", "Custodian", p.origin, system: "urn:healthledger:ledger", &j)
        j.closeArray()
        if let sequence = p.sequence {
            j.key("entity")
            j.openArray()
            j.openObject()
            j.member("role", "source")
            j.key("what")
            j.openObject()
            j.key("identifier")
            j.openObject()
            j.member("system", "urn:uuid:" + p.ledgerId.uuidString.lowercased())
            j.member("value", String(sequence))
            j.closeObject()
            j.member("display", "event \(sequence) of \(p.origin)")
            j.closeObject()
            j.closeObject()
            j.closeArray()
        }
        j.closeObject()
    }

    private static func stringExtension(_ url: String, _ value: String, _ j: inout JSONBytes) {
        j.openObject()
        j.member("url", url)
        j.member("valueString", value)
        j.closeObject()
    }

    private static func agent(_ code: String, _ display: String, _ who: String, system: String, _ j: inout JSONBytes) {
        j.openObject()
        j.key("type")
        j.openObject()
        j.key("coding")
        j.openArray()
        coding(participantSystem, code, display, &j)
        j.closeArray()
        j.closeObject()
        j.key("who")
        j.openObject()
        j.key("identifier")
        j.openObject()
        j.member("system", system)
        j.member("value", who)
        j.closeObject()
        j.member("display", who)
        j.closeObject()
        j.closeObject()
    }

    /// A Bulk Data deletion: a transaction Bundle with one `DELETE <reference>` entry.
    package static func deletion(_ reference: String, into j: inout JSONBytes) {
        j.openObject()
        j.member("resourceType", "Bundle")
        j.member("type", "transaction")
        j.key("entry")
        j.openArray()
        j.openObject()
        j.key("request")
        j.openObject()
        j.member("method", "DELETE")
        j.member("url", reference)
        j.closeObject()
        j.closeObject()
        j.closeArray()
        j.closeObject()
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
