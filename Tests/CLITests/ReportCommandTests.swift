import Foundation
import Testing
import TestSupport

/// `healthledger report`: the HTML report, its visibility for apps, and the page in a
/// real browser (headless Chromium: no console messages, no network requests, not
/// blank, the expected numbers in the DOM). Screenshots go to tools/scratch/.
struct ReportCommandTests {
    static let scratch = SharedData.repositoryRoot.appendingPathComponent("tools/scratch").path

    static func run(_ dir: TemporaryDirectory, _ args: [String]) throws -> CLIResult {
        let r = try CLIRunner.run(["--ledger", dir.path] + args)
        guard r.status == 0 else { throw StoreCommandTests.CLIError(args: args, result: r) }
        return r
    }

    /// Two apps: the scale may share and read bodyMass; the coach asked to read it
    /// and was denied, and shares heartRate.
    static func twoApps() throws -> TemporaryDirectory {
        let dir = TemporaryDirectory()
        for args in [
            ["init"],
            ["app", "register", "--app", "com.example.scale", "--name", "Scale", "--share-purpose", "saves weights", "--read-purpose", "reads weights"],
            ["app", "register", "--app", "com.example.coach", "--name", "Coach", "--share-purpose", "saves pulse", "--read-purpose", "reads weights"],
            ["--app", "com.example.scale", "request", "--share", "bodyMass", "--read", "bodyMass"],
            ["--app", "com.example.coach", "request", "--share", "heartRate", "--read", "bodyMass"],
            ["authorize", "--app", "com.example.scale", "--share", "bodyMass", "--read", "bodyMass"],
            ["authorize", "--app", "com.example.coach", "--share", "heartRate", "--deny-read", "bodyMass"],
            ["save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "70.5", "--unit", "kg", "--start", "2026-02-01T08:00:00Z"],
            ["save", "--app", "com.example.scale", "--type", "bodyMass", "--value", "70.1", "--unit", "kg", "--start", "2026-02-03T08:00:00Z"],
            ["save", "--app", "com.example.coach", "--type", "heartRate", "--value", "61", "--unit", "count/min", "--start", "2026-02-02T07:00:00Z"],
            ["save", "--app", "com.example.coach", "--type", "heartRate", "--value", "95", "--unit", "count/min", "--start", "2026-02-02T18:00:00Z"],
        ] { _ = try run(dir, args) }
        return dir
    }

    @Test func theOwnerSeesEverySourceAndEveryDecision() throws {
        let dir = try Self.twoApps()
        let html = try Self.run(dir, ["report", "--owner", "--now", "2026-03-01T00:00:00Z", "--tz", "UTC"]).stdout
        #expect(html.hasPrefix("<!DOCTYPE html>\n<html lang=\"en-US\">"))
        #expect(html.contains("<td id=\"weight\">154.544 lb</td><td>2026-02-03 08:00</td><td>Scale</td>"))
        #expect(html.contains("<figure id=\"fig-body-mass\">"))
        #expect(html.contains("<figure id=\"fig-heart-rate\">"))
        // the heart rate day: min 61, mean 78.0, max 95
        #expect(html.contains("<th scope=\"row\">2026-02-02</th><td>61</td><td>78.0</td><td>95</td><td>–</td>"))
        #expect(html.contains("denied reading bodyMass for com.example.coach"))
        #expect(html.contains("<tr data-type=\"HKQuantityTypeIdentifierBodyMass\"><th scope=\"row\">bodyMass</th><td data-count=\"2\">2</td></tr>"))
        #expect(html.contains("<dd id=\"verify\">OK: the ledger is intact</dd>"))
        #expect(html.contains("<code id=\"command\">healthledger --ledger \(dir.path) report --owner --tz GMT --locale en_US --now 2026-03-01T00:00:00Z</code>")
                || html.contains("<code id=\"command\">healthledger --ledger \(dir.path) report --owner --tz UTC --locale en_US --now 2026-03-01T00:00:00Z</code>"))
        // nothing points out of the page but the SVG namespace name (never fetched)
        #expect(html.components(separatedBy: "://").count == html.components(separatedBy: "xmlns=\"http://www.w3.org/2000/svg\"").count)
    }

    /// The coach may not read bodyMass: its report has no weight, no body-mass chart,
    /// no other app's events, and no read answer (HealthKit never tells an app).
    @Test func anAppSeesOnlyWhatItMayRead() throws {
        let dir = try Self.twoApps()
        let before = try StoreCommandTests.contents(dir)
        let html = try Self.run(dir, ["report", "--app", "com.example.coach", "--now", "2026-03-01T00:00:00Z", "--tz", "UTC"]).stdout
        #expect(html.contains("<td id=\"weight\">—</td>"))
        #expect(html.contains("<td id=\"bmi\">—</td>"))
        #expect(!html.contains("fig-body-mass"))
        #expect(!html.contains("HKQuantityTypeIdentifierBodyMass"))
        #expect(html.contains("<tr data-type=\"HKQuantityTypeIdentifierHeartRate\"><th scope=\"row\">heartRate</th><td data-count=\"2\">2</td></tr>"))
        #expect(html.contains("granted sharing heartRate for com.example.coach"))
        #expect(!html.contains("reading"))
        #expect(!html.contains("com.example.scale"))
        // a report writes nothing to the ledger
        #expect(try StoreCommandTests.contents(dir) == before)
        // and the scale, which may read bodyMass, sees both weights
        let scale = try Self.run(dir, ["report", "--app", "com.example.scale", "--now", "2026-03-01T00:00:00Z"]).stdout
        #expect(scale.contains("<td data-count=\"2\">2</td>") && scale.contains("fig-body-mass"))
        #expect(!scale.contains("fig-heart-rate"))
    }

    /// Daily steps come from the statistics engine: two sources counting the same walk
    /// are merged by the order in force, never added up.
    @Test func dailyStepsAreMergedBySourcePriority() throws {
        let dir = TemporaryDirectory()
        for args in [
            ["init"],
            ["app", "register", "--app", "com.example.watch", "--name", "Watch", "--share-purpose", "counts steps", "--read-purpose", "reads steps"],
            ["app", "register", "--app", "com.example.phone", "--name", "Phone", "--share-purpose", "counts steps", "--read-purpose", "reads steps"],
            ["--app", "com.example.watch", "request", "--share", "stepCount"],
            ["--app", "com.example.phone", "request", "--share", "stepCount"],
            ["authorize", "--app", "com.example.watch", "--share", "stepCount"],
            ["authorize", "--app", "com.example.phone", "--share", "stepCount"],
            ["save", "--app", "com.example.watch", "--type", "stepCount", "--value", "1000", "--unit", "count",
             "--start", "2026-02-02T08:00:00Z", "--end", "2026-02-02T09:00:00Z"],
            ["save", "--app", "com.example.phone", "--type", "stepCount", "--value", "800", "--unit", "count",
             "--start", "2026-02-02T08:00:00Z", "--end", "2026-02-02T09:00:00Z"],
            ["save", "--app", "com.example.phone", "--type", "stepCount", "--value", "4321", "--unit", "count",
             "--start", "2026-02-03T10:00:00Z", "--end", "2026-02-03T11:00:00Z"],
            ["priority", "set", "stepCount", "com.example.watch", "com.example.phone"],
        ] { _ = try Self.run(dir, args) }
        let watchFirst = try Self.run(dir, ["report", "--owner", "--now", "2026-03-01T00:00:00Z", "--tz", "UTC"]).stdout
        #expect(watchFirst.contains("<figure id=\"fig-steps\">"))
        #expect(watchFirst.contains("<th scope=\"row\">2026-02-02</th><td>1,000</td></tr><tr><th scope=\"row\">2026-02-03</th><td>4,321</td>"))
        #expect(watchFirst.contains("<tr><th scope=\"row\">stepCount</th><td>com.example.watch › com.example.phone</td></tr>"))
        #expect(watchFirst.contains("source order for stepCount: com.example.watch › com.example.phone"))
        _ = try Self.run(dir, ["priority", "set", "stepCount", "com.example.phone", "com.example.watch"])
        let phoneFirst = try Self.run(dir, ["report", "--owner", "--now", "2026-03-01T00:00:00Z", "--tz", "UTC"]).stdout
        #expect(phoneFirst.contains("<th scope=\"row\">2026-02-02</th><td>800</td></tr>"))
        // an app that may not read steps sums its own samples only, and is not told the order
        let phone = try Self.run(dir, ["report", "--app", "com.example.phone", "--now", "2026-03-01T00:00:00Z", "--tz", "UTC"]).stdout
        #expect(phone.contains("<th scope=\"row\">2026-02-02</th><td>800</td></tr><tr><th scope=\"row\">2026-02-03</th><td>4,321</td>"))
        #expect(!phone.contains("com.example.watch"))
    }

    @Test func theLocaleFormatsNumbersAndThePeriodSelectsSamples() throws {
        let dir = try Self.twoApps()
        let html = try Self.run(dir, ["report", "--owner", "--now", "2026-03-01T00:00:00Z", "--locale", "de_DE",
                                      "--from", "2026-02-02T00:00:00Z", "--to", "2026-02-04T00:00:00Z"]).stdout
        #expect(html.contains("<html lang=\"de-DE\">"))
        #expect(html.contains("<th scope=\"row\">2026-02-03</th><td>70,10</td><td>70,10</td>"))
        #expect(!html.contains("2026-02-01</th>"))
    }

    @Test func badOptionsAreRefusedWithTheirExitStatus() throws {
        let dir = try Self.twoApps()
        let before = try StoreCommandTests.contents(dir)
        let noIdentity = try CLIRunner.run(["--ledger", dir.path, "report"])
        #expect(noIdentity.status == 2 && noIdentity.stderr.contains("give --app ID or --owner"))
        let backwards = try CLIRunner.run(["--ledger", dir.path, "report", "--owner", "--from", "2026-02-02", "--to", "2026-02-01"])
        #expect(backwards.status == 2 && backwards.stderr.contains("--from 2026-02-02 is not before --to 2026-02-01"))
        let locale = try CLIRunner.run(["--ledger", dir.path, "report", "--owner", "--locale", "en US;"])
        #expect(locale.status == 3 && locale.stderr.contains("invalidLocale"))
        let unknown = try CLIRunner.run(["--ledger", dir.path, "report", "--app", "com.example.nobody"])
        #expect(unknown.status == 4 && unknown.stderr.contains("appNotRegistered"))
        let unwritable = try CLIRunner.run(["--ledger", dir.path, "report", "--owner", "--out", dir.path + "/no/such/folder/r.html"])
        #expect(unwritable.status == 1 && unwritable.stderr.contains("report: cannot write"))
        #expect(try StoreCommandTests.contents(dir) == before)
    }

    /// `--out` writes the page (the whole profile) with mode 0600, as
    /// the ledger's files, whatever the umask, and replaces a file already there (its
    /// mode with it).
    @Test func theReportFileIsReadableByItsOwnerAlone() throws {
        let dir = try Self.twoApps()
        let out = dir.url.deletingLastPathComponent().appendingPathComponent("report.html").path
        func mode() throws -> Int { (try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as! NSNumber).intValue }
        _ = try Self.run(dir, ["report", "--owner", "--now", "2026-03-01T00:00:00Z", "--out", out])
        #expect(try mode() == 0o600)
        #expect(try String(contentsOfFile: out, encoding: .utf8).hasPrefix("<!DOCTYPE html>"))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: out)
        _ = try Self.run(dir, ["report", "--owner", "--now", "2026-03-01T00:00:00Z", "--out", out])
        #expect(try mode() == 0o600)
        // nothing else left beside it (the temporary file was renamed)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.deletingLastPathComponent().path).sorted()
                == [dir.url.lastPathComponent, "report.html"].sorted())
    }

    // MARK: In a real browser

    /// The check itself can fail: a page that logs and fetches is caught.
    @Test(.enabled(if: HeadlessChromium.available, "needs Debian's chromium (apt-get install chromium)"))
    func theBrowserCheckCatchesConsoleMessagesAndRequests() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
        let page = dir.path + "/bad.html"
        try #"<!DOCTYPE html><html><body><img src="http://example.invalid/x.png"><script>console.error("boom")</script></body></html>"#
            .write(toFile: page, atomically: true, encoding: .utf8)
        let load = try HeadlessChromium.load(page, scratch: dir.path)
        #expect(load.consoleMessages.count == 1 && load.consoleMessages[0].contains("\"boom\""))
        #expect(load.pageRequests.contains("http://example.invalid/x.png"))
    }

    @Test(.enabled(if: HeadlessChromium.available, "needs Debian's chromium (apt-get install chromium)"))
    func theDemoReportLoadsCleanlyAndShowsTheBMI() throws {
        let dir = TemporaryDirectory()
        let ledger = dir.path + "/demo.ledger", page = dir.path + "/report.html"
        #expect(try CLIRunner.run(["--ledger", ledger, "demo"]).status == 0)
        let r = try CLIRunner.run(["--ledger", ledger, "report", "--owner", "--out", page])
        #expect(r.status == 0, "\(r.stderr)")
        let load = try HeadlessChromium.load(page, scratch: dir.path)
        #expect(load.consoleMessages == [])
        #expect(load.pageRequests == [])
        #expect(load.dom.contains("<td id=\"bmi\">22.86</td>"))
        #expect(load.dom.contains("<td id=\"weight\">154.324 lb</td>"))
        #expect(load.dom.contains("<td id=\"blood-type\">A+</td>") && load.dom.contains("<td id=\"age\">"))
        #expect(load.dom.contains("<dd id=\"verify\">OK: the ledger is intact</dd>"))
        try FileManager.default.createDirectory(atPath: Self.scratch, withIntermediateDirectories: true)
        let shot = try HeadlessChromium.screenshot(page, to: Self.scratch + "/report-demo.png", width: 900, height: 1500, scratch: dir.path)
        #expect(shot.width == 900 && shot.height == 1500)
        #expect(shot.inkedPixels > 20_000, "the screenshot is blank")
        #expect(shot.colours > 20, "the charts' colours are missing")
    }

    static let export = SharedData.file("data/apple-health/bwassim-2021/export.zip")

    /// A real export: the report's samples per type are the store's own counts
    /// (`stats`), and its latest weight is `profile`'s.
    @Test(.enabled(if: HeadlessChromium.available && export != nil, "needs chromium and ../shared/data/apple-health/bwassim-2021"))
    func anImportedExportsReportHoldsItsCounts() throws {
        let dir = TemporaryDirectory()
        let ledger = dir.path + "/export.ledger", page = dir.path + "/report.html"
        let imported = try CLIRunner.run(["--ledger", ledger, "import-apple-health", Self.export!.path])
        #expect(imported.status == 0, "\(imported.stderr)")
        let now = "2026-03-01T00:00:00Z"
        #expect(try CLIRunner.run(["--ledger", ledger, "report", "--owner", "--now", now, "--out", page]).status == 0)
        let load = try HeadlessChromium.load(page, scratch: dir.path)
        #expect(load.consoleMessages == [])
        #expect(load.pageRequests == [])
        let stats = try JSONSerialization.jsonObject(with: Data(try CLIRunner.run(["--ledger", ledger, "--json", "stats"]).stdout.utf8)) as! [String: Any]
        let samples = stats["samples"] as! [String: [String: Int]]
        #expect(samples.count > 3)
        for (type, sources) in samples {
            let total = sources.values.reduce(0, +)
            #expect(load.dom.contains("<tr data-type=\"\(type)\">") && load.dom.contains("<td data-count=\"\(total)\">"), "\(type): \(total)")
        }
        let profile = try JSONSerialization.jsonObject(with: Data(try CLIRunner.run(["--ledger", ledger, "--json", "profile", "--owner", "--now", now]).stdout.utf8)) as! [String: Any]
        let weight = try #require(profile["weight"] as? String)
        #expect(load.dom.contains("<td id=\"weight\">\(weight)</td>"))
        try FileManager.default.createDirectory(atPath: Self.scratch, withIntermediateDirectories: true)
        let shot = try HeadlessChromium.screenshot(page, to: Self.scratch + "/report-export.png", width: 1000, height: 2400, scratch: dir.path)
        #expect(shot.inkedPixels > 50_000, "the screenshot is blank")
    }
}
