import Foundation
import HealthModel

/// Where an export's XML and route files are: a zip (read with `ZipArchive`), the
/// unzipped folder, or the XML file itself. The XML is found by its content (a
/// `<HealthData` root near the start), never by its name: the name is localized
/// (`export.xml`, `Export.xml`, `导出.xml`, …) and `export_cda.xml` sits beside it.
public struct ExportSource: Sendable {
    enum Location: Sendable {
        case zip(ZipArchive, ZipArchive.Entry)
        case file(String)
    }

    let location: Location
    /// The path the user gave.
    public let path: String
    /// The export XML's name inside the zip or folder (for messages).
    public let xmlName: String
    /// The XML's size in bytes.
    public let xmlSize: UInt64

    /// The most bytes a route file may hold (64 MiB), checked before anything of it
    /// is read: a route file is read whole (with its points, about three times its
    /// size in memory), so an export naming a huge or sparse file must not make the
    /// import take gigabytes. Apple's GPX takes ~230 bytes per point, one point a
    /// second: 64 MiB is over 80 hours of one workout's route.
    public static let routeFileLimit: UInt64 = 64 << 20

    /// How much of a file is read to recognize an export.
    static let sniffLength = 64 << 10

    /// Finds the export in `path`. Throws `notAnExport` (saying what was looked at)
    /// or `archive`.
    public init(path: String) throws(ImportError) {
        self.path = path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw .notFound(path: path)
        }
        if isDirectory.boolValue {
            guard let folder = ExportFolder(path) else { throw .notFound(path: path) }
            let candidates = Self.xmlFiles(in: path, inside: folder)
            let exports = candidates.filter { Self.isExportXML(Self.head(ofFile: $0)) }
            guard let found = exports.first else {
                throw .notAnExport(path: path, reason: "no XML file with a <HealthData> root among \(candidates.count) XML files")
            }
            // Two exports in one folder: importing one of them silently would lose the other.
            guard exports.count == 1 else {
                throw .ambiguousExport(path: path, names: exports.map { String($0.dropFirst(path.count).drop { $0 == "/" }) })
            }
            location = .file(found)
            xmlName = String(found.dropFirst(path.count).drop { $0 == "/" })
            xmlSize = (try? FileManager.default.attributesOfItem(atPath: found)[.size] as? UInt64) ?? 0
            return
        }
        let head = Self.head(ofFile: path)
        if head.starts(with: [0x50, 0x4B]) {
            let archive: ZipArchive
            do { archive = try ZipArchive(path: path) } catch { throw .archive(error) }
            // Every entry is looked at: a zip holding two exports is refused, naming both,
            // rather than importing the first and silently leaving the other out.
            var exports: [ZipArchive.Entry] = []
            for entry in archive.entries where !entry.isDirectory && entry.uncompressedSize > 0 {
                if try Self.isExportXML(entry, in: archive, path: path) { exports.append(entry) }
            }
            guard let entry = exports.first else {
                throw .notAnExport(path: path, reason: "none of the zip's \(archive.entries.count) entries is an export XML (a <HealthData> root)")
            }
            guard exports.count == 1 else { throw .ambiguousExport(path: path, names: exports.map(\.name)) }
            location = .zip(archive, entry)
            xmlName = entry.name
            xmlSize = entry.uncompressedSize
            return
        }
        guard Self.isExportXML(head) else {
            throw .notAnExport(path: path, reason: "neither a zip nor an XML document with a <HealthData> root")
        }
        location = .file(path)
        xmlName = (path as NSString).lastPathComponent
        xmlSize = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? UInt64) ?? 0
    }

    /// A fresh stream of the XML's bytes (each pass reads it from the start).
    public func openXML() throws(ImportError) -> ByteStream {
        switch location {
        case .zip(let archive, let entry):
            do { return try archive.open(entry) } catch { throw .archive(error) }
        case .file(let file):
            do { return FileRegionStream(try ReadOnlyFile(path: file)) } catch { throw .archive(error) }
        }
    }

    /// The points of the route file a `FileReference` names (`/workout-routes/….gpx`,
    /// relative to the XML's folder), or nil when the export does not hold it.
    ///
    /// Only a file inside the export is read: a name with a `..` or `.` segment is not
    /// looked up; in a folder, the name is resolved (symlinks too) and must stay
    /// inside the XML's folder (`ExportFolder`); in a zip, it names an entry whose own
    /// name has no `..`. A name outside and a name of nothing are both nil — counted
    /// as missing route files alike, nothing of either read. A file inside that is
    /// not regular, or over `routeFileLimit` bytes (a zip entry by the size its
    /// directory claims), throws `RouteFileError` before anything is read.
    func routeLocations(_ reference: String) throws -> [RouteLocation]? {
        guard let segments = ExportFolder.segments(reference) else { return nil }
        let relative = segments.joined(separator: "/")
        let bytes: [UInt8]
        switch location {
        case .zip(let archive, let xml):
            let folder = xml.name.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            let wanted = folder.isEmpty ? relative : folder + "/" + relative
            func plain(_ entry: ZipArchive.Entry) -> Bool {
                !entry.isDirectory && !entry.name.split(separator: "/", omittingEmptySubsequences: false).contains("..")
            }
            guard let entry = archive.entries.first(where: { $0.name == wanted && plain($0) })
                    ?? archive.entries.first(where: { $0.name.hasSuffix("/" + relative) && plain($0) }) else { return nil }
            guard entry.uncompressedSize <= Self.routeFileLimit else {
                throw RouteFileError.tooLarge(size: entry.uncompressedSize, limit: Self.routeFileLimit)
            }
            // One byte more than it holds: the read reaches the entry's end, where its size and CRC-32 are checked.
            bytes = try archive.prefix(of: entry, count: Int(entry.uncompressedSize) + 1)
        case .file:
            guard let folder = routeFolder, let found = try folder.contents(of: relative, limit: Self.routeFileLimit) else {
                return nil
            }
            bytes = found
        }
        return try GPXRoute.locations(bytes)
    }

    /// The XML's folder, where its route files are (nil for a zip, or when the
    /// folder cannot be resolved: then no route file is read).
    var routeFolder: ExportFolder? {
        guard case .file(let file) = location else { return nil }
        return ExportFolder(URL(fileURLWithPath: file).deletingLastPathComponent().path)
    }

    // MARK: Recognizing

    /// Whether a zip entry is an export XML. A short prefix settles most entries (a
    /// GPX route or a CSV shows an element or no markup at once); only an entry whose
    /// first 4 KiB are all prolog (the export's long DTD) is read to `sniffLength`.
    static func isExportXML(_ entry: ZipArchive.Entry, in archive: ZipArchive, path: String) throws(ImportError) -> Bool {
        func prefix(_ count: Int) throws(ImportError) -> [UInt8] {
            do { return try archive.prefix(of: entry, count: count) } catch let e as ArchiveError {
                throw .archive(e)
            } catch {
                throw .notAnExport(path: path, reason: "\(error)")
            }
        }
        let small = try prefix(4096)
        if isExportXML(small) { return true }
        if small.count < 4096 || !isAllProlog(small) { return false }
        return isExportXML(try prefix(sniffLength))
    }

    /// True when no byte of `head` starts an element or text: only '<?' and '<!'
    /// markup, whitespace and what lies inside that markup (a cheap over-estimate).
    static func isAllProlog(_ head: [UInt8]) -> Bool {
        var i = 0
        if head.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        while i < head.count, [0x20, 0x0A, 0x0D, 0x09].contains(head[i]) { i += 1 }
        guard i + 1 < head.count, head[i] == 0x3C, head[i + 1] == 0x3F || head[i + 1] == 0x21 else { return false }
        for j in i..<head.count - 1 where head[j] == 0x3C && head[j + 1] != 0x3F && head[j + 1] != 0x21 { return false }
        return true
    }

    /// True when the bytes start an XML document whose root is `<HealthData` (the DTD
    /// and comments may come first).
    static func isExportXML(_ head: [UInt8]) -> Bool {
        guard let root = find(Array("<HealthData".utf8), in: head) else { return false }
        let after = root + 11
        guard after < head.count else { return false }
        let c = head[after]
        guard c == 0x20 || c == 0x3E || c == 0x0A || c == 0x0D || c == 0x09 else { return false }
        // Nothing but a prolog before it: the DTD's declarations all start '<!' and the
        // XML declaration '<?', so a '<' followed by anything else is an earlier element.
        for i in 0..<root where head[i] == 0x3C && i + 1 < head.count && head[i + 1] != 0x3F && head[i + 1] != 0x21 {
            return false
        }
        return true
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        var i = 0
        while i + needle.count <= haystack.count {
            if haystack[i] == needle[0] && Array(haystack[i..<i + needle.count]) == needle { return i }
            i += 1
        }
        return nil
    }

    static func head(ofFile path: String) -> [UInt8] {
        guard let file = try? ReadOnlyFile(path: path) else { return [] }
        var out = [UInt8](repeating: 0, count: sniffLength)
        let n = out.withUnsafeMutableBytes { (try? file.read(at: 0, into: $0)) ?? 0 }
        return Array(out[0..<n])
    }

    /// XML files in a folder and one level of subfolders (`apple_health_export/`),
    /// sorted: regular files whose real path (symlinks resolved) is inside `inside`
    /// (a FIFO, a device, or a link leading out of the export is never opened).
    static func xmlFiles(in folder: String, inside: ExportFolder) -> [String] {
        var out: [String] = []
        let fm = FileManager.default
        func regularInside(_ path: String) -> Bool {
            guard let real = inside.inside(path) else { return false }
            var st = stat()
            return stat(real, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
        }
        for name in (try? fm.contentsOfDirectory(atPath: folder))?.sorted() ?? [] {
            let full = folder + "/" + name
            var dir: ObjCBool = false
            _ = fm.fileExists(atPath: full, isDirectory: &dir)
            if dir.boolValue {
                guard inside.inside(full) != nil else { continue }
                for inner in (try? fm.contentsOfDirectory(atPath: full))?.sorted() ?? [] where inner.lowercased().hasSuffix(".xml") {
                    if regularInside(full + "/" + inner) { out.append(full + "/" + inner) }
                }
            } else if name.lowercased().hasSuffix(".xml"), regularInside(full) {
                out.append(full)
            }
        }
        return out
    }
}
