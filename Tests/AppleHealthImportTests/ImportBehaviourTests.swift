import Foundation
import HealthModel
import LedgerChecksums
import LedgerCore
import LedgerLog
import Testing
import TestSupport
@testable import AppleHealthImport

/// The importer on `SmallExport`, whose every expected value is worked out by hand
/// from its XML, and on broken variants of it: a failed import writes nothing.
struct ImportBehaviourTests {
    static func date(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    static func logBytes(_ dir: TemporaryDirectory) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: dir.path + "/" + LogWriter.logFileName))
    }

    /// Every raw sample in the ledger, in the order saved.
    static func rawSamples(_ ledger: Ledger) async throws -> [UnrecognizedSample] {
        var out: [UnrecognizedSample] = []
        for slot in 0..<UInt32(await ledger.state.samples.count) where await ledger.state.samples.entry(slot).typeCode == 0 {
            if case .unrecognized(let u) = try await ledger.sample(slot: slot) { out.append(u) }
        }
        return out
    }

    /// Every element of every `exportElementsKept` event in the log, in order.
    static func keptElements(_ fs: any LogFileSystem) throws -> [ExportElement] {
        var kept: [ExportElement] = []
        _ = try LogReader(fs).forEachRecord { record in
            if record.kind == EventKind.exportElementsKept.rawValue,
               case .exportElementsKept(let elements) = try EventCodec.decode(record) {
                kept += elements
            }
            return true
        }
        return kept
    }

    /// A kept node with string attributes, in order.
    static func node(_ depth: Int, _ name: String, _ attributes: KeyValuePairs<String, String>) -> ExportElement.Node {
        ExportElement.Node(depth: depth, name: name, attributes: attributes.map { MetadataEntry(key: $0.key, value: .string($0.value)) })
    }

    @Test func everyElementLandsWhereItBelongs() async throws {
        let dir = TemporaryDirectory()
        let path = try SmallExport.write(in: dir.path + "-export")
        let ledger = try Ledger.create(dir.fs)
        let summary = try await AppleHealthImporter.run(try ExportSource(path: path), into: ledger)

        #expect(summary.exportDate == "2019-06-17 21:07:11 -0400")
        #expect(summary.exportVersion == "11")
        #expect(summary.locale == "en_US")
        #expect(summary.records == 8)
        #expect(summary.recordsByType == [
            "HKQuantityTypeIdentifierBodyMass": 2, "HKQuantityTypeIdentifierHeartRateVariabilitySDNN": 1,
            "HKQuantityTypeIdentifierBloodPressureSystolic": 1, "HKQuantityTypeIdentifierBloodPressureDiastolic": 1,
            "HKQuantityTypeIdentifierFutureThing": 1, "HKCategoryTypeIdentifierSleepAnalysis": 1,
            "HKQuantityTypeIdentifierStepCount": 1,
        ])
        #expect(summary.recordsKeptRaw == 2)
        #expect(summary.rawReasons == ["HKQuantityTypeIdentifierFutureThing: unknown type": 1,
                                       "HKQuantityTypeIdentifierStepCount: no value": 1])
        #expect(summary.exactDuplicateRecords == 1)
        #expect(summary.correlationsByType == ["HKCorrelationTypeIdentifierBloodPressure": 1])
        #expect(summary.correlationMembers == 2)
        #expect(summary.recordsStoredAsMembers == 2)
        #expect(summary.workouts == 1)
        #expect(summary.workoutEvents == 2)
        #expect(summary.activitySummaries == 1)
        #expect(summary.beatLists == 1)
        #expect(summary.beats == 2)
        #expect(Set(summary.sources) == ["Health", "Apple Watch de Ana", "Omron"])
        #expect(summary.characteristicsSet == 4)
        // 2 body mass + HRV + unknown + sleep + step count (raw) + correlation + workout;
        // the two top-level blood pressure Records are the correlation's members.
        #expect(summary.samplesSaved == 8)

        // Body mass: the exact repeat stored twice, unit as written, offsets kept.
        let mass = try await ledger.samples(SampleQuery(type: .quantity(.bodyMass)), visibility: .everything)
        #expect(mass.count == 2)
        for sample in mass {
            guard case .quantity(let q) = sample else { Issue.record("not a quantity: \(sample)"); continue }
            #expect(q.quantity.value == 165.4)
            #expect(q.quantity.unit.spelling == "lb")
            #expect(q.startDate == Self.date("2019-05-01T11:59:00Z"))
            #expect(q.endDate == Self.date("2019-05-01T11:59:00Z"))
            #expect(q.common.creationDate == Self.date("2019-05-01T12:00:00Z"))
            #expect(q.common.writtenOffsets == WrittenOffsets(start: -14_400, end: -14_400, creation: -14_400))
            #expect(q.common.source == Source(bundleIdentifier: "export:Health", name: "Health", version: "12.3"))
            #expect(Array(q.common.metadata).map(\.key) == ["HKWasUserEntered"])
            #expect(q.common.metadata["HKWasUserEntered"] == .string("1"))
        }
        #expect(mass[0].uuid != mass[1].uuid)

        // HRV: the device string in its fields, the beats verbatim.
        let hrv = try await ledger.samples(SampleQuery(type: .quantity(.heartRateVariabilitySDNN)), visibility: .everything)
        guard case .quantity(let h)? = hrv.first, hrv.count == 1 else { Issue.record("HRV: \(hrv)"); return }
        #expect(h.quantity.value == 48.2)
        #expect(h.common.device?.name == "Apple Watch")
        #expect(h.common.device?.manufacturer == "Apple Inc.")
        #expect(h.common.device?.model == "Watch")
        #expect(h.common.device?.hardwareVersion == "Watch3,2")
        #expect(h.common.device?.softwareVersion == "5.2.1")
        #expect(h.beats == [try InstantaneousBeat(bpm: 62, time: "9:07:11.42 PM"), try InstantaneousBeat(bpm: 64, time: "9:07:12.38 PM")])
        #expect(h.common.writtenOffsets?.start == 7200)

        // The correlation owns the blood pressure samples; they are not stored twice.
        let pressure = try await ledger.samples(SampleQuery(type: .correlation(.bloodPressure)), visibility: .everything)
        guard case .correlation(let c)? = pressure.first, pressure.count == 1 else { Issue.record("BP: \(pressure)"); return }
        #expect(c.common.metadata["HKWeatherTemperature"] == .quantity(try Quantity(56, unit: "degF")))
        #expect(c.objects.map(\.quantity.value) == [120, 80])
        #expect(c.objects.map(\.type) == [.bloodPressureSystolic, .bloodPressureDiastolic])
        let state = await ledger.state
        // 8 saved objects and the correlation's 2 members are indexed; the 2 top-level
        // copies of the members are not stored again.
        #expect(state.samples.count == 10)

        // Kept raw, never dropped.
        // Kept raw, never dropped (out of typed queries: an app asking for step
        // counts gets HKQuantitySamples; raw records are under type code 0).
        let raw = try await Self.rawSamples(ledger)
        #expect(raw.map(\.typeIdentifier) == ["HKQuantityTypeIdentifierFutureThing", "HKQuantityTypeIdentifierStepCount"])
        #expect(raw.map(\.value) == ["3", nil])
        #expect(raw.map(\.unit) == ["count", "count"])
        #expect(raw.map(\.reason) == ["unknown type", "no value"])
        #expect(try await ledger.samples(SampleQuery(type: .quantity(.stepCount)), visibility: .everything).isEmpty)

        // Sleep by its value name.
        let sleep = try await ledger.samples(SampleQuery(type: .category(.sleepAnalysis)), visibility: .everything)
        guard case .category(let s)? = sleep.first, sleep.count == 1 else { Issue.record("sleep: \(sleep)"); return }
        #expect(s.type.rawName(of: s.value) == "HKCategoryValueSleepAnalysisAsleepCore")
        #expect(s.startDate == Self.date("2019-05-04T03:30:00Z"))
        #expect(s.endDate == Self.date("2019-05-04T10:45:00Z"))

        // The workout: minutes to seconds, events, totals, metadata.
        let workouts = try await ledger.samples(SampleQuery(type: .workout), visibility: .everything)
        guard case .workout(let w)? = workouts.first, workouts.count == 1 else { Issue.record("workout: \(workouts)"); return }
        #expect(w.activityType == .running)
        #expect(w.duration == 1830)
        #expect(w.totalDistance == (try Quantity(5.1, unit: "km")))
        #expect(w.totalEnergyBurned == (try Quantity(310, unit: "kcal")))
        #expect(w.events.map(\.kind) == [.pause, .resume])
        #expect(w.events.map(\.date) == [Self.date("2019-05-05T06:10:00Z"), Self.date("2019-05-05T06:12:00Z")])
        #expect(w.common.metadata["HKIndoorWorkout"] == .string("0"))

        // The activity summary, and <Me> as the profile.
        let day = try #require(state.activitySummaries[LedgerState.dayKey(try DateOfBirth(year: 2019, month: 5, day: 5))])
        #expect(day.activeEnergyBurned == 420.5)
        #expect(day.activeEnergyBurnedGoal == 500)
        #expect(day.activeEnergyBurnedUnit == "kcal")
        #expect(day.appleExerciseTime == 32)
        #expect(day.appleStandHours == 11)
        let profile = try await ledger.profile()
        #expect(profile.dateOfBirth?.description == "1985-03-14")
        #expect(profile.biologicalSex.rawName == "HKBiologicalSexMale")
        #expect(profile.bloodType.rawName == "HKBloodTypeONegative")

        #expect(state.imports.count == 1)
        #expect(state.imports[0].finishedAt == state.lastSequence)
        try await ledger.close()
        let report = try LedgerVerifier.verify(dir.fs)
        #expect(report.isIntact)
    }

    /// The same export twice: the second import finds every sample and the activity
    /// summary already there and appends nothing but its start and finish.
    @Test func theSameExportTwiceAppendsOnlyItsBracket() async throws {
        let dir = TemporaryDirectory()
        let path = try SmallExport.write(in: dir.path + "-export")
        let ledger = try Ledger.create(dir.fs)
        let first = try await AppleHealthImporter.run(try ExportSource(path: path), into: ledger)
        #expect(first.firstSequence == 1)
        #expect(first.samplesSaved == 8)
        let before = await ledger.state
        let second = try await AppleHealthImporter.run(try ExportSource(path: path), into: ledger)
        #expect(second.again)
        #expect(second.samplesSaved == 0)
        #expect(second.unchanged == 9)  // 8 samples and 1 activity summary
        #expect(second.removed == 0)
        #expect(second.firstSequence == before.lastSequence + 1)
        #expect(second.lastSequence == before.lastSequence + 2)
        let after = await ledger.state
        #expect(after.samples == before.samples)
        #expect(after.activitySummaries == before.activitySummaries)
        #expect(after.imports.count == 2)
        #expect(after.eventCounts[EventKind.importStarted.rawValue] == 2)
        #expect(after.eventCounts[EventKind.importFinished.rawValue] == 2)
        let eventsAfter: UInt64 = after.eventCounts.values.reduce(0, +)
        let eventsBefore: UInt64 = before.eventCounts.values.reduce(0, +)
        #expect(eventsAfter == eventsBefore + 2)
        try await ledger.close()
        #expect(try LedgerVerifier.verify(dir.fs).isIntact)
    }

    /// An import stopped as a killed process would (batches durable, no finish) is
    /// aborted by the next writer to open the ledger (none of it applies, rule E11),
    /// and importing the same export again brings it all: nothing doubled, nothing lost.
    @Test func anInterruptedImportIsFinishedByImportingAgain() async throws {
        let dir = TemporaryDirectory()
        let path = try SmallExport.write(in: dir.path + "-export")
        let reference = TemporaryDirectory()
        let fresh = try Ledger.create(reference.fs)
        _ = try await AppleHealthImporter.run(try ExportSource(path: path), into: fresh)
        let expected = await fresh.state.samples
        try await fresh.close()

        let ledger = try Ledger.create(dir.fs)
        var options = ImportOptions()
        options.samplesPerBatch = 3
        options.samplesPerEvent = 3
        options.crashAfterBatches = 1
        await #expect(throws: SimulatedCrash.self) {
            _ = try await AppleHealthImporter.run(try ExportSource(path: path), into: ledger, options: options)
        }
        let partial = await ledger.state.samples.count
        #expect(partial > 0 && partial < expected.count)
        ledger.abandon()  // the process died: no seal, no snapshot

        // Another process sees nothing of the open import.
        let reader = try LogReader(dir.fs)
        let seen = try StateLoader.load(dir.fs, reader: reader, useSnapshots: false)
        #expect(seen.state.samples.count == 0 && seen.state.imports.isEmpty)
        #expect(seen.openImport?.startedAt == 1)
        let reopened = try Ledger.open(dir.fs)
        #expect(await reopened.state.imports.isEmpty)
        #expect(await reopened.state.samples.count == 0)
        let notApplied = await reopened.state.eventsNotApplied
        let lastSequence = await reopened.lastSequence
        #expect(notApplied == lastSequence)  // every event so far: the import's and its abort
        let again = try await AppleHealthImporter.run(try ExportSource(path: path), into: reopened)
        #expect(!again.again)  // the aborted import never applied: nothing of it is remembered
        #expect(again.removed == 0)
        #expect(again.unchanged == 0)
        let state = await reopened.state
        #expect(state.samples.count == expected.count)
        #expect(state.samples.deletedCount == 0)
        for slot in 0..<UInt32(expected.count) {
            let uuid = try expected.uuid(slot)
            let live: Bool? = try state.samples.slot(of: uuid).map { !state.samples.entry($0).isDeleted }
            #expect(live == true)
        }
        #expect(state.imports.map { $0.finishedAt == nil } == [false])
        #expect(state.eventsNotApplied == notApplied)
        try await reopened.close()
        #expect(try LedgerVerifier.verify(dir.fs).isIntact)
    }

    /// Broken exports stop the import with where and why. The import was a
    /// transaction (rule E11): the ledger keeps every byte it had, gains only the
    /// import's events closed by `importAborted`, and every projection, query and
    /// change is as before — in the store, in a replay from the log, and in verify.
    /// Here after a good import, so there is history to keep.
    @Test(arguments: [
        // Line 23 loses the closing quote of sourceName: the attribute then ends at the
        // next quote, and column 77 (`c` of `creationDate`'s value) follows it directly.
        ("malformed", #"sourceName="Omron" unit="count""#, #"sourceName="Omron unit="count""#,
         "malformedXML: broken.xml: line 23, column 77: expected whitespace before an attribute"),
        ("bad date", #"startDate="2019-05-03 23:30:00 -0400""#, #"startDate="2019-13-03 23:30:00 -0400""#,
         "invalidValue: broken.xml: line 24, column 2: startDate '2019-13-03 23:30:00 -0400' is not a date"),
        ("truncated", "</HealthData>", "",
         "malformedXML: broken.xml: line 37, column 1: the document ends inside <HealthData>"),
    ])
    func brokenExportsAreAbortedAndChangeNothingVisible(_ name: String, _ find: String, _ replace: String, _ message: String) async throws {
        let dir = TemporaryDirectory()
        let good = try SmallExport.write(in: dir.path + "-export")
        let broken = SmallExport.xml.replacingOccurrences(of: find, with: replace)
        #expect(broken != SmallExport.xml)
        let bad = try SmallExport.write(broken, named: "broken.xml", in: dir.path + "-export")
        let first = try Ledger.create(dir.fs)
        _ = try await AppleHealthImporter.run(try ExportSource(path: good), into: first)
        try await first.close()  // an open log is preallocated past its end; closed, it is exactly its records
        let bytes = try Self.logBytes(dir)
        let ledger = try Ledger.open(dir.fs)
        let state = await ledger.state
        let bodyMass = try await ledger.samples(SampleQuery(type: .quantity(.bodyMass)), visibility: .everything)
        await #expect {
            _ = try await AppleHealthImporter.run(try ExportSource(path: bad), into: ledger)
        } throws: { error in
            "\(error)" == message
        }
        let after = await ledger.state
        #expect(StateDifference.first(after, state, ignoringPosition: true) == nil)
        #expect(after.imports == state.imports)
        #expect(after.eventCounts == state.eventCounts)
        #expect(try await ledger.samples(SampleQuery(type: .quantity(.bodyMass)), visibility: .everything) == bodyMass)
        // The log: what it had, then the import's events, the last its abort.
        let stored = try ledger.reader.records((state.lastSequence + 1)...after.lastSequence)
        #expect(stored.first?.kind == EventKind.importStarted.rawValue && stored.first?.kindVersion == 2)
        #expect(stored.last?.kind == EventKind.importAborted.rawValue)
        #expect(after.eventsNotApplied == UInt64(stored.count))
        guard case .importAborted(let abort)? = try stored.last.map({ try EventCodec.decode($0) }) else {
            Issue.record("no importAborted")
            return
        }
        #expect(abort.reason == message)
        try await ledger.close()
        let now = try Self.logBytes(dir)
        // Compared as a Bool: a failing `==` on two Data makes the test library diff them byte by byte.
        let kept = now.count >= bytes.count && now.prefix(bytes.count) == bytes
        #expect(kept, "log was \(bytes.count) bytes, is \(now.count)")
        // A fresh replay (no snapshot) passes over the aborted import exactly as the store did.
        let reader = try LogReader(dir.fs)
        let replayed = try StateLoader.load(dir.fs, reader: reader, useSnapshots: false)
        #expect(StateDifference.first(replayed.state, after) == nil)
        #expect(replayed.state.digest() == after.digest())
        #expect(replayed.openImport == nil)
        let report = try LedgerVerifier.verify(dir.fs)
        #expect(report.isIntact)
        #expect(report.events == after.lastSequence)
    }

    /// `<Me>`'s date of birth as some locales write it (Arabic-Indic digits), or empty.
    @Test(arguments: [("١٩٨٥-٠٣-١٤", "1985-03-14"), ("۱۹۸۵-۰۳-۱۴", "1985-03-14"), ("", nil)])
    func dateOfBirthInAnyDigitsOrNone(_ written: String, _ expected: String?) async throws {
        let dir = TemporaryDirectory()
        let xml = SmallExport.xml.replacingOccurrences(of: #"HKCharacteristicTypeIdentifierDateOfBirth="1985-03-14""#,
                                                       with: #"HKCharacteristicTypeIdentifierDateOfBirth="\#(written)""#)
        let path = try SmallExport.write(xml, in: dir.path + "-export")
        let ledger = try Ledger.create(dir.fs)
        let summary = try await AppleHealthImporter.run(try ExportSource(path: path), into: ledger)
        #expect(try await ledger.profile().dateOfBirth?.description == expected)
        #expect(summary.characteristicsSet == (expected == nil ? 3 : 4))
        // <Me> is kept verbatim in importStarted whatever was set from it.
        #expect(await ledger.state.imports.first?.start.me.first { $0.key == "HKCharacteristicTypeIdentifierDateOfBirth" }?.value
                == .string(written))
        try await ledger.close()
    }

    /// Elements with no model of their own (iOS 12's ClinicalRecord, iOS 14's Audiogram)
    /// are kept as written, in an event of their own: nothing of the export is lost.
    @Test func elementsWithoutAModelAreKeptAsWritten() async throws {
        let dir = TemporaryDirectory()
        let extra = """
             <ClinicalRecord type="HKClinicalTypeIdentifierLabResultRecord" identifier="abc" sourceName="Hospital" fhirVersion="1.0.2" receivedDate="2019-05-01 10:00:00 -0400" resourceFilePath="/clinical-records/abc.json"/>
             <Audiogram type="HKDataTypeIdentifierAudiogram" sourceName="Mimi" startDate="2019-05-02 10:00:00 -0400" endDate="2019-05-02 10:05:00 -0400">
              <SensitivityPoint frequencyValue="1000" frequencyUnit="Hz" leftEarValue="15" leftEarUnit="dBHL"/>
              <SensitivityPoint frequencyValue="2000" frequencyUnit="Hz" leftEarValue="20" leftEarUnit="dBHL">
               <Masked value="1"/>
              </SensitivityPoint>
             </Audiogram>
            </HealthData>
            """
        let xml = SmallExport.xml.replacingOccurrences(of: "</HealthData>", with: extra)
        let path = try SmallExport.write(xml, in: dir.path + "-export")
        let ledger = try Ledger.create(dir.fs)
        let summary = try await AppleHealthImporter.run(try ExportSource(path: path), into: ledger)
        #expect(summary.keptElements == ["ClinicalRecord": 1, "Audiogram": 1])
        #expect(summary.samplesSaved == 8)
        #expect(summary.lines.contains("  kept as written:    1 × Audiogram, 1 × ClinicalRecord"))
        try await ledger.close()

        let kept = try Self.keptElements(dir.fs)
        let node = Self.node
        #expect(kept == [
            try ExportElement(nodes: [node(0, "ClinicalRecord", [
                "type": "HKClinicalTypeIdentifierLabResultRecord", "identifier": "abc", "sourceName": "Hospital",
                "fhirVersion": "1.0.2", "receivedDate": "2019-05-01 10:00:00 -0400", "resourceFilePath": "/clinical-records/abc.json"])]),
            try ExportElement(nodes: [
                node(0, "Audiogram", ["type": "HKDataTypeIdentifierAudiogram", "sourceName": "Mimi",
                                      "startDate": "2019-05-02 10:00:00 -0400", "endDate": "2019-05-02 10:05:00 -0400"]),
                node(1, "SensitivityPoint", ["frequencyValue": "1000", "frequencyUnit": "Hz", "leftEarValue": "15", "leftEarUnit": "dBHL"]),
                node(1, "SensitivityPoint", ["frequencyValue": "2000", "frequencyUnit": "Hz", "leftEarValue": "20", "leftEarUnit": "dBHL"]),
                node(2, "Masked", ["value": "1"]),
            ]),
        ])
        #expect(try LedgerVerifier.verify(dir.fs).isIntact)
    }

    /// Children with no model inside known elements (iOS 16's WorkoutActivity, something
    /// new inside a WorkoutEvent or a Record) are kept too, under a root naming the
    /// sample they were in.
    @Test func childrenWithoutAModelAreKeptUnderTheirSample() async throws {
        let dir = TemporaryDirectory()
        let xml = SmallExport.xml
            .replacingOccurrences(of: #"  <MetadataEntry key="HKIndoorWorkout" value="0"/>"#, with: """
                  <MetadataEntry key="HKIndoorWorkout" value="0"/>
                  <WorkoutActivity uuid="A1" startDate="2019-05-05 08:00:00 +0200"><Inner n="1"/></WorkoutActivity>
                """)
            .replacingOccurrences(of: #"<WorkoutEvent type="HKWorkoutEventTypePause" date="2019-05-05 08:10:00 +0200" duration="0" durationUnit="min"/>"#,
                                  with: #"<WorkoutEvent type="HKWorkoutEventTypePause" date="2019-05-05 08:10:00 +0200" duration="0" durationUnit="min"><Future x="y"/></WorkoutEvent>"#)
            .replacingOccurrences(of: #"  <MetadataEntry key="HKWasUserEntered" value="1"/>"#,
                                  with: #"  <MetadataEntry key="HKWasUserEntered" value="1"/><Annotation text="after a run"/>"#)
        let path = try SmallExport.write(xml, in: dir.path + "-export")
        let ledger = try Ledger.create(dir.fs)
        let summary = try await AppleHealthImporter.run(try ExportSource(path: path), into: ledger)
        // Both body-mass Records held the MetadataEntry the Annotation follows.
        #expect(summary.keptChildren == ["WorkoutActivity": 1, "Future": 1, "Annotation": 2])
        #expect(summary.samplesSaved == 8)
        #expect(summary.exactDuplicateRecords == 1)
        let workout = try #require(try await ledger.samples(SampleQuery(type: .workout), visibility: .everything).first)
        let mass = try await ledger.samples(SampleQuery(type: .quantity(.bodyMass)), visibility: .everything).map(\.uuid.uuidString)
        try await ledger.close()

        let kept = try Self.keptElements(dir.fs)
        let node = Self.node
        let w = workout.uuid.uuidString
        #expect(kept.count == 4)
        #expect(Set(kept.prefix(2).map { $0.nodes[0].attributes.first?.value.description ?? "" }) == Set(mass))
        #expect(kept.prefix(2).map { Array($0.nodes.dropFirst()) } == [[node(1, "Annotation", ["text": "after a run"])],
                                                                      [node(1, "Annotation", ["text": "after a run"])]])
        #expect(kept.dropFirst(2).map(\.nodes) == [
            [node(0, "Workout", ["uuid": w]), node(1, "WorkoutActivity", ["uuid": "A1", "startDate": "2019-05-05 08:00:00 +0200"]),
             node(2, "Inner", ["n": "1"])],
            [node(0, "Workout", ["uuid": w]), node(1, "WorkoutEvent", [:]), node(2, "Future", ["x": "y"])],
        ])
        #expect(try LedgerVerifier.verify(dir.fs).isIntact)
    }

    /// Records HealthKit would refuse are kept raw with the reason, never dropped.
    @Test func recordsHealthKitWouldRefuseAreKeptRaw() async throws {
        let dir = TemporaryDirectory()
        let xml = SmallExport.xml
            .replacingOccurrences(of: #"value="48.2""#, with: #"value="nan""#)
            .replacingOccurrences(of: #"endDate="2019-05-04 06:45:00 -0400""#, with: #"endDate="2019-05-02 06:45:00 -0400""#)
        let path = try SmallExport.write(xml, in: dir.path + "-export")
        let ledger = try Ledger.create(dir.fs)
        let summary = try await AppleHealthImporter.run(try ExportSource(path: path), into: ledger)
        #expect(summary.records == 8)
        #expect(summary.samplesSaved == 8)
        #expect(summary.rawReasons == [
            "HKQuantityTypeIdentifierFutureThing: unknown type": 1,
            "HKQuantityTypeIdentifierStepCount: no value": 1,
            "HKQuantityTypeIdentifierHeartRateVariabilitySDNN: value is not a number": 1,
            "HKCategoryTypeIdentifierSleepAnalysis: endBeforeStart: sample ends at 2019-05-02T10:45:00Z before it starts at 2019-05-04T03:30:00Z": 1,
        ])
        let hrv = try await Self.rawSamples(ledger).filter { $0.typeIdentifier == "HKQuantityTypeIdentifierHeartRateVariabilitySDNN" }
        #expect(hrv.map(\.value) == ["nan"])
        #expect(hrv.map(\.unit) == ["ms"])
        try await ledger.close()
        #expect(try LedgerVerifier.verify(dir.fs).isIntact)
    }
}
