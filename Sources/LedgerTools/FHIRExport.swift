import Foundation
import HealthModel
import LedgerChecksums
import LedgerCore
import LedgerReporting

/// What `export fhir` is asked for.
package struct FHIRExportRequest: Sendable {
    /// Who reads: the owner, or an app (exactly what it may read).
    package var viewer: Viewer
    /// The sample types; nil: every sample type.
    package var types: [ObjectType]?
    /// Samples whose start date is at or after `from` and before `to`: `[from, to)`
    /// (nil: unbounded).
    package var from: Date?
    /// The end of `[from, to)`, excluded.
    package var to: Date?
    /// Only what changed after this anchor (`changes`' anchors): samples added, and the
    /// samples deleted as Bulk Data's `deleted` Bundles.
    package var since: ChangeAnchor?
    /// The manifest's `request` (the command as given).
    package var request: String

    package init(viewer: Viewer, types: [ObjectType]? = nil, from: Date? = nil, to: Date? = nil, since: ChangeAnchor? = nil,
                 request: String) {
        self.viewer = viewer
        self.types = types
        self.from = from
        self.to = to
        self.since = since
        self.request = request
    }
}

/// One NDJSON file `export fhir` wrote.
package struct FHIRExportFile: Sendable, Equatable {
    /// The resource type (`Observation`), or `Bundle` for the deletions.
    package let type: String
    /// Where it was written (DIR/<type>.ndjson, or DIR/deleted.ndjson).
    package let path: String
    /// Lines: resources (or deletion Bundles).
    package let count: Int
}

/// What `export fhir` wrote.
package struct FHIRExportSummary: Sendable, Equatable {
    /// Patient, Observation, Device, Provenance, then (with `since`) the deletions.
    package let files: [FHIRExportFile]
    /// The Bulk Data manifest.
    package let manifest: String
    /// The anchor at the export's end: `since` for the next export.
    package let anchor: String
}

extension ReadSession {
    /// Samples read from the change feed per step: memory stays bounded by a page.
    static let fhirPage = 4096
    /// At most this many targets per Provenance (an import's record saves thousands).
    static let provenanceTargetsMax = 1000

    /// Writes FHIR R4 NDJSON as Bulk Data does into `folder` (new, or empty): what
    /// `request.viewer` may read, in log order — `Patient.ndjson` (the
    /// characteristics), `Observation.ndjson` (a sample each, id its UUID),
    /// `Device.ndjson` (each distinct device of those samples), `Provenance.ndjson`
    /// (per saving event and source: the ledger, the event's sequence, the checkpoint
    /// read at), with `since` `deleted.ndjson` (a DELETE Bundle per deleted sample),
    /// and `manifest.json` (Bulk Data's completion manifest). Each file is written new
    /// beside its name (0600) and linked into place once whole (`PartialFile`). An
    /// unknown app or an anchor this ledger refuses makes no folder.
    package func exportFHIR(_ request: FHIRExportRequest, to folder: String, now: Date = Date(),
                            progress: ((ReplayProgress) -> Void)? = nil) throws -> FHIRExportSummary {
        var view = try self.view(as: request.viewer, progress: progress)  // first: a refused export makes no folder
        let types = Set(request.types ?? ObjectType.allTypes.filter(\.isSampleType))
        var page = try view.changes(of: types, predicate: nil, anchor: request.since, limit: Self.fhirPage)  // checks the anchor
        let ledgerId = view.ledgerIdentifier
        let origin = try self.origin()
        let size = view.lastSequence
        let checkpoint = size == 0 ? nil : FHIRCheckpoint(size: size, root: try transparencyLog().tree.root(size: size).array)
        let events = try view.savingEvents()
        try Self.prepareEmptyFolder(folder)

        let patientId = ledgerId.uuidString
        let observations = try NDJSONFile(folder, "Observation.ndjson")
        let provenances = try NDJSONFile(folder, "Provenance.ndjson")
        let deletions = try request.since.map { _ in try NDJSONFile(folder, "deleted.ndjson") }
        var devices: [Device: (id: String, provenance: FHIRProvenance)] = [:]
        var deviceOrder: [Device] = []
        var group: (key: GroupKey, provenance: FHIRProvenance)?

        func flushGroup() throws {
            guard let g = group else { return }
            try provenances.append { FHIRResources.provenance(g.provenance, into: &$0) }
            group = nil
        }
        while true {
            for change in page.changes {
                switch change {
                case .added(let sample):
                    if case .unrecognized = sample { continue }  // records kept raw: not in a typed feed
                    let start = sample.common.startDate
                    if let from = request.from, start < from { continue }
                    if let to = request.to, start >= to { continue }
                    guard let event = try events.event(of: sample.common.uuid) else { continue }
                    let author = sample.common.source?.bundleIdentifier
                    var deviceId: String?
                    if let device = sample.common.device {
                        if let known = devices[device] {
                            deviceId = known.id
                        } else {
                            let id = Self.deviceId(device)
                            devices[device] = (id, FHIRProvenance(id: id, targets: ["Device/" + id], recorded: event.recorded,
                                                                  origin: origin, ledgerId: ledgerId, sequence: event.sequence,
                                                                  author: author, checkpoint: checkpoint))
                            deviceOrder.append(device)
                            deviceId = id
                        }
                    }
                    try observations.append { FHIRResources.observation(sample, patient: patientId, device: deviceId, into: &$0) }
                    let target = "Observation/" + sample.common.uuid.uuidString
                    let key = GroupKey(offset: event.offset, author: author)
                    if let g = group, g.key == key, g.provenance.targets.count < Self.provenanceTargetsMax {
                        group!.provenance.targets.append(target)
                    } else {
                        try flushGroup()
                        group = (key, FHIRProvenance(id: "\(event.sequence)-\(sample.common.uuid.uuidString)", targets: [target],
                                                     recorded: event.recorded, origin: origin, ledgerId: ledgerId,
                                                     sequence: event.sequence, author: author, checkpoint: checkpoint))
                    }
                case .deleted(let d):
                    try deletions?.append { FHIRResources.deletion("Observation/" + d.uuid.uuidString, into: &$0) }
                }
            }
            guard page.hasMore else { break }
            page = try view.changes(of: types, predicate: nil, anchor: page.newAnchor, limit: Self.fhirPage)
        }
        try flushGroup()

        let characteristics = CharacteristicType.allCases.compactMap { view.characteristic($0) }
        let patients = try NDJSONFile(folder, "Patient.ndjson")
        try patients.append { FHIRResources.patient(id: patientId, characteristics: characteristics, into: &$0) }
        try provenances.append {
            FHIRResources.provenance(FHIRProvenance(id: patientId, targets: ["Patient/" + patientId], recorded: now, origin: origin,
                                                    ledgerId: ledgerId, sequence: nil, author: nil, checkpoint: checkpoint), into: &$0)
        }
        let deviceFile = try NDJSONFile(folder, "Device.ndjson")
        for device in deviceOrder {
            let (id, provenance) = devices[device]!
            try deviceFile.append { FHIRResources.device(id: id, device, into: &$0) }
            try provenances.append { FHIRResources.provenance(provenance, into: &$0) }
        }

        var files: [FHIRExportFile] = []
        for (type, file) in [("Patient", patients), ("Observation", observations), ("Device", deviceFile), ("Provenance", provenances)] {
            files.append(try file.commit(type: type))
        }
        let deleted = try deletions?.commit(type: "Bundle")
        let anchor = page.newAnchor.text
        let manifest = Self.manifest(request, now: now, files: files, deleted: deleted, origin: origin, checkpoint: checkpoint,
                                     anchor: anchor)
        let manifestPath = (folder as NSString).appendingPathComponent("manifest.json")
        let manifestFile = try PartialFile(manifestPath + ".partial")
        try manifestFile.write(Array(manifest.utf8))
        try manifestFile.commit(as: manifestPath)
        return FHIRExportSummary(files: files + (deleted.map { [$0] } ?? []), manifest: manifestPath, anchor: anchor)
    }

    /// Resources of one saving event and one source share a Provenance.
    private struct GroupKey: Equatable {
        let offset: UInt64
        let author: String?
    }

    /// A Device's id: the first 16 bytes of the SHA-256 of its JSON (`SampleJSON.device`)
    /// in hexadecimal, the same in every export of any ledger.
    static func deviceId(_ device: Device) -> String {
        SHA256.hash(Array(SampleJSON.device(device).utf8)).array.prefix(16).map { String($0 >> 4, radix: 16) + String($0 & 15, radix: 16) }
            .joined()
    }

    /// Bulk Data's completion manifest, with what the ledger adds under `extension`
    /// (the ledger, the checkpoint, the anchor for the next `--since`).
    static func manifest(_ request: FHIRExportRequest, now: Date, files: [FHIRExportFile], deleted: FHIRExportFile?, origin: String,
                         checkpoint: FHIRCheckpoint?, anchor: String) -> String {
        var j = JSONBytes()
        j.openObject()
        j.member("transactionTime", ISO8601.string(now))
        j.member("request", request.request)
        j.key("requiresAccessToken")
        j.bool(false)
        func entries(_ list: [FHIRExportFile]) {
            j.openArray()
            for file in list {
                j.openObject()
                j.member("type", file.type)
                j.member("url", (file.path as NSString).lastPathComponent)
                j.key("count")
                j.integer(file.count)
                j.closeObject()
            }
            j.closeArray()
        }
        j.key("output")
        entries(files)
        if let deleted {
            j.key("deleted")
            entries([deleted])
        }
        j.key("error")
        j.openArray()
        j.closeArray()
        j.key("extension")
        j.openObject()
        j.member("origin", origin)
        if let checkpoint {
            j.key("checkpointSize")
            j.integer(Int(checkpoint.size))
            j.member("checkpointRootHex", checkpoint.rootHex)
            j.member("checkpointRoot", checkpoint.rootBase64)
        }
        j.member("anchor", anchor)
        j.closeObject()
        j.closeObject()
        j.newline()
        return String(decoding: j.bytes, as: UTF8.self)
    }
}

/// An NDJSON file being written: lines appended, written a megabyte at a time, put in
/// place whole (`PartialFile`).
final class NDJSONFile {
    let path: String
    private let file: PartialFile
    private var out = JSONBytes()
    private(set) var count = 0

    init(_ folder: String, _ name: String) throws {
        path = (folder as NSString).appendingPathComponent(name)
        file = try PartialFile(path + ".partial")
        out.bytes.reserveCapacity(1 << 20 + 1 << 16)
    }

    /// Appends the line `write` writes (and its newline).
    func append(_ write: (inout JSONBytes) -> Void) throws {
        write(&out)
        out.newline()
        count += 1
        if out.bytes.count >= 1 << 20 {
            try file.write(out.bytes)
            out.bytes.removeAll(keepingCapacity: true)
        }
    }

    /// The rest written, synced and linked into place.
    func commit(type: String) throws -> FHIRExportFile {
        try file.write(out.bytes)
        out.bytes.removeAll()
        try file.commit(as: path)
        return FHIRExportFile(type: type, path: path, count: count)
    }
}
