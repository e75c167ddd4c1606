import Foundation
import HealthModel

/// The start of an import of an Apple Health export: which export (its ExportDate
/// and `<Me>`), and what it said that has no event of its own.
///
/// Two forms (events/FORMAT.md, kind 9):
/// - a **transaction** (version 2, what this release writes): the import's events are
///   applied only when its `importFinished` comes (rule E11); the content hash, known
///   only once the export was read to the end, is in the `importFinished`;
/// - a **legacy** start (version 1, read from older ledgers): events applied as they
///   came, the content hash here.
///
/// Invariant: `contentSHA256` is nil (a transaction) or 32 bytes (legacy).
package struct ExportImportStart: Hashable, Sendable {
    /// Names this import; `importFinished` / `importAborted` refer to it.
    package let importId: UUID
    /// Legacy starts only: SHA-256 of the export's XML bytes (the same whether read
    /// from the zip, the unzipped folder or the XML itself). Nil for a transaction.
    package let contentSHA256: [UInt8]?
    /// `<ExportDate value=…>` as written.
    package let exportDate: String?
    /// `<HealthData locale=…>` as written.
    package let locale: String?
    /// The export's format version (from its DTD comment), when present.
    package let exportVersion: String?
    /// The file the user named (a zip, an XML or a folder).
    package let sourcePath: String
    /// Legacy starts only: true when the same export was imported before and
    /// `--again` was given. False for a transaction.
    package let again: Bool
    /// Every attribute of `<Me>`, verbatim, in order (characteristic events carry
    /// the ones this version understands).
    package let me: [MetadataEntry]

    /// A transaction's start (version 2).
    package init(importId: UUID, exportDate: String?, locale: String?, exportVersion: String?, sourcePath: String,
                me: [MetadataEntry]) {
        self.importId = importId
        self.contentSHA256 = nil
        self.exportDate = exportDate
        self.locale = locale
        self.exportVersion = exportVersion
        self.sourcePath = sourcePath
        self.again = false
        self.me = me
    }

    /// A legacy start (version 1: older ledgers, and tests of them).
    package init(importId: UUID, contentSHA256: [UInt8], exportDate: String?, locale: String?, exportVersion: String?,
                sourcePath: String, again: Bool, me: [MetadataEntry]) {
        precondition(contentSHA256.count == 32, "a SHA-256 digest is 32 bytes")
        self.importId = importId
        self.contentSHA256 = contentSHA256
        self.exportDate = exportDate
        self.locale = locale
        self.exportVersion = exportVersion
        self.sourcePath = sourcePath
        self.again = again
        self.me = me
    }

    /// Whether this import is a transaction (version 2): applied only once finished.
    package var isTransaction: Bool { contentSHA256 == nil }
}

/// The end of an import: what it brought, by name (`records`, `samplesSaved`,
/// `workouts`, `keptRaw`, …), in a fixed order, and (a transaction's, version 2)
/// the SHA-256 of the export's XML, known only once it was read to the end.
///
/// Invariant: `contentSHA256` is nil (legacy, version 1) or 32 bytes.
package struct ExportImportFinish: Hashable, Sendable {
    package let importId: UUID
    package let counts: [ImportCount]
    /// SHA-256 of the export's XML bytes (a transaction's finish); nil in a legacy one.
    package let contentSHA256: [UInt8]?

    package init(importId: UUID, counts: [ImportCount], contentSHA256: [UInt8]? = nil) {
        precondition(contentSHA256 == nil || contentSHA256!.count == 32, "a SHA-256 digest is 32 bytes")
        self.importId = importId
        self.counts = counts
        self.contentSHA256 = contentSHA256
    }
}

/// An import that did not finish (event kind 20, `importAborted`): the export turned
/// out malformed, the importer failed, or the ledger was opened again after the
/// importing process died. None of the import's events is applied (rule E11); they
/// stay in the log, append-only, for the audit.
package struct ExportImportAbort: Hashable, Sendable {
    /// The import (its `importStarted`, a transaction still open).
    package let importId: UUID
    /// Why, for people (the import's error, or how the next writer found it open).
    package let reason: String

    package init(importId: UUID, reason: String) {
        self.importId = importId
        self.reason = reason
    }
}

/// One named count of an import's summary.
package struct ImportCount: Hashable, Sendable {
    package let name: String
    package let value: UInt64

    package init(_ name: String, _ value: UInt64) {
        self.name = name
        self.value = value
    }
}

/// An import as the ledger knows it (the `imports` projection).
package struct ImportEntry: Hashable, Sendable {
    package let start: ExportImportStart
    /// The sequence number of the `importStarted` event.
    package let startedAt: UInt64
    /// The sequence number of the `importFinished` event, if it came.
    package internal(set) var finishedAt: UInt64?
    package internal(set) var counts: [ImportCount]
    /// SHA-256 of the export's XML: the start's (legacy) or the finish's (a transaction).
    package internal(set) var contentSHA256: [UInt8]?

    init(start: ExportImportStart, startedAt: UInt64, finishedAt: UInt64? = nil, counts: [ImportCount] = [],
         contentSHA256: [UInt8]? = nil) {
        self.start = start
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.counts = counts
        self.contentSHA256 = contentSHA256 ?? start.contentSHA256
    }

    /// The import's `importFinished` as it was written (counts, and a transaction's
    /// content hash): how snapshots and the digest hold it.
    package var finish: ExportImportFinish {
        ExportImportFinish(importId: start.importId, counts: counts, contentSHA256: start.isTransaction ? contentSHA256 : nil)
    }
}

/// An element of an export this release has no model for (a `ClinicalRecord`, an
/// `Audiogram` with its `SensitivityPoint`s, a `VisionPrescription`, whatever a
/// later iOS adds at the top level), kept as written so that nothing of the export
/// is lost: the element and everything inside it, in document order.
///
/// Invariants: `nodes` is not empty; `nodes[0]` is the element itself at depth 0;
/// every later node is at a depth of 1 up to one more than the node before it.
package struct ExportElement: Hashable, Sendable {
    /// One element: how deep below the kept one, its name, its attributes verbatim.
    package struct Node: Hashable, Sendable {
        package let depth: Int
        package let name: String
        package let attributes: [MetadataEntry]

        package init(depth: Int, name: String, attributes: [MetadataEntry]) {
            self.depth = depth
            self.name = name
            self.attributes = attributes
        }
    }

    package let nodes: [Node]

    /// The kept element's name (`Audiogram`).
    package var name: String { nodes[0].name }

    /// Throws `invalidField` unless the nodes form one element's tree (see the invariants).
    package init(nodes: [Node]) throws(HealthModelError) {
        guard let first = nodes.first, first.depth == 0 else {
            throw .invalidField(field: "export element", reason: "the first node must be the element itself, at depth 0")
        }
        for (previous, node) in zip(nodes, nodes.dropFirst()) where node.depth < 1 || node.depth > previous.depth + 1 {
            throw .invalidField(field: "export element",
                                reason: "node \(node.name) at depth \(node.depth) after depth \(previous.depth)")
        }
        self.nodes = nodes
    }
}

/// What a newer export of the same person no longer holds, removed by the import
/// that found it out (event kind 21, `absentFromExport`): the samples a previous
/// import brought (correlations with their members, workouts with their events and
/// routes) and the days of activity summaries. One event per import, before its
/// `importFinished`; the tombstones it leaves name it (`audit`).
///
/// Invariant: `objects` or `days` is not empty.
package struct ExportAbsence: Hashable, Sendable {
    /// The import that removed them (its `importStarted`).
    package let importId: UUID
    /// `<ExportDate value=…>` of the export they are absent from, as written.
    package let exportDate: String?
    /// The samples removed, with their sync identity (as `samplesDeleted` records it).
    package let objects: [DeletedObject]
    /// The days whose activity summary is removed.
    package let days: [DateOfBirth]

    package init(importId: UUID, exportDate: String?, objects: [DeletedObject], days: [DateOfBirth]) {
        self.importId = importId
        self.exportDate = exportDate
        self.objects = objects
        self.days = days
    }

    /// "absent from the export dated D": the reason the removal gives.
    package var reason: String { "absent from the export dated \(exportDate ?? "(no ExportDate)")" }
}
