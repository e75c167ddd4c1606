import Foundation

extension SnapshotFile {
    /// Section 5, only with imports: per import its `importStarted` payload, started
    /// and finished sequences (0: not finished) and its counts as an `importFinished` payload.
    static let importsSection = SnapshotSectionCodec(section: .imports, encode: { source, w in
        let imports = source.state.imports
        guard !imports.isEmpty else { return false }
        w.varint(imports.count)
        for entry in imports {
            w.lengthPrefixed { $0.append(contentsOf: EventCodec.payload(.importStarted(entry.start))) }
            w.varint(entry.startedAt)
            w.varint(entry.finishedAt ?? 0)
            w.lengthPrefixed {
                $0.append(contentsOf: EventCodec.payload(.importFinished(
                    ExportImportFinish(importId: entry.start.importId, counts: entry.counts))))
            }
        }
        return true
    }, decode: { r, contents in
        for _ in 0..<(try r.count()) {
            guard case .importStarted(let start) = try SnapshotContents.event(&r, .importStarted) else { throw r.malformed("import") }
            let startedAt = try r.varint(), finishedAt = try r.varint()
            guard case .importFinished(let finish) = try SnapshotContents.event(&r, .importFinished) else { throw r.malformed("import") }
            contents.imports.append(ImportEntry(start: start, startedAt: startedAt, finishedAt: finishedAt == 0 ? nil : finishedAt,
                                                counts: finish.counts))
        }
    }, required: false)
}
