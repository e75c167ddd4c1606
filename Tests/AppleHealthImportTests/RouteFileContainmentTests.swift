import Foundation
import Testing
import TestSupport
@testable import AppleHealthImport

/// A workout route's `FileReference` is read only from inside the
/// export (its XML's folder, or the zip): `..`, symlinks leading out, and whatever
/// lies outside are counted as missing route files, exactly like a file that is not
/// there, with nothing of them read (no existence oracle). Inside the export, only
/// regular files of at most `ExportSource.routeFileLimit` bytes are read.
struct RouteFileContainmentTests {
    static let point = """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="Apple Health Export"><trk><trkseg>
        <trkpt lon="-122.396397" lat="37.781672"><ele>4.07</ele><time>2019-06-11T22:00:42Z</time></trkpt>
        </trkseg></trk></gpx>
        """

    /// An export of one workout whose route names `reference`.
    static func export(referencing reference: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <HealthData locale="en_US">
         <ExportDate value="2019-06-17 21:07:11 -0400"/>
         <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="30" durationUnit="min" sourceName="Watch" creationDate="2019-06-11 15:31:00 -0700" startDate="2019-06-11 15:00:00 -0700" endDate="2019-06-11 15:30:00 -0700">
          <WorkoutRoute sourceName="Watch" creationDate="2019-06-11 15:31:00 -0700" startDate="2019-06-11 15:00:00 -0700" endDate="2019-06-11 15:30:00 -0700">
           <FileReference path="\(reference)"/>
          </WorkoutRoute>
         </Workout>
        </HealthData>
        """
    }

    /// `work/outside.gpx` (a good route, outside the export) and `work/export/` holding
    /// `export.xml` (naming `reference`), `workout-routes/inside.gpx` and a symlink
    /// `workout-routes/link.gpx` to the outside route.
    static func layout(_ reference: String) throws -> (dir: TemporaryDirectory, export: String) {
        let dir = TemporaryDirectory("routes")
        let folder = dir.path + "/export"
        try FileManager.default.createDirectory(atPath: folder + "/workout-routes", withIntermediateDirectories: true)
        try point.write(toFile: dir.path + "/outside.gpx", atomically: true, encoding: .utf8)
        try point.write(toFile: folder + "/workout-routes/inside.gpx", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: folder + "/workout-routes/link.gpx", withDestinationPath: "../../outside.gpx")
        try FileManager.default.createSymbolicLink(atPath: folder + "/workout-routes/dir-link", withDestinationPath: dir.path)
        try Self.export(referencing: reference).write(toFile: folder + "/export.xml", atomically: true, encoding: .utf8)
        return (dir, folder)
    }

    @Test(arguments: [
        "/../outside.gpx",  // `..` out of the folder
        "/workout-routes/../../outside.gpx",  // `..` after a real folder
        "/workout-routes/link.gpx",  // a symlink inside leading out
        "/workout-routes/dir-link/outside.gpx",  // through a symlinked folder
        "/../../../../../../../../etc/passwd",  // exists, outside, not a route: was "malformedXML … line 1"
        "/../../../../../../../../etc/no-such-file",  // does not exist: told apart from the one above by nothing
        "/workout-routes/none.gpx",  // inside, missing
    ])
    func aRouteOutsideTheExportIsReportedExactlyAsAMissingOneAndNeverRead(_ reference: String) throws {
        let (dir, export) = try Self.layout(reference)
        defer { withExtendedLifetime(dir) {} }
        for path in [export, export + "/export.xml"] {
            let summary = try AppleHealthImporter.check(try ExportSource(path: path))
            #expect(summary.missingRouteFiles == [reference], "\(path)")
            #expect(summary.workoutRoutes == 1)
            #expect(summary.routePoints == 0, "\(path): nothing of \(reference) is read")
        }
    }

    @Test func aRouteInsideTheExportIsStillRead() throws {
        let (dir, export) = try Self.layout("/workout-routes/inside.gpx")
        defer { withExtendedLifetime(dir) {} }
        let summary = try AppleHealthImporter.check(try ExportSource(path: export))
        #expect(summary.missingRouteFiles == [])
        #expect(summary.routePoints == 1)
    }

    /// A sparse file one byte over the limit: refused from its size, never read (it
    /// used to be read whole into memory: 1.5 GB took 3.1 GB).
    @Test func aRouteFileOverTheLimitIsRefusedFromItsSizeAlone() throws {
        let (dir, export) = try Self.layout("/workout-routes/huge.gpx")
        defer { withExtendedLifetime(dir) {} }
        let huge = export + "/workout-routes/huge.gpx"
        #expect(FileManager.default.createFile(atPath: huge, contents: nil))
        #expect(truncate(huge, off_t(ExportSource.routeFileLimit + 1)) == 0)
        #expect(ExportSource.routeFileLimit == 64 << 20)
        #expect {
            _ = try AppleHealthImporter.check(try ExportSource(path: export))
        } throws: { error in
            "\(error)" == "invalidValue: export.xml: line 7, column 3: route /workout-routes/huge.gpx: 67108865 bytes, over the 67108864 a route file may hold"
        }
    }

    /// A zip entry's claimed size is checked before anything is inflated or allocated.
    @Test func aZipRouteEntryClaimingMoreThanTheLimitIsRefusedBeforeItIsRead() throws {
        let dir = TemporaryDirectory("zip-routes")
        try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
        var zip = ImportInputTests.storedZip([
            ("apple_health_export/export.xml", Array(Self.export(referencing: "/workout-routes/r.gpx").utf8)),
            // Longer than the 4 KiB read to tell an export XML from other entries.
            ("apple_health_export/workout-routes/r.gpx", Array((Self.point + "<!--" + String(repeating: " ", count: 5000) + "-->").utf8)),
        ])
        // The route's central-directory record claims 64 MiB + 1 uncompressed bytes.
        let name = Array("apple_health_export/workout-routes/r.gpx".utf8)
        var found: Int?
        for i in 0..<(zip.count - 46 - name.count) where zip[i] == 0x50 && zip[i + 1] == 0x4B && zip[i + 2] == 0x01 && zip[i + 3] == 0x02 {
            if Array(zip[(i + 46)..<(i + 46 + name.count)]) == name { found = i }
        }
        let record = try #require(found)
        let claimed = UInt32(ExportSource.routeFileLimit + 1)
        for k in 0..<4 { zip[record + 24 + k] = UInt8(claimed >> (8 * UInt32(k)) & 0xFF) }
        let path = dir.path + "/export.zip"
        try Data(zip).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try AppleHealthImporter.check(try ExportSource(path: path))
        } throws: { error in
            "\(error)" == "invalidValue: apple_health_export/export.xml: line 7, column 3: route /workout-routes/r.gpx: 67108865 bytes, over the 67108864 a route file may hold"
        }
    }

    /// In a zip, a reference with `..` names no entry, even one whose name is spelled
    /// with the same `..` (names are resolved, not matched as text).
    @Test func aZipReferenceWithDotDotNamesNoEntry() throws {
        let dir = TemporaryDirectory("zip-dotdot")
        try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
        let path = dir.path + "/export.zip"
        try Data(ImportInputTests.storedZip([
            ("apple_health_export/export.xml", Array(Self.export(referencing: "/../r.gpx").utf8)),
            ("apple_health_export/../r.gpx", Array(Self.point.utf8)),
            ("r.gpx", Array(Self.point.utf8)),
        ])).write(to: URL(fileURLWithPath: path))
        let summary = try AppleHealthImporter.check(try ExportSource(path: path))
        #expect(summary.missingRouteFiles == ["/../r.gpx"])
        #expect(summary.routePoints == 0)
    }

    /// The inflater (or a stored entry's reader) is asked for no more than one byte
    /// past the size the central directory claims: a zip bomb stops there.
    @Test func aZipEntryIsReadNoFurtherThanOneBytePastItsClaimedSize() throws {
        let entry = ZipArchive.Entry(name: "bomb", rawName: Array("bomb".utf8), method: 0, flags: 0, crc32: 0,
                                     compressedSize: 1 << 20, uncompressedSize: 10, localHeaderOffset: 0)
        let stream = CheckedEntryStream(MemoryStream([UInt8](repeating: 0x41, count: 1 << 20)), entry: entry)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        #expect {
            while try buffer.withUnsafeMutableBytes({ try stream.read(into: $0) }) > 0 {}
        } throws: { error in
            (error as? ArchiveError) == .sizeMismatch(entry: "bomb", expected: 10, actual: 11)
        }
    }
}
