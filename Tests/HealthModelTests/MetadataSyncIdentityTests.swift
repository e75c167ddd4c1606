import Testing
import HealthModel

/// `Metadata.syncIdentity()` as the importer meets it: Apple Health exports write
/// every metadata value as a string, next to quantities like `56 degF`.
struct MetadataSyncIdentityTests {
    @Test func versionWrittenAsStringIsAnInteger() throws {
        var m = Metadata()
        m.append("HKVO2MaxTestType", .string("2"))
        m.append("HKMetadataKeySyncVersion", .string("1"))
        m.append("HKMetadataKeySyncIdentifier", .string("3A766CEB-1C91-41D2-B695-07EEC228007F"))
        let s = try #require(try m.syncIdentity())
        #expect(s.identifier == "3A766CEB-1C91-41D2-B695-07EEC228007F")
        #expect(s.version == 1)
    }

    @Test func noSyncKeysBesideAQuantityValue() throws {
        var m = Metadata()
        m.append("HKWeatherTemperature", .quantity(try Quantity(56, unit: "degF")))
        m.append("HKWasUserEntered", .string("1"))
        #expect(try m.syncIdentity() == nil)
    }

    @Test func identifierWithoutVersionIsRejected() throws {
        var m = Metadata()
        m.append("HKMetadataKeySyncIdentifier", .string("abc"))
        #expect(throws: HealthModelError.invalidField(field: "metadata",
            reason: "HKMetadataKeySyncIdentifier and HKMetadataKeySyncVersion must be given together")) {
            try m.syncIdentity()
        }
    }

    @Test func nonIntegerVersionIsRejected() throws {
        var m = Metadata()
        m.append("HKMetadataKeySyncIdentifier", .string("abc"))
        m.append("HKMetadataKeySyncVersion", .quantity(try Quantity(1, unit: "kg")))
        #expect(throws: HealthModelError.invalidField(field: "metadata",
            reason: "HKMetadataKeySyncIdentifier must be a string and HKMetadataKeySyncVersion an integer")) {
            try m.syncIdentity()
        }
    }
}
