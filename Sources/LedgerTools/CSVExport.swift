import Foundation
import Glibc
import HealthModel
import LedgerCore
import LedgerReporting

/// One file `export csv` wrote.
package struct CSVExportFile: Sendable, Equatable {
    package let type: ObjectType
    package let path: String
    /// Rows after the header: the type's samples the viewer may read.
    package let rows: Int
}

extension ReadSession {
    /// Writes one CSV file per sample type (`SampleCSV`) into `folder` — new, or empty —
    /// of what `viewer` may read as of `limit`, oldest first: `types`, else every type
    /// that has a sample it may read (a type with none gets no file). Each file is
    /// written new beside its name (0600) and linked into place once whole (`PartialFile`).
    package func exportCSV(as viewer: Viewer, types: [ObjectType]?, limit: ReplayLimit = .end, to folder: String,
                           progress: ((ReplayProgress) -> Void)? = nil) throws -> [CSVExportFile] {
        var view = try self.view(as: viewer, limit: limit, progress: progress)  // first: a refused export makes no folder
        try Self.prepareEmptyFolder(folder)
        let candidates = types ?? ObjectType.allTypes.filter(\.isSampleType)
        var written: [CSVExportFile] = []
        for type in candidates {
            let path = (folder as NSString).appendingPathComponent(type.identifier + ".csv")
            let temporary = path + ".partial"
            let file = try PartialFile(temporary)
            // Written a megabyte at a time: memory stays bounded by the read engine's chunk.
            var out = Array(SampleCSV.header(type).utf8)
            var rows = 0
            let query = SampleQuery(type: type, sort: [SampleSortDescriptor(.startDate, ascending: true)])
            // The common shape written straight from its stored bytes, the same row,
            // over the cores in batches; the order is the engine's.
            var batch = PlainSampleBatch()
            func wrote() throws {
                if out.count >= 1 << 20 {
                    try file.write(out)
                    out.removeAll(keepingCapacity: true)
                }
            }
            func flushBatch() throws {
                guard !batch.isEmpty else { return }
                rows += batch.samples.count
                batch.flush(into: &out) { s, bytes in SampleCSV.appendRow(s, to: &bytes) }
                try wrote()
            }
            _ = try view.forEach(query, plain: { s in
                if batch.append(s) { try flushBatch() }
            }) { sample in
                try flushBatch()
                SampleCSV.appendRow(sample, to: &out)
                rows += 1
                try wrote()
            }
            try flushBatch()
            guard rows > 0 || types != nil else {
                file.discard()
                continue
            }
            try file.write(out)
            try file.commit(as: path)
            written.append(CSVExportFile(type: type, path: path, rows: rows))
        }
        return written
    }

    /// Creates `folder` (and its parents; 0700: health data is the owner's) or accepts
    /// it empty; a folder that holds anything, or cannot be listed, is refused, so that
    /// no export mixes with or overwrites other files.
    static func prepareEmptyFolder(_ folder: String) throws(ToolError) {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) {
            guard isFolder.boolValue else { throw .outputNotEmpty(path: folder) }
            let entries: [String]
            do { entries = try FileManager.default.contentsOfDirectory(atPath: folder) } catch {
                throw .io(operation: "list", path: folder, errno: errno)
            }
            guard entries.isEmpty else { throw .outputNotEmpty(path: folder) }
            return
        }
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw .io(operation: "mkdir", path: folder, errno: errno)
        }
    }
}

/// A file written under a temporary name and put into place once whole (synced
/// first), or removed. Neither name is ever followed or replaced: the temporary file is
/// created new (`O_EXCL | O_NOFOLLOW`: a symlink planted there is refused), 0600, and
/// put in place by `link`, which fails on any existing entry, then unlinked — so an
/// export never writes through, or over, what someone else put in the folder.
final class PartialFile {
    let path: String
    private var fd: Int32

    init(_ path: String) throws(ToolError) {
        self.path = path
        fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .io(operation: "open", path: path, errno: errno) }
    }

    deinit { discard() }

    func write(_ bytes: [UInt8]) throws(ToolError) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw .io(operation: "write", path: path, errno: errno) }
            done += n
        }
    }

    /// Synced, closed and linked as `final` (never replacing an entry), then unlinked.
    func commit(as final: String) throws(ToolError) {
        guard fsync(fd) == 0 else { throw .io(operation: "fsync", path: path, errno: errno) }
        Glibc.close(fd)
        fd = -1
        guard link(path, final) == 0 else {
            let saved = errno
            unlink(path)
            if saved == EEXIST { throw .outputNotEmpty(path: final) }
            throw .io(operation: "link", path: final, errno: saved)
        }
        unlink(path)
    }

    /// Closed and removed (nothing when committed).
    func discard() {
        guard fd >= 0 else { return }
        Glibc.close(fd)
        fd = -1
        unlink(path)
    }
}
