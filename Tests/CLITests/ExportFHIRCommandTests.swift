import Foundation
import HealthModel
import LedgerReporting
import Testing
import TestSupport

/// `export fhir`: FHIR R4 NDJSON as Bulk Data writes it. A hand-built ledger (the small
/// Apple Health export — characteristics, a blood pressure correlation, a sleep
/// sample, a workout, a device — and an app's samples of every type in the LOINC
/// table) exported and read back resource by resource: exact values, codes and units,
/// Provenance that `prove` confirms, counts equal to `stats`; an app's export limited
/// to its reads; `--since` an anchor; refusals that write nothing; and every resource
/// validated by fhir.resources' R4B models (tools/check_fhir_export.py).
@Suite struct ExportFHIRCommandTests {
    /// The validator's python: tools/fhir_venv.sh's venv (nil: not made on this machine).
    static let venvPython: String? = {
        let venv = ProcessInfo.processInfo.environment["HEALTHLEDGER_FHIR_VENV"]
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/healthledger/fhir-venv").path
        let python = venv + "/bin/python"
        return FileManager.default.isExecutableFile(atPath: python) ? python : nil
    }()
    static let checker = SharedData.repositoryRoot.appendingPathComponent("tools/check_fhir_export.py").path

    static let bodyMassUUID = "11111111-1111-4111-8111-111111111111"
    static let heartRateUUID = "22222222-2222-4222-8222-222222222222"

    /// Every LOINC-coded quantity type, one sample each as the app saves it, and what
    /// its Observation must say: LOINC code, UCUM code, the converted value.
    static let table: [(type: String, value: Double, unit: String, loinc: String, ucum: String, exported: Double)] = [
        ("bodyMass", 70, "kg", "29463-7", "kg", 70),
        ("height", 1.5, "m", "8302-2", "cm", 150),
        ("bodyMassIndex", 22.5, "count", "39156-5", "kg/m2", 22.5),
        ("heartRate", 60, "count/min", "8867-4", "/min", 60),
        ("restingHeartRate", 55, "count/min", "40443-4", "/min", 55),
        ("respiratoryRate", 15, "count/min", "9279-1", "/min", 15),
        ("bodyTemperature", 37, "degC", "8310-5", "Cel", 37),
        ("oxygenSaturation", 0.97, "%", "59408-5", "%", 97),
        ("bloodGlucose", 100, "mg/dL", "2339-0", "mg/dL", 100),
        ("bloodPressureSystolic", 121, "mmHg", "8480-6", "mm[Hg]", 121),
        ("bloodPressureDiastolic", 81, "mmHg", "8462-4", "mm[Hg]", 81),
        ("stepCount", 1000, "count", "55423-8", "{steps}", 1000),
        ("heartRateVariabilitySDNN", 48, "ms", "80404-7", "ms", 48),
        ("bodyFatPercentage", 0.25, "%", "41982-0", "%", 25),
        ("waistCircumference", 0.75, "m", "8280-0", "cm", 75),
    ]

    static func run(_ dir: TemporaryDirectory, _ args: [String], stdin: String? = nil) throws -> CLIResult {
        try CLIRunner.run(["--ledger", dir.path + "/L"] + args, stdin: stdin, currentDirectory: dir.url)
    }

    /// The small export imported; app A shares every type of `table` (and saves one
    /// sample of each, body mass and heart rate with known UUIDs); app B reads heart rate only.
    static func ledger() throws -> TemporaryDirectory {
        let dir = TemporaryDirectory("fhir")
        try SmallExport.write(in: dir.path)
        #expect(try run(dir, ["import-apple-health", "export.xml"]).status == 0)
        let types = table.map(\.type)
        for (app, share, read) in [("com.example.a", types, [String]()), ("com.example.b", [], ["heartRate"])] {
            #expect(try run(dir, ["app", "register", "--app", app, "--name", app, "--share-purpose", "s", "--read-purpose", "r"]).status == 0)
            let request = share.flatMap { ["--share", $0] } + read.flatMap { ["--read", $0] }
            #expect(try run(dir, ["--app", app, "request"] + request).status == 0)
            #expect(try run(dir, ["authorize", "--app", app] + request).status == 0)
        }
        var lines = ""
        for (i, row) in table.enumerated() {
            let uuid = row.type == "bodyMass" ? #","uuid":"\#(bodyMassUUID)""# : row.type == "heartRate" ? #","uuid":"\#(heartRateUUID)""# : ""
            lines += #"{"type":"\#(row.type)","value":\#(row.value),"unit":"\#(row.unit)","start":"2027-08-02T07:\#(10 + i):00Z"\#(uuid)}"# + "\n"
        }
        let ingest = try run(dir, ["ingest", "--app", "com.example.a"], stdin: lines)
        #expect(ingest.status == 0, "\(ingest.stderr)")
        return dir
    }

    static func export(_ dir: TemporaryDirectory, _ args: [String], _ out: String) throws -> CLIResult {
        try run(dir, ["export", "fhir"] + args + ["--out", dir.path + "/" + out])
    }

    /// The resources of one NDJSON file, as JSON objects.
    static func resources(_ dir: TemporaryDirectory, _ out: String, _ file: String) throws -> [[String: Any]] {
        let text = try String(contentsOfFile: "\(dir.path)/\(out)/\(file)", encoding: .utf8)
        return try text.split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
    }

    static func lines(_ dir: TemporaryDirectory, _ out: String, _ file: String) throws -> [String] {
        try String(contentsOfFile: "\(dir.path)/\(out)/\(file)", encoding: .utf8).split(separator: "\n").map(String.init)
    }

    /// The codings of an Observation's (or component's) code, as system → code.
    static func codes(_ resource: [String: Any]) -> [String: String] {
        let codings = (resource["code"] as! [String: Any])["coding"] as! [[String: Any]]
        return Dictionary(uniqueKeysWithValues: codings.map { ($0["system"] as! String, $0["code"] as! String) })
    }

    static let loinc = "http://loinc.org", healthKit = "http://developer.apple.com/documentation/healthkit"

    @Test func theResourcesOfAHandBuiltLedgerAreExactAndCountAsStatsCounts() throws {
        let dir = try Self.ledger()
        let r = try Self.export(dir, ["--owner"], "all")
        #expect(r.status == 0, "\(r.stderr)")
        let patients = try Self.resources(dir, "all", "Patient.ndjson")
        #expect(patients.count == 1)
        let patient = patients[0]
        #expect(patient["birthDate"] as? String == "1985-03-14" && patient["gender"] as? String == "male")
        let patientId = patient["id"] as! String

        // The body mass, byte for byte.
        let observationLines = try Self.lines(dir, "all", "Observation.ndjson")
        let bodyMass = observationLines.first { $0.contains(Self.bodyMassUUID) }
        #expect(bodyMass == #"{"resourceType":"Observation","id":"\#(Self.bodyMassUUID)","identifier":[{"system":"urn:ietf:rfc:3986","value":"urn:uuid:\#(Self.bodyMassUUID)"}],"status":"final","category":[{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/observation-category","code":"vital-signs","display":"Vital Signs"}]}],"code":{"coding":[{"system":"http://loinc.org","code":"29463-7","display":"Body weight"},{"system":"http://developer.apple.com/documentation/healthkit","code":"HKQuantityTypeIdentifierBodyMass","display":"bodyMass"}],"text":"Body weight"},"subject":{"reference":"Patient/\#(patientId)"},"effectiveDateTime":"2027-08-02T07:10:00Z","valueQuantity":{"value":70,"unit":"kg","system":"http://unitsofmeasure.org","code":"kg"}}"#)

        let observations = try Self.resources(dir, "all", "Observation.ndjson")
        func one(_ identifier: String, where test: ([String: Any]) -> Bool = { _ in true }) -> [String: Any]? {
            let found = observations.filter { Self.codes($0)[Self.healthKit] == identifier && test($0) }
            #expect(found.count == 1, "\(identifier): \(found.count)")
            return found.first
        }
        // The LOINC table, entry by entry: each app sample's code, UCUM unit and converted value.
        for row in Self.table {
            let identifier = "HKQuantityTypeIdentifier" + row.type.prefix(1).uppercased() + row.type.dropFirst()
            guard let o = one(identifier, where: { ($0["effectiveDateTime"] as? String)?.hasPrefix("2027") == true }) else { continue }
            #expect(Self.codes(o)[Self.loinc] == row.loinc, "\(row.type)")
            let q = o["valueQuantity"] as! [String: Any]
            #expect(q["code"] as? String == row.ucum && q["system"] as? String == "http://unitsofmeasure.org", "\(row.type): \(q)")
            #expect(q["value"] as? Double == row.exported, "\(row.type): \(q)")
        }
        // The blood pressure correlation: one panel, two components.
        let panel = try #require(one("HKCorrelationTypeIdentifierBloodPressure"))
        #expect(Self.codes(panel)[Self.loinc] == "85354-9")
        #expect(panel["effectiveDateTime"] as? String == "2019-05-03T07:00:00-04:00")  // the offset it was written with
        let components = panel["component"] as! [[String: Any]]
        #expect(components.map { Self.codes($0)[Self.loinc] } == ["8480-6", "8462-4"])
        #expect(components.map { ($0["valueQuantity"] as! [String: Any])["value"] as? Double } == [120, 80])
        #expect(components.map { ($0["valueQuantity"] as! [String: Any])["code"] as? String } == ["mm[Hg]", "mm[Hg]"])
        // A category sample: its value's name, HealthKit's code, no LOINC.
        let sleep = try #require(one("HKCategoryTypeIdentifierSleepAnalysis"))
        #expect(Self.codes(sleep)[Self.loinc] == nil)
        let value = (sleep["valueCodeableConcept"] as! [String: Any])["coding"] as! [[String: Any]]
        #expect(value.first?["code"] as? String == "HKCategoryValueSleepAnalysisAsleepCore")
        #expect(sleep["effectivePeriod"] as? [String: String] == ["start": "2019-05-03T23:30:00-04:00", "end": "2019-05-04T06:45:00-04:00"])
        // The workout: an Observation of its activity, with duration, energy and distance.
        let workout = try #require(one("HKWorkoutTypeIdentifier"))
        let activity = (workout["valueCodeableConcept"] as! [String: Any])["coding"] as! [[String: Any]]
        #expect(activity.first?["code"] as? String == "HKWorkoutActivityTypeRunning")
        let totals = (workout["component"] as! [[String: Any]]).map { ($0["valueQuantity"] as! [String: Any]) }
        #expect(totals.map { $0["value"] as? Double } == [1830, 310, 5100])
        #expect(totals.map { $0["code"] as? String } == ["s", "kcal", "m"])
        // The HRV sample's device.
        let devices = try Self.resources(dir, "all", "Device.ndjson")
        #expect(devices.count == 1 && devices[0]["manufacturer"] as? String == "Apple Inc.")
        let hrv = observations.filter { ($0["device"] as? [String: String])?["reference"] == "Device/\(devices[0]["id"] as! String)" }
        #expect(hrv.count == 1)

        // Counts: the Observations are the samples `stats` counts, the manifest's counts the lines.
        let stats = try JSONSerialization.jsonObject(with: Data(try Self.run(dir, ["--json", "stats"]).stdout.utf8)) as! [String: Any]
        let samples = (stats["samples"] as! [String: [String: Int]]).values.flatMap(\.values).reduce(0, +)
        #expect(observations.count == samples && samples == Self.table.count + 8)
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.path + "/all/manifest.json"))) as! [String: Any]
        let output = manifest["output"] as! [[String: Any]]
        for entry in output {
            #expect(entry["count"] as? Int == (try Self.lines(dir, "all", entry["url"] as! String)).count, "\(entry)")
        }
        #expect(output.map { $0["type"] as! String } == ["Patient", "Observation", "Device", "Provenance"])
        #expect(manifest["requiresAccessToken"] as? Bool == false && manifest["request"] as? String == "healthledger export fhir --owner")
        #expect(r.stdout.contains("\(dir.path)/all/Observation.ndjson\t\(samples) resources\n"))

        // Provenance: the body mass's names the event `prove` finds for it, and the checkpoint's root.
        let provenances = try Self.resources(dir, "all", "Provenance.ndjson")
        let provenance = try #require(provenances.first {
            ($0["target"] as! [[String: String]]).contains { $0["reference"] == "Observation/\(Self.bodyMassUUID)" }
        })
        let fields = Dictionary(uniqueKeysWithValues: ((provenance["extension"] as! [[String: Any]])[0]["extension"] as! [[String: String]])
            .map { ($0["url"]!, $0["valueString"]!) })
        let size = try #require(fields["checkpointSize"])
        let proof = try Self.run(dir, ["--json", "prove", Self.bodyMassUUID, "--size", size])
        let proved = try JSONSerialization.jsonObject(with: Data(proof.stdout.utf8)) as! [String: Any]
        #expect(fields["event"] == "\(proved["sequence"] as! Int)")
        #expect(fields["checkpointRoot"] == proved["root"] as? String)
        let hex = Data(base64Encoded: proved["root"] as! String)!.map { String(format: "%02x", $0) }.joined()
        #expect(fields["checkpointRootHex"] == hex)
        let entity = ((provenance["entity"] as! [[String: Any]])[0]["what"] as! [String: Any])["identifier"] as! [String: String]
        #expect(entity["value"] == fields["event"])
        // Every resource has a Provenance.
        let targets = Set(provenances.flatMap { ($0["target"] as! [[String: String]]).map { $0["reference"]! } })
        #expect(targets.count == observations.count + devices.count + 1)
    }

    /// The table itself, entry by entry: nothing more, nothing less than this list (the
    /// export of each entry is checked above).
    @Test func theLOINCTableIsExactlyTheListedCodes() {
        let expected: [(String, String, String?, String?)] = [
            ("HKQuantityTypeIdentifierBodyMass", "29463-7", "kg", "kg"),
            ("HKQuantityTypeIdentifierHeight", "8302-2", "cm", "cm"),
            ("HKQuantityTypeIdentifierBodyMassIndex", "39156-5", "count", "kg/m2"),
            ("HKQuantityTypeIdentifierHeartRate", "8867-4", "count/min", "/min"),
            ("HKQuantityTypeIdentifierRestingHeartRate", "40443-4", "count/min", "/min"),
            ("HKQuantityTypeIdentifierRespiratoryRate", "9279-1", "count/min", "/min"),
            ("HKQuantityTypeIdentifierBodyTemperature", "8310-5", "degC", "Cel"),
            ("HKQuantityTypeIdentifierOxygenSaturation", "59408-5", "%", "%"),
            ("HKQuantityTypeIdentifierBloodGlucose", "2339-0", "mg/dL", "mg/dL"),
            ("HKCorrelationTypeIdentifierBloodPressure", "85354-9", nil, nil),
            ("HKQuantityTypeIdentifierBloodPressureSystolic", "8480-6", "mmHg", "mm[Hg]"),
            ("HKQuantityTypeIdentifierBloodPressureDiastolic", "8462-4", "mmHg", "mm[Hg]"),
            ("HKQuantityTypeIdentifierStepCount", "55423-8", "count", "{steps}"),
            ("HKQuantityTypeIdentifierHeartRateVariabilitySDNN", "80404-7", "ms", "ms"),
            ("HKQuantityTypeIdentifierBodyFatPercentage", "41982-0", "%", "%"),
            ("HKQuantityTypeIdentifierWaistCircumference", "8280-0", "cm", "cm"),
        ]
        #expect(FHIRCodeTable.entries.count == expected.count)
        for (identifier, loinc, unit, ucum) in expected {
            let entry = FHIRCodeTable.entry(identifier)
            #expect(entry?.loinc == loinc && entry?.unit == unit && entry?.ucum == ucum, "\(identifier): \(String(describing: entry))")
        }
        // Every exported unit converts from the type's canonical unit, and every canonical unit has a UCUM code.
        for type in QuantityType.allTypes {
            #expect(FHIRUnits.exportUnit(of: type).isCompatible(with: type.canonicalUnit), "\(type.identifier)")
            #expect(FHIRUnits.ucumCodes[type.canonicalUnit.spelling] != nil, "\(type.identifier): \(type.canonicalUnit.spelling)")
        }
    }

    @Test func anAppExportsOnlyWhatItMayRead() throws {
        let dir = try Self.ledger()
        let r = try Self.export(dir, ["--app", "com.example.b"], "b")
        #expect(r.status == 0, "\(r.stderr)")
        // B reads heart rate only (and saved nothing): A's heart rate, no body mass, no characteristics.
        let observations = try Self.resources(dir, "b", "Observation.ndjson")
        #expect(observations.map { $0["id"] as? String } == [Self.heartRateUUID])
        let patient = try Self.resources(dir, "b", "Patient.ndjson")
        #expect(patient.count == 1 && patient[0]["birthDate"] == nil && patient[0]["gender"] == nil)
        // --type narrows; a type it may not read exports nothing.
        let mass = try Self.export(dir, ["--app", "com.example.b", "--type", "bodyMass"], "b-mass")
        #expect(mass.status == 0)
        #expect(try Self.lines(dir, "b-mass", "Observation.ndjson").isEmpty)
        // --from / --to: start dates in [from, to).
        let owner = try Self.export(dir, ["--owner", "--type", "heartRate", "--type", "bodyMass", "--from", "2027-08-02T07:10:00Z",
                                          "--to", "2027-08-02T07:13:00Z"], "range")
        #expect(owner.status == 0)
        #expect(Set(try Self.resources(dir, "range", "Observation.ndjson").map { $0["id"] as! String }) == [Self.bodyMassUUID])
    }

    @Test func sinceAnAnchorExportsWhatWasAddedAndDeleted() throws {
        let dir = try Self.ledger()
        let changes = try Self.run(dir, ["changes", "bodyMass,heartRate", "--owner"])
        let anchor = String(try #require(changes.stdout.split(separator: "\n").last?.dropFirst("anchor: ".count)))
        let added = "33333333-3333-4333-8333-333333333333"
        let line = #"{"type":"heartRate","value":61,"unit":"count/min","start":"2027-08-03T07:00:00Z","uuid":"\#(added)"}"# + "\n"
        #expect(try Self.run(dir, ["ingest", "--app", "com.example.a"], stdin: line).status == 0)
        #expect(try Self.run(dir, ["delete", "--owner", Self.bodyMassUUID]).status == 0)

        let r = try Self.export(dir, ["--owner", "--since", anchor], "since")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Self.resources(dir, "since", "Observation.ndjson").map { $0["id"] as? String } == [added])
        #expect(try Self.lines(dir, "since", "deleted.ndjson")
                == [#"{"resourceType":"Bundle","type":"transaction","entry":[{"request":{"method":"DELETE","url":"Observation/\#(Self.bodyMassUUID)"}}]}"#])
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.path + "/since/manifest.json"))) as! [String: Any]
        let deleted = try #require((manifest["deleted"] as? [[String: Any]])?.first)
        #expect(deleted["type"] as? String == "Bundle" && deleted["url"] as? String == "deleted.ndjson" && deleted["count"] as? Int == 1)
        // The manifest's anchor is where the next export starts: nothing since.
        let next = (manifest["extension"] as! [String: Any])["anchor"] as! String
        let again = try Self.export(dir, ["--owner", "--since", next], "again")
        #expect(again.status == 0)
        #expect(try Self.lines(dir, "again", "Observation.ndjson").isEmpty && (try Self.lines(dir, "again", "deleted.ndjson")).isEmpty)
    }

    @Test func refusedExportsWriteNothing() throws {
        let dir = try Self.ledger()
        let unknown = try Self.export(dir, ["--app", "com.example.nobody"], "nobody")
        #expect(unknown.status == 4)
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/nobody"))  // a refused export makes no folder
        let first = try Self.export(dir, ["--owner"], "out")
        #expect(first.status == 0)
        let before = try FileManager.default.contentsOfDirectory(atPath: dir.path + "/out").sorted()
        #expect(before == ["Device.ndjson", "Observation.ndjson", "Patient.ndjson", "Provenance.ndjson", "manifest.json"])
        let again = try Self.export(dir, ["--owner"], "out")
        #expect(again.status == 5)
        #expect(again.stderr == "healthledger: outputNotEmpty: \(dir.path)/out holds files already; an export writes into a new or empty folder\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path + "/out").sorted() == before)
        let modes = try [dir.path + "/out", dir.path + "/out/Observation.ndjson"].map {
            try FileManager.default.attributesOfItem(atPath: $0)[.posixPermissions] as? Int
        }
        #expect(modes == [0o700, 0o600])
        // An anchor of another ledger is refused, a malformed one and bad options are usage or input errors.
        let other = TemporaryDirectory("fhir-other")
        #expect(try CLIRunner.run(["--ledger", other.path + "/L", "init"]).status == 0)
        let foreign = try CLIRunner.run(["--ledger", other.path + "/L", "changes", "heartRate", "--owner"])
        let foreignAnchor = String(try #require(foreign.stdout.split(separator: "\n").last?.dropFirst("anchor: ".count)))
        let refused = try Self.export(dir, ["--owner", "--since", foreignAnchor], "foreign")
        #expect(refused.status == 5, "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/foreign"))
        for (args, status) in [(["--owner", "--since", "not-an-anchor"], Int32(3)), (["--owner", "--type", "dateOfBirth"], 2),
                               (["--owner", "--from", "2027-01-02", "--to", "2027-01-01"], 2), (["--owner", "--from", "yesterday"], 3)] {
            let r = try Self.export(dir, args, "bad")
            #expect(r.status == status, "\(args): \(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir.path + "/bad"))
        }
    }

    @Test(.enabled(if: venvPython != nil,
                   "no FHIR validator: tools/fhir_venv.sh makes its venv (fhir.resources from PyPI) at ~/.cache/healthledger/fhir-venv"))
    func everyExportedResourceIsValidR4() throws {
        let dir = try Self.ledger()
        #expect(try Self.export(dir, ["--owner"], "all").status == 0)
        #expect(try Self.export(dir, ["--app", "com.example.b"], "b").status == 0)
        let anchor = String(try Self.run(dir, ["changes", "heartRate", "--owner"]).stdout.split(separator: "\n").last!.dropFirst("anchor: ".count))
        #expect(try Self.run(dir, ["delete", "--owner", Self.heartRateUUID]).status == 0)
        #expect(try Self.export(dir, ["--owner", "--since", anchor], "since").status == 0)
        for (out, expected) in [("all", "ok 33 resources (Patient 1, Observation 23, Device 1, Provenance 8), 0 deletions\n"),
                                ("b", "ok 4 resources (Patient 1, Observation 1, Device 0, Provenance 2), 0 deletions\n"),
                                ("since", "ok 2 resources (Patient 1, Observation 0, Device 0, Provenance 1), 1 deletions\n")] {
            let check = try ChildProcess.run(Self.venvPython!, [Self.checker, dir.path + "/" + out])
            #expect(check.status == 0 && check.stdoutText == expected, "\(out): \(check.stdoutText)\(check.stderrText)")
        }
        // A broken resource fails: an Observation without its status.
        let observations = dir.path + "/all/Observation.ndjson"
        let text = try String(contentsOfFile: observations, encoding: .utf8)
        try text.replacingOccurrences(of: #""status":"final","#, with: "").write(toFile: observations, atomically: false, encoding: .utf8)
        let broken = try ChildProcess.run(Self.venvPython!, [Self.checker, dir.path + "/all"])
        #expect(broken.status == 1 && broken.stdoutText.hasPrefix("FAIL: Observation.ndjson:1: not a valid R4 Observation"), "\(broken.stdoutText)")
    }
}
