import Foundation
import HealthModel
import LedgerCore
import LedgerLog

/// `healthledger-bench replay`: a generated ledger of N events (mostly quantity saves
/// over 20 types from 5 apps, with deletions and authorization changes): full replay
/// events/s and peak memory, open time with and without a snapshot, verify time, and
/// the same samples in SQLite for "latest per type" and the profile.
enum ReplayBench {
    static let types: [QuantityType] = [.bodyMass, .height, .heartRate, .stepCount, .activeEnergyBurned, .basalEnergyBurned,
                                        .distanceWalkingRunning, .flightsClimbed, .restingHeartRate, .walkingHeartRateAverage,
                                        .heartRateVariabilitySDNN, .respiratoryRate, .oxygenSaturation, .bodyTemperature,
                                        .bloodGlucose, .dietaryWater, .dietaryEnergyConsumed, .appleExerciseTime,
                                        .walkingSpeed, .vo2Max]
    static let units: [String] = ["kg", "cm", "count/min", "count", "kcal", "kcal", "km", "count", "count/min", "count/min",
                                  "ms", "count/min", "%", "degC", "mg/dL", "mL", "kcal", "min", "km/hr", "mL/(kg*min)"]

    static func run(report: Report, scratch: String, events: Int, peers: Bool) async throws {
        let path = scratch + "/replay-ledger"
        try? FileManager.default.removeItem(atPath: path)
        let fs = PosixFileSystem(path: path)
        let tsvPath = scratch + "/replay-samples.tsv"

        // Generate.
        let generated = try await generate(fs, events: events, tsv: peers ? tsvPath : nil)
        let logBytes = Double(try FileManager.default.attributesOfItem(atPath: path + "/ledger.log")[.size] as! Int)
        report.line("replay.generate", [("events", Double(generated.events)), ("samples", Double(generated.samples)),
                                        ("deleted", Double(generated.deleted)), ("seconds", generated.seconds),
                                        ("events_per_s", Double(generated.events) / generated.seconds),
                                        ("log_MB", logBytes / 1e6), ("snapshot_write_s", generated.snapshotSeconds),
                                        ("snapshot_MB", generated.snapshotBytes / 1e6),
                                        ("snapshot_bytes_per_sample", generated.snapshotBytes / Double(max(1, generated.samples)))])

        // Full replay, no snapshot.
        let reader = try LogReader(fs)
        Measure.resetPeakRSS()
        let rssBefore = Double(Measure.peakRSS())
        var loaded: StateLoader.Loaded?
        let replaySeconds = try Measure.time { loaded = try StateLoader.load(fs, reader: reader, useSnapshots: false) }
        let replayed = loaded!.replayed
        report.line("replay.full (no snapshot)", [("events", Double(replayed)), ("seconds", replaySeconds),
                                                   ("events_per_s", Double(replayed) / replaySeconds),
                                                   ("log_MB_per_s", logBytes / replaySeconds / 1e6),
                                                   ("peak_rss_MB", Double(Measure.peakRSS()) / 1_048_576),
                                                   ("rss_before_MB", rssBefore / 1_048_576)])
        let digest = loaded!.state.digest()
        loaded = nil

        // Open with the fresh snapshot (no tail) and without.
        var withSnapshot: StateLoader.Loaded?
        let snapshotOpen = try Measure.time { withSnapshot = try StateLoader.load(fs, reader: reader, useSnapshots: true) }
        precondition(withSnapshot!.snapshot != nil && withSnapshot!.replayed == 0, "the generator leaves a fresh snapshot")
        precondition(withSnapshot!.state.digest() == digest, "snapshot and replay agree")
        report.line("replay.open with fresh snapshot", [("ms", snapshotOpen * 1000)])
        withSnapshot = nil
        // Mapped (rule S8, what read commands do): no column read to open; the first
        // reads check the blocks they touch.
        let rssBeforeMapped = Double(Measure.currentRSS())
        var mapped: StateLoader.Loaded?
        let mappedOpen = try Measure.time { mapped = try StateLoader.load(fs, reader: reader, useSnapshots: true, mapped: true) }
        precondition(mapped!.snapshot != nil && mapped!.replayed == 0 && mapped!.state.samples.isMapped, "mapped")
        report.line("replay.open mapped (fresh snapshot, S8)", [("ms", mappedOpen * 1000),
                                                               ("rss_added_MB", (Double(Measure.currentRSS()) - rssBeforeMapped) / 1_048_576)])
        var mappedLatest = 0
        let mappedLatestSeconds = try Measure.time {
            var view = try LedgerReadView(state: mapped!.state, fs: fs, ledgerId: reader.header.ledgerId, viewer: .owner)
            for code in mapped!.state.samples.typeCodesPresent {
                guard let type = ObjectType(code: code) else { continue }
                if try view.mostRecentSample(for: type, now: Date()) != nil { mappedLatest += 1 }
            }
        }
        report.line("mapped: first latest per type (\(mappedLatest) types, blocks checked as read)", [("ms", mappedLatestSeconds * 1000)])
        precondition(mapped!.state.digest() == digest, "mapped snapshot and replay agree")
        mapped = nil
        var ledger: Ledger?
        let rssBeforeWriter = Double(Measure.currentRSS())
        let writerOpen = try Measure.time { ledger = try Ledger.open(fs) }
        // A writer holds the projections in memory (the snapshot read whole): its RSS
        // is what the per-sample projection cost comes to.
        report.line("ledger.open for writing (snapshot)", [("ms", writerOpen * 1000),
                                                           ("rss_added_MB", (Double(Measure.currentRSS()) - rssBeforeWriter) / 1_048_576)])

        // Latest per type and the profile, from the projections and the log.
        let reps = 20
        var latestCount = 0
        let latestSeconds = try await Measure.timeAsync {
            for _ in 0..<reps {
                let state = await ledger!.state
                latestCount = 0
                for code in state.samples.typeCodesPresent {
                    if let slot = state.samples.latest(typeCode: code) {
                        _ = try await ledger!.sample(slot: slot)
                        latestCount += 1
                    }
                }
            }
        } / Double(reps)
        let profileSeconds = try await Measure.timeAsync {
            for _ in 0..<reps { _ = try await ledger!.profile().bodyMassIndex }
        } / Double(reps)
        report.line("ours latest per type (\(latestCount) types)", [("ms", latestSeconds * 1000)])
        report.line("ours profile", [("ms", profileSeconds * 1000)])
        ledger!.abandon()  // the snapshot was measured above

        // Verify everything.
        var verified: LedgerVerifier.Report?
        let verifySeconds = try Measure.time { verified = try LedgerVerifier.verify(fs) }
        precondition(verified!.isIntact && verified!.digest == digest, "the generated ledger verifies")
        report.line("verify (log+events+snapshots)", [("seconds", verifySeconds), ("events_per_s", Double(verified!.events) / verifySeconds)])

        if peers {
            let output = try PeerProcess.run("python3", ["tools/peers/sqlite_projection_peer.py", tsvPath, scratch + "/replay-peer.sqlite"])
            for line in output.split(separator: "\n") {
                guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], let test = o["test"] as? String else { continue }
                var fields: [(String, Double)] = []
                for key in ["rows", "seconds", "rows_per_s", "types", "ms"] {
                    if let v = (o[key] as? Double) ?? (o[key] as? Int).map(Double.init) { fields.append((key, v)) }
                }
                if test == "latest_per_type", let ms = o["ms"] as? Double { fields.append(("ratio_vs_ours", ms / (latestSeconds * 1000))) }
                if test == "profile", let ms = o["ms"] as? Double { fields.append(("ratio_vs_ours", ms / (profileSeconds * 1000))) }
                report.line("peer sqlite \(test)", fields)
            }
            try? FileManager.default.removeItem(atPath: tsvPath)
            try? FileManager.default.removeItem(atPath: scratch + "/replay-peer.sqlite")
        }
    }

    struct Generated {
        var events = 0, samples = 0, deleted = 0
        var seconds = 0.0, snapshotSeconds = 0.0, snapshotBytes = 0.0
    }

    /// Writes the ledger through the ledger's own command path (decided, checked,
    /// folded), 1,000 commands per batch.
    static func generate(_ fs: PosixFileSystem, events target: Int, tsv: String?) async throws -> Generated {
        var g = Generated()
        let ledger = try Ledger.create(fs, options: LedgerOptions(snapshotEvery: .max))
        var rng = FastRandom(seed: 2026)  // not SystemRandomNumberGenerator: a getrandom syscall per call
        var out: FileHandle?
        if let tsv {
            _ = FileManager.default.createFile(atPath: tsv, contents: nil)
            out = FileHandle(forWritingAtPath: tsv)
        }
        var tsvBuffer = ""
        let apps = (1...5).map { AppRegistration(bundleIdentifier: "com.example.app\($0)", name: "App \($0)", readPurpose: "r", sharePurpose: "s") }
        let parsedUnits = try units.map { try HealthUnit($0) }
        let start = Measure.now()
        var setup: [LedgerCommand] = [.setCharacteristic(.dateOfBirth(try DateOfBirth(year: 1990, month: 4, day: 12))),
                                      .setCharacteristic(.biologicalSex(.female)), .setCharacteristic(.bloodType(.aPositive))]
        for app in apps {
            setup.append(.registerApp(app))
            setup.append(.decideAuthorization(bundleIdentifier: app.bundleIdentifier,
                                              decisions: types.map { (.quantity($0), .granted, .granted) }, basis: .owner))
        }
        _ = try await ledger.appendBestEffort(setup, durability: .deferred).results
        var time = Date(timeIntervalSince1970: 1_600_000_000)
        var recent: [(UUID, Int)] = []  // (uuid, app index) of recent saves, for deletions
        var deletedSet = Set<UUID>()
        var eventsSoFar = setup.count + 5 * (types.count - 1)
        while eventsSoFar < target {
            var commands: [LedgerCommand] = []
            for _ in 0..<min(1000, target - eventsSoFar) {
                let roll = Int.random(in: 0..<1000, using: &rng)
                let appIndex = Int.random(in: 0..<5, using: &rng)
                let app = apps[appIndex].bundleIdentifier
                if roll < 20, !recent.isEmpty {
                    let victim = recent.remove(at: Int.random(in: 0..<recent.count, using: &rng))
                    commands.append(.delete(bundleIdentifier: Bool.random(using: &rng) ? nil : apps[victim.1].bundleIdentifier,
                                            uuids: [victim.0], reason: nil))
                    deletedSet.insert(victim.0)
                    g.deleted += 1
                } else if roll < 22 {
                    // an authorization change, restored right after (revoke, then grant again)
                    let type = ObjectType.quantity(types[Int.random(in: 0..<types.count, using: &rng)])
                    commands.append(.decideAuthorization(bundleIdentifier: app, decisions: [(type, .denied, nil)], basis: .owner))
                    commands.append(.decideAuthorization(bundleIdentifier: app, decisions: [(type, .granted, nil)], basis: .owner))
                } else {
                    let t = Int.random(in: 0..<types.count, using: &rng)
                    time = time.addingTimeInterval(Double(Int.random(in: 1...120, using: &rng)))
                    let value = types[t] == .oxygenSaturation ? Double.random(in: 0.9...1, using: &rng) : Double.random(in: 1...200, using: &rng)
                    let uuid = rng.uuid()
                    let sample = try QuantitySample(type: types[t], quantity: try Quantity(value, parsedUnits[t]), start: time,
                                                    end: time.addingTimeInterval(60), uuid: uuid)
                    commands.append(.save(bundleIdentifier: app, samples: [.quantity(sample)]))
                    if recent.count < 10_000 { recent.append((uuid, appIndex)) } else { recent[Int.random(in: 0..<10_000, using: &rng)] = (uuid, appIndex) }
                    g.samples += 1
                    if out != nil {
                        tsvBuffer += "\(uuid.uuidString)\t\(types[t].identifier)\t\(time.timeIntervalSince1970)\t\(time.timeIntervalSince1970 + 60)\t\(value)\t\(units[t])\t\(app)\t0\n"
                    }
                }
            }
            let results = try await ledger.appendBestEffort(commands, durability: .deferred).results
            for r in results { if case .success(let e) = r { eventsSoFar += e.count } }
            if let out, tsvBuffer.utf8.count > 1 << 20 {
                out.write(Data(tsvBuffer.utf8))
                tsvBuffer = ""
            }
        }
        try await ledger.sync()
        if let out {
            out.write(Data(tsvBuffer.utf8))
            try out.close()
            // mark deletions for the peer
            if !deletedSet.isEmpty { try markDeleted(tsv!, deletedSet) }
        }
        g.events = Int(await ledger.state.lastSequence)
        g.seconds = Measure.now() - start
        let snapshotStart = Measure.now()
        let name = try await ledger.snapshot()
        g.snapshotSeconds = Measure.now() - snapshotStart
        g.snapshotBytes = Double(try FileManager.default.attributesOfItem(atPath: fs.path + "/" + name)[.size] as! Int)
        try await ledger.close()
        return g
    }

    static func markDeleted(_ tsv: String, _ deleted: Set<UUID>) throws {
        let prefixes = Set(deleted.map(\.uuidString))
        let text = try String(contentsOfFile: tsv, encoding: .utf8)
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for line in text.split(separator: "\n") {
            if prefixes.contains(String(line.prefix(36))) { out += line.dropLast(1) + "1\n" } else { out += line + "\n" }
        }
        try out.write(toFile: tsv, atomically: false, encoding: .utf8)
    }
}


/// SplitMix64: fast, seeded randomness for generating data (and version-4 UUIDs from it).
struct FastRandom: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func uuid() -> UUID {
        var bytes = (next(), next())
        return withUnsafeMutableBytes(of: &bytes) { b in
            b[6] = b[6] & 0x0F | 0x40
            b[8] = b[8] & 0x3F | 0x80
            return UUID(uuid: b.load(as: uuid_t.self))
        }
    }
}
