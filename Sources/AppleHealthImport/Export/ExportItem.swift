import Foundation
import HealthModel
import LedgerCore

/// One top-level element of an export, mapped to the health model. The large cases
/// are boxed (`indirect`): the common one, `directRecord`, is then a word to return
/// and pass on, not the size of a mapped sample copied at every step.
enum ExportItem {
    case healthData(locale: String?)
    case exportDate(String)
    case me([MetadataEntry])
    indirect case record(MappedRecord)
    /// A Record for the direct encoding, in `ExportMapper.direct`.
    case directRecord
    indirect case correlation(MappedCorrelation)
    indirect case workout(MappedWorkout)
    indirect case activitySummary(ActivitySummary)
    /// A top-level element this version has no model for (ClinicalRecord, Audiogram,
    /// VisionPrescription, …), kept whole as written.
    indirect case kept(ExportElement)
}

/// A top-level Record for the direct encoding: a quantity or category sample with no
/// metadata, no beats and nothing kept, as parts the model's checks accepted (the
/// common case: no `Sample` is built). Left in `ExportMapper.direct` by the
/// `.directRecord` item, so that nothing of it is copied on the way.
struct DirectRecord {
    var parts: SampleParts
    /// The type code it needs share permission for.
    var typeCode: UInt16
    /// Index into `ExportMapper.sources`.
    var source: Int
    /// The `type` attribute's intern id (`ExportMapper.typeName(_:)`).
    var typeId: Int
    /// Over type, source, start, end, value and unit.
    var logicalFingerprint: UInt64
}

/// A Record as a sample, with what the importer counts and links by.
struct MappedRecord {
    /// The sample.
    var sample: Sample
    /// The type code the record needs share permission for (a known quantity or category type).
    var typeCode: UInt16?
    /// HKMetadataKeySyncIdentifier and version, when both are present.
    var syncIdentity: (identifier: String, version: Int64)?
    /// Index into `ExportMapper.sources`.
    var source: Int
    /// The `type` attribute as written.
    var typeName: String
    /// `typeName`'s intern id (`ExportMapper.typeName(_:)`).
    var typeId: Int
    /// Why the record was kept raw (`UnrecognizedSample`), else nil.
    var rawReason: String?
    /// Over all attributes (any order) and metadata: equal for exact repeats.
    var exactFingerprint: UInt64
    /// Over type, source, start, end, value and unit.
    var logicalFingerprint: UInt64
    var metadataCount: Int
    var beatLists: Int
    var beats: Int
}

struct MappedCorrelation {
    var sample: Sample
    var source: Int
    /// The exact fingerprints of the member Records (the top-level copies they repeat).
    var memberFingerprints: [UInt64]
    /// Member Records that could not be members (not a quantity type the correlation admits).
    var unlinked: [MappedRecord]
}

struct MappedWorkout {
    var sample: Sample
    var source: Int
    var rawReason: String?
    var events: Int
    var statistics: Int
    var routes: Int
    var routePoints: Int
}
