import Foundation
import HealthModel
import LedgerCore
import LedgerLog
import Testing
import TestSupport
import LedgerChecksums
@testable import AppleHealthImport

/// The UUIDs an import gives are exactly those events/FORMAT.md ("Record identity")
/// derives, computed here from the document's rules alone, independently of
/// `RecordIdentity`.
struct RecordIdentityTests {
    /// One start tag in the documented canonical form.
    static func tag(depth: UInt8, _ name: String, _ attributes: [(String, String)]) -> [UInt8] {
        func u16(_ n: Int) -> [UInt8] { [UInt8(n >> 8), UInt8(n & 0xFF)] }
        func u32(_ n: Int) -> [UInt8] { [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)] }
        var out = [depth] + u16(name.utf8.count) + Array(name.utf8) + u16(attributes.count)
        for (key, value) in attributes.sorted(by: { Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8)) }) {
            out += u16(key.utf8.count) + Array(key.utf8) + u32(value.utf8.count) + Array(value.utf8)
        }
        return out
    }

    static func uuid(_ digest: [UInt8]) -> UUID {
        var b = Array(digest.prefix(16))
        b[6] = (b[6] & 0x0F) | 0x80
        b[8] = (b[8] & 0x3F) | 0x80
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }

    @Test func importedUUIDsAreTheDocumentedDerivation() async throws {
        let dir = TemporaryDirectory()
        let path = try SmallExport.write(in: dir.path + "-export")
        let ledger = try Ledger.create(dir.fs)
        _ = try await AppleHealthImporter.run(try ExportSource(path: path), into: ledger)
        let state = await ledger.state

        // A one-tag Record: D = SHA-256("R" ‖ form), the UUID its first 16 bytes.
        let future = Self.tag(depth: 0, "Record", [
            ("type", "HKQuantityTypeIdentifierFutureThing"), ("sourceName", "Omron"), ("unit", "count"),
            ("creationDate", "2019-05-03 07:00:00 -0400"), ("startDate", "2019-05-03 07:00:00 -0400"),
            ("endDate", "2019-05-03 07:00:00 -0400"), ("value", "3"),
        ])
        let futureUUID = Self.uuid(SHA256.hash([0x52] + future).array)
        #expect(futureUUID.uuidString == "9A8AF535-E793-87F0-A32E-C3AF5BA7E280")
        #expect(try state.samples.slot(of: futureUUID) != nil)

        // Two exact repeats with a metadata entry: occurrence 0 is D itself, occurrence 1
        // SHA-256(D ‖ 00 00 00 01).
        let mass = Self.tag(depth: 0, "Record", [
            ("type", "HKQuantityTypeIdentifierBodyMass"), ("sourceName", "Health"), ("sourceVersion", "12.3"), ("unit", "lb"),
            ("creationDate", "2019-05-01 08:00:00 -0400"), ("startDate", "2019-05-01 07:59:00 -0400"),
            ("endDate", "2019-05-01 07:59:00 -0400"), ("value", "165.4"),
        ]) + Self.tag(depth: 1, "MetadataEntry", [("key", "HKWasUserEntered"), ("value", "1")])
        let d = SHA256.hash([0x52] + mass).array
        let first = Self.uuid(d), second = Self.uuid(SHA256.hash(d + [0, 0, 0, 1]).array)
        #expect(first != second)
        #expect(try state.samples.slot(of: first) != nil)
        #expect(try state.samples.slot(of: second) != nil)

        // A correlation's member: "M" over its own subtree, at depth 1 as in the correlation.
        let systolic = Self.tag(depth: 1, "Record", [
            ("type", "HKQuantityTypeIdentifierBloodPressureSystolic"), ("sourceName", "Omron"), ("unit", "mmHg"),
            ("creationDate", "2019-05-03 07:00:00 -0400"), ("startDate", "2019-05-03 07:00:00 -0400"),
            ("endDate", "2019-05-03 07:00:00 -0400"), ("value", "120"),
        ])
        let member = Self.uuid(SHA256.hash([0x4D] + systolic).array)
        let slot = try #require(try state.samples.slot(of: member))
        #expect(state.samples.entry(slot).isMember)
        try await ledger.close()
    }
}
