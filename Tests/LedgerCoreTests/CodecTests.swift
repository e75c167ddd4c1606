import Foundation
import Testing
import HealthModel
@testable import LedgerCore
import LedgerLog
import TestSupport

struct CodecTests {
    /// Samples of every kind, with every optional part.
    static func richSamples() throws -> [Sample] {
        let t = date("2026-03-01T10:00:00Z")
        var metadata = Metadata()
        metadata.append("meal", .string("Lunch"))
        metadata.append("Meal", .string("Dinner"))
        metadata.append("HKWasUserEntered", .bool(true))
        metadata.append("count", .integer(-42))
        metadata.append("ratio", .number(0.25))
        metadata.append("when", .date(date("2026-03-01T10:00:00.5Z")))
        metadata.append("HKWeatherTemperature", .quantity(try Quantity(56, unit: "degF")))
        metadata.append(Metadata.WellKnownKey.syncIdentifier, .string("sync-1"))
        metadata.append(Metadata.WellKnownKey.syncVersion, .integer(3))
        let device = Device(name: "Apple Watch", manufacturer: "Apple Inc.", model: "Watch", hardwareVersion: "Watch4,2",
                            softwareVersion: "7.0.1")
        let source = Source(bundleIdentifier: "com.example.app", name: "Example", version: "1.2.3")
        let q = try QuantitySample(type: .heartRate, quantity: try Quantity(72, unit: "count/min"), start: t, end: t,
                                   uuid: fixedUUID(100), metadata: metadata, device: device, source: source,
                                   creationDate: t.addingTimeInterval(5))
        let c = try CategorySample(type: .sleepAnalysis, value: 3, start: t, end: t.addingTimeInterval(3600), uuid: fixedUUID(101),
                                   source: Source(bundleIdentifier: "com.example.app", name: "Example"))
        let sys = try QuantitySample(type: .bloodPressureSystolic, quantity: try Quantity(120, unit: "mmHg"), start: t, end: t,
                                     uuid: fixedUUID(102), source: Source(bundleIdentifier: "com.example.app", name: "Example"))
        let dia = try QuantitySample(type: .bloodPressureDiastolic, quantity: try Quantity(80, unit: "mmHg"), start: t, end: t,
                                     uuid: fixedUUID(103), source: Source(bundleIdentifier: "com.example.app", name: "Example"))
        let bp = try Correlation(type: .bloodPressure, start: t, end: t, objects: [sys, dia], uuid: fixedUUID(104),
                                 source: Source(bundleIdentifier: "com.example.app", name: "Example"))
        let w = try Workout(activityType: .running, start: t, end: t.addingTimeInterval(1800), duration: 1700,
                            totalEnergyBurned: try Quantity(300, unit: "kcal"), totalDistance: try Quantity(5, unit: "km"),
                            events: [try WorkoutEvent(kind: .pause, date: t.addingTimeInterval(600), duration: 100,
                                                      metadata: ["x": .string("y")])],
                            uuid: fixedUUID(105), source: Source(bundleIdentifier: "com.example.app", name: "Example"),
                            statistics: [WorkoutStatistic(type: TypeIdentifier(parsing: "HKQuantityTypeIdentifierHeartRate"),
                                                          startDate: t, endDate: t.addingTimeInterval(1800), average: 150,
                                                          minimum: 100, maximum: 180, unit: "count/min")],
                            routes: [WorkoutRoute(sourceName: "iPhone", fileReference: "/workout-routes/a.gpx",
                                                  locations: [RouteLocation(date: t, latitude: 37.7, longitude: -122.4, altitude: 21)])])
        let common = try SampleCommon(uuid: fixedUUID(106), startDate: t, endDate: t,
                                      source: Source(bundleIdentifier: "com.example.app", name: "Example"))
        let u = UnrecognizedSample(typeIdentifier: "HKDataTypeSleepDurationGoal", value: "8", unit: "hr", common: common)
        return [.quantity(q), .category(c), .correlation(bp), .workout(w), .unrecognized(u)]
    }

    static func roundTrip(_ event: Event, source: Source? = nil) throws -> Event {
        let payload = EventCodec.payload(event)
        return try payload.withUnsafeBytes {
            try EventCodec.decode(kind: event.kind.rawValue, version: event.kindVersion, payload: $0, source: { _ in source })
        }
    }

    @Test func everyEventKindRoundTrips() throws {
        let source = Source(bundleIdentifier: "com.example.app", name: "Example")
        let events: [Event] = [
            .appRegistered(app: 1, Story.tracker),
            .appRegistered(app: 2, AppRegistration(bundleIdentifier: "import.x", name: "X", readPurpose: nil, sharePurpose: nil, imported: true)),
            .authorizationRequested(app: 1, share: [.quantity(.bodyMass), .workout], read: [.characteristic(.dateOfBirth)]),
            .authorizationDecided(AuthorizationDecision(app: 1, type: .quantity(.height), share: .granted, read: .denied)),
            .authorizationDecided(AuthorizationDecision(app: 1, type: .characteristic(.bloodType), share: nil, read: .granted, basis: .imported)),
            .characteristicSet(.dateOfBirth(try DateOfBirth(year: 1990, month: 4, day: 12))),
            .characteristicSet(.bloodType(.abNegative)),
            .characteristicSet(.biologicalSex(.other)),
            .characteristicSet(.fitzpatrickSkinType(.typeVI)),
            .characteristicSet(.wheelchairUse(.yes)),
            .characteristicSet(.activityMoveMode(.appleMoveTime)),
            .characteristicSet(.cardioFitnessMedicationsUse([.betaBlockers])),
            .characteristicCleared(.bloodType),
            .samplesSaved(app: 1, samples: try Self.richSamples().map { SavedSample($0, replaces: $0.uuid == fixedUUID(100) ? fixedUUID(9) : nil) }),
            .samplesDeleted(actor: .owner, objects: [DeletedObject(uuid: fixedUUID(1), syncIdentifier: "s", syncVersion: 7)], reason: "typo"),
            .samplesDeleted(actor: .app(3), objects: [DeletedObject(uuid: fixedUUID(2))], reason: nil),
            .activitySummariesRecorded([try ActivitySummary(day: try DateOfBirth(year: 2019, month: 5, day: 5),
                                                            numbers: [420.5, 500, nil, nil, 32, 30, 11, 12],
                                                            activeEnergyBurnedUnit: "kcal",
                                                            otherAttributes: [MetadataEntry(key: "appleMoveMode", value: .string("x"))])]),
            .importStarted(ExportImportStart(importId: fixedUUID(30), contentSHA256: [UInt8](repeating: 7, count: 32),
                                             exportDate: "2019-06-17 21:07:11 -0400", locale: "en_US", exportVersion: "11",
                                             sourcePath: "export.zip", again: false,
                                             me: [MetadataEntry(key: "HKCharacteristicTypeIdentifierDateOfBirth", value: .string(""))])),
            .importFinished(ExportImportFinish(importId: fixedUUID(30), counts: [ImportCount("records", 8), ImportCount("beats", 0)])),
            // A transaction (version 2): the content hash in the finish, none in the start.
            .importStarted(ExportImportStart(importId: fixedUUID(32), exportDate: "2019-06-17 21:07:11 -0400", locale: nil,
                                             exportVersion: nil, sourcePath: "export.xml",
                                             me: [MetadataEntry(key: "HKCharacteristicTypeIdentifierBiologicalSex", value: .string("HKBiologicalSexFemale"))])),
            .importFinished(ExportImportFinish(importId: fixedUUID(32), counts: [ImportCount("records", 1)],
                                               contentSHA256: [UInt8](repeating: 9, count: 32))),
            .importAborted(ExportImportAbort(importId: fixedUUID(33), reason: "malformedXML: export.xml: line 3, column 1: …")),
            .exportElementsKept([try ExportElement(nodes: [
                ExportElement.Node(depth: 0, name: "Audiogram", attributes: [MetadataEntry(key: "sourceName", value: .string("Mimi"))]),
                ExportElement.Node(depth: 1, name: "SensitivityPoint", attributes: []),
                ExportElement.Node(depth: 2, name: "Masked", attributes: [MetadataEntry(key: "value", value: .string("1"))]),
            ])]),
            .ownerTimeZoneSet("Pacific/Honolulu"),
            .sourcePrioritySet(type: .stepCount, sources: ["com.apple.health.WATCH", "com.example.a"]),
            .preferredUnitSet(type: .bodyMass, unit: try HealthUnit("lb")),
            .preferredUnitSet(type: .height, unit: nil),
            .samplesAssociated(app: 1, workout: fixedUUID(40), samples: [fixedUUID(41), fixedUUID(42)]),
            .workoutActivitiesAdded(actor: .app(1), workout: fixedUUID(40), activities: [
                try WorkoutActivity(activityType: .swimming, start: date("2026-03-01T10:00:00Z"), end: date("2026-03-01T10:20:00Z"),
                                    events: [try WorkoutEvent(kind: .lap, date: date("2026-03-01T10:10:00Z"))],
                                    metadata: ["HKIndoorWorkout": .bool(false)], uuid: fixedUUID(43)),
                try WorkoutActivity(activityType: .cycling, start: date("2026-03-01T10:20:00Z"), end: date("2026-03-01T11:00:00Z"),
                                    uuid: fixedUUID(44)),
            ]),
            .workoutActivitiesAdded(actor: .owner, workout: fixedUUID(40), activities: [
                try WorkoutActivity(activityType: .running, start: date("2026-03-01T11:00:00Z"), end: date("2026-03-01T11:00:00Z"),
                                    uuid: fixedUUID(45)),
            ]),
            .absentFromExport(ExportAbsence(importId: fixedUUID(31), exportDate: "2019-07-01 09:00:00 -0400",
                                            objects: [DeletedObject(uuid: fixedUUID(1), syncIdentifier: "s", syncVersion: 7),
                                                      DeletedObject(uuid: fixedUUID(2))],
                                            days: [try DateOfBirth(year: 2019, month: 5, day: 5)])),
            .credentialIssued(CredentialIssue(id: CredentialID(0x0123_4567_89ab_cdef), subject: .app(1),
                                              secretSHA256: [UInt8](repeating: 0xA5, count: 32), expiresAt: 1_800_000_000_000_000_000,
                                              name: "Health Auto Export")),
            .credentialIssued(CredentialIssue(id: CredentialID(UInt64.max), subject: .owner, secretSHA256: [UInt8](0..<32),
                                              expiresAt: nil, name: nil)),
            .credentialRevoked(id: CredentialID(0x0123_4567_89ab_cdef), reason: "phone lost"),
            .credentialRevoked(id: CredentialID(1), reason: nil),
            .erased(Erasure(scope: .source(bundleIdentifier: "com.example.a"), reason: "asked", keyIds: [3, 4, 300],
                            samples: [fixedUUID(1), fixedUUID(2)], liveAtErasure: 1, replacements: [
                                ErasureReplacement(sequence: 7, event: .samplesDeleted(actor: .owner, objects: [DeletedObject(uuid: fixedUUID(9))], reason: nil)),
                                ErasureReplacement(sequence: 9, event: .importStarted(ExportImportStart(
                                    importId: fixedUUID(31), exportDate: nil, locale: nil, exportVersion: nil, sourcePath: "(erased)", me: []))),
                            ], feedSlots: nil)),
            .erased(Erasure(scope: .source(bundleIdentifier: "com.example.a"), reason: "asked", keyIds: [3],
                            samples: [fixedUUID(1), fixedUUID(2), fixedUUID(3)], liveAtErasure: 2, replacements: [],
                            feedSlots: [ErasedFeedSlot(typeCode: ObjectType.quantity(.bodyMass).code, app: 3), nil,
                                        ErasedFeedSlot(typeCode: ObjectType.workout.code, app: UInt32.max)])),
            .erased(Erasure(scope: .importRun(fixedUUID(31)), reason: "r", keyIds: [1], samples: [], liveAtErasure: 0, replacements: [],
                            feedSlots: nil)),
            .erased(Erasure(scope: .type(code: 3), reason: "r", keyIds: [1], samples: [], liveAtErasure: 0, replacements: [], feedSlots: [])),
            .erased(Erasure(scope: .all, reason: "r", keyIds: [1], samples: [], liveAtErasure: 0, replacements: [], feedSlots: nil)),
            .erased(Erasure(scope: .typeRange(code: 3, from: date("2026-11-03T00:00:00Z"), to: date("2026-11-06T00:00:00Z")), reason: "r",
                            keyIds: [5], samples: [fixedUUID(3)], liveAtErasure: 1, replacements: [], resealed: [8, 9],
                            restoredAssociations: [.init(workout: fixedUUID(40), samples: [fixedUUID(41), fixedUUID(42)])], feedSlots: nil)),
            .encryptedFrom(LedgerOrigin(ledgerId: fixedUUID(50), chainHead: [UInt8](0..<32), events: 1_000_000,
                                        copiedAt: 1_800_000_000_000_000_000)),
        ]
        #expect(Set(events.map(\.kind)) == Set(EventKind.allCases))
        for event in events {
            let decoded = try Self.roundTrip(event, source: source)
            // A decoded sample carries its source name from the registry, its version from the record.
            if case .samplesSaved(_, let original) = event, case .samplesSaved(_, let back) = decoded {
                for (a, b) in zip(original, back) {
                    #expect(a.replaces == b.replaces)
                    #expect(a.sample.uuid == b.sample.uuid)
                    #expect(a.sample.common.metadata == b.sample.common.metadata)
                    #expect(a.sample.common.device == b.sample.common.device)
                    #expect(a.sample.common.startDate == b.sample.common.startDate)
                    #expect(a.sample.common.creationDate == b.sample.common.creationDate)
                    #expect(a.sample.common.source?.version == b.sample.common.source?.version)
                    #expect(b.sample.common.source?.bundleIdentifier == "com.example.app")
                }
                #expect(EventCodec.payload(decoded) == EventCodec.payload(event))
            } else {
                #expect(decoded == event, "\(event.kind)")
            }
        }
    }

    /// Kind 21's payload byte for byte (FORMAT.md): actor, import id, export date,
    /// tombstones as samplesDeleted writes them, days; removing nothing is malformed.
    @Test func absentFromExportPayloadIsExactlyAsDocumented() throws {
        let absence = ExportAbsence(importId: fixedUUID(31), exportDate: "D", objects: [DeletedObject(uuid: fixedUUID(2))],
                                    days: [try DateOfBirth(year: 2019, month: 5, day: 5)])
        #expect(absence.reason == "absent from the export dated D")
        let uuid31 = withUnsafeBytes(of: fixedUUID(31).uuid) { Array($0) }
        let uuid2 = withUnsafeBytes(of: fixedUUID(2).uuid) { Array($0) }
        let expected: [UInt8] = [0] + uuid31 + [1, 1, 0x44] + [1] + uuid2 + [0, 0] + [1, 0xE3, 0x0F, 5, 5]
        #expect(EventCodec.payload(.absentFromExport(absence)) == expected)
        let empty: [UInt8] = [0] + uuid31 + [0, 0, 0]
        #expect(throws: EventDecodingError.malformed(offset: 0, reason: "absentFromExport removes nothing")) {
            try empty.withUnsafeBytes { try EventCodec.decode(kind: 21, version: 1, payload: $0) }
        }
        var asApp = expected
        asApp[0] = 3
        #expect(throws: EventDecodingError.self) {
            try asApp.withUnsafeBytes { try EventCodec.decode(kind: 21, version: 1, payload: $0) }
        }
    }

    /// Rule E11's events byte for byte as FORMAT.md gives them: a transaction's start
    /// (version 2: no hash, no `again`), its finish (version 2: the hash after the id)
    /// and `importAborted` (kind 20); version 3 of either import kind is unknown.
    @Test func importTransactionPayloadsAreExactlyAsDocumented() throws {
        let id = withUnsafeBytes(of: fixedUUID(32).uuid) { Array($0) }
        let start = Event.importStarted(ExportImportStart(importId: fixedUUID(32), exportDate: "D", locale: nil, exportVersion: "13",
                                                          sourcePath: "e.zip", me: [MetadataEntry(key: "k", value: .string("v"))]))
        #expect(start.kindVersion == 2)
        #expect(EventCodec.payload(start) == [0] + id + [1, 1, 0x44] + [0] + [1, 2, 0x31, 0x33] + [5] + Array("e.zip".utf8)
                + [1, 1, 0x6B, 1, 0x76])
        let hash = [UInt8](repeating: 0xAB, count: 32)
        let finish = Event.importFinished(ExportImportFinish(importId: fixedUUID(32), counts: [ImportCount("records", 300)],
                                                             contentSHA256: hash))
        #expect(finish.kindVersion == 2)
        #expect(EventCodec.payload(finish) == [0] + id + hash + [1, 7] + Array("records".utf8) + [0xAC, 0x02])
        let legacy = Event.importFinished(ExportImportFinish(importId: fixedUUID(32), counts: []))
        #expect(legacy.kindVersion == 1)
        #expect(EventCodec.payload(legacy) == [0] + id + [0])
        let abort = Event.importAborted(ExportImportAbort(importId: fixedUUID(32), reason: "why"))
        #expect(abort.kind.rawValue == 20 && abort.kindVersion == 1)
        let abortBytes: [UInt8] = [0] + id + [3] + Array("why".utf8)
        #expect(EventCodec.payload(abort) == abortBytes)
        #expect(abortBytes.withUnsafeBytes { EventCodec.importId(payload: $0) } == fixedUUID(32))
        var asApp = abortBytes
        asApp[0] = 1
        #expect(throws: EventDecodingError.malformed(offset: 0, reason: "importAborted needs the owner as its actor", rule: "E6")) {
            try asApp.withUnsafeBytes { try EventCodec.decode(kind: 20, version: 1, payload: $0) }
        }
        #expect(throws: EventDecodingError.unknownVersion(kind: 9, version: 3)) {
            try EventCodec.decode(kind: 9, version: 3, payload: UnsafeRawBufferPointer(start: nil, count: 0))
        }
    }

    @Test func fastFactsEqualFullFacts() throws {
        let event = Event.samplesSaved(app: 1, samples: try Self.richSamples().map { SavedSample($0) })
        let payload = EventCodec.payload(event)
        var scratch: [SampleCodec.Header] = []
        var strings: [String] = []
        let fast = try payload.withUnsafeBytes { try EventFacts.read(kind: 6, version: 1, payload: $0, scratch: &scratch, strings: &strings) }
        guard case .samplesSaved(_, let a, let sa) = fast, case .samplesSaved(_, let b, let sb) = EventFacts(event) else {
            Issue.record("not a save")
            return
        }
        #expect(a.count == 7)  // 5 samples + 2 correlation members
        #expect(a.map(\.uuid) == b.map(\.uuid))
        #expect(a.map(\.typeCode) == b.map(\.typeCode))
        #expect(a.map(\.start) == b.map(\.start))
        #expect(a.map(\.end) == b.map(\.end))
        #expect(a.map(\.memberOf) == b.map(\.memberOf))
        #expect(a.map(\.syncIndex) == b.map(\.syncIndex))
        #expect(sa == sb && sa == ["sync-1"])
        #expect(a.map(\.syncVersion) == b.map(\.syncVersion))
        #expect(a[3].memberOf == 2 && a[4].memberOf == 2)
    }

    @Test func unknownKindsAndVersionsAreTypedErrors() {
        #expect(throws: EventDecodingError.unknownKind(kind: 99, version: 1)) {
            try EventCodec.decode(kind: 99, version: 1, payload: UnsafeRawBufferPointer(start: nil, count: 0))
        }
        #expect(throws: EventDecodingError.unknownVersion(kind: 6, version: 3)) {
            try EventCodec.decode(kind: 6, version: 3, payload: UnsafeRawBufferPointer(start: nil, count: 0))
        }
        #expect(throws: EventDecodingError.unknownVersion(kind: 1, version: 2)) {
            try EventCodec.decode(kind: 1, version: 2, payload: UnsafeRawBufferPointer(start: nil, count: 0))
        }
        #expect(throws: EventDecodingError.unknownVersion(kind: 6, version: 0)) {
            try EventCodec.decode(kind: 6, version: 0, payload: UnsafeRawBufferPointer(start: nil, count: 0))
        }
    }

    /// Version 1 of samplesSaved had no flag above 32: a written-offsets sample read
    /// as version 1 is malformed, not misread.
    @Test func version1SavesRejectTheFlagsVersion2Added() throws {
        let t = date("2026-03-01T10:00:00Z")
        let common = try SampleCommon(uuid: fixedUUID(200), startDate: t, endDate: t,
                                      writtenOffsets: WrittenOffsets(start: -14_400, end: -14_400, creation: nil))
        let q = try QuantitySample(type: .bodyMass, quantity: try Quantity(70, unit: "kg"), common: common)
        let payload = EventCodec.payload(.samplesSaved(app: 1, samples: [SavedSample(.quantity(q))]))
        let v2 = try payload.withUnsafeBytes { try EventCodec.decode(kind: 6, version: 2, payload: $0) }
        guard case .samplesSaved(_, let samples) = v2 else { Issue.record("\(v2)"); return }
        #expect(samples.first?.sample.common.writtenOffsets == WrittenOffsets(start: -14_400, end: -14_400, creation: nil))
        #expect {
            try payload.withUnsafeBytes { try EventCodec.decode(kind: 6, version: 1, payload: $0) }
        } throws: { error in
            "\(error)".contains("unknown sample flags")
        }
    }

    @Test func everyTruncationAndRandomCorruptionIsATypedErrorNeverACrash() throws {
        let event = Event.samplesSaved(app: 1, samples: try Self.richSamples().map { SavedSample($0) })
        let payload = EventCodec.payload(event)
        for length in 0..<payload.count {
            #expect(throws: EventDecodingError.self) {
                try Array(payload[0..<length]).withUnsafeBytes { try EventCodec.decode(kind: 6, version: 1, payload: $0) }
            }
        }
        var rng = SeededRandom(seed: 4)
        var decodedAnyway = 0
        for _ in 0..<3000 {
            var bytes = payload
            for _ in 0..<Int.random(in: 1...4, using: &rng) { bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
            do {
                _ = try bytes.withUnsafeBytes { try EventCodec.decode(kind: 6, version: 1, payload: $0) }
                var scratch: [SampleCodec.Header] = []
                var strings: [String] = []
                _ = try bytes.withUnsafeBytes { try EventFacts.read(kind: 6, version: 1, payload: $0, scratch: &scratch, strings: &strings) }
                decodedAnyway += 1  // a change to a value that is still a valid value
            } catch is EventDecodingError {
            }
        }
        #expect(decodedAnyway < 3000)
    }

    @Test func eventsAreCompact() throws {
        let t = date("2026-03-01T10:00:00Z")
        let s = try QuantitySample(type: .heartRate, quantity: try Quantity(72, unit: "count/min"), start: t, end: t)
        let payload = EventCodec.payload(.samplesSaved(app: 3, samples: [SavedSample(.quantity(s))]))
        // actor 1 + count 1 + length 1 + kind 1 + uuid 16 + type 2 + dates 16 + flags 1 + value 8 + unit 10
        #expect(payload.count == 57)
    }
}

/// `preferredUnitSet` (kind 14) refuses, as malformed, what the owner could never set.
struct PreferredUnitCodecTests {
    func payload(actor: UInt64, code: UInt16, unit: String) -> [UInt8] {
        var w = ByteWriter()
        w.varint(actor)
        w.u16(code)
        w.string(unit)
        return w.bytes
    }

    func decode(_ bytes: [UInt8]) throws -> Event {
        try bytes.withUnsafeBytes { try EventCodec.decode(kind: EventKind.preferredUnitSet.rawValue, version: 1, payload: $0) }
    }

    @Test func aPreferenceMustBeTheOwnersForAQuantityInAFittingUnit() throws {
        #expect(try decode(payload(actor: 0, code: 0x0200, unit: "lb"))
                == .preferredUnitSet(type: .bodyMass, unit: try HealthUnit("lb")))
        #expect(try decode(payload(actor: 0, code: 0x0200, unit: ""))
                == .preferredUnitSet(type: .bodyMass, unit: nil))
        for (actor, code, unit) in [(UInt64(1), UInt16(0x0200), "lb"), (0, 0x0400, "lb"), (0, 0x0200, "count/min"), (0, 0x0200, "furlong")] {
            #expect(throws: EventDecodingError.self, "\(actor) \(code) \(unit)") {
                try decode(payload(actor: actor, code: code, unit: unit))
            }
        }
    }
}
