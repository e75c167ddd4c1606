import Foundation

extension SnapshotFile {
    /// Section 50 (since import transactions), only with imports: per import the
    /// version and payload of its `importStarted`, its started and finished sequences
    /// (0: not finished), and the version and payload of an `importFinished` holding
    /// its counts (and, a transaction's, the export's SHA-256).
    static let importsSection = SnapshotSectionCodec(section: .importTransactions, encode: { source, w in
        let imports = source.state.imports
        guard !imports.isEmpty else { return false }
        w.varint(imports.count)
        for entry in imports {
            let start = Event.importStarted(entry.start), finish = Event.importFinished(entry.finish)
            w.u16(start.kindVersion)
            w.lengthPrefixed { $0.append(contentsOf: EventCodec.payload(start)) }
            w.varint(entry.startedAt)
            w.varint(entry.finishedAt ?? 0)
            w.u16(finish.kindVersion)
            w.lengthPrefixed { $0.append(contentsOf: EventCodec.payload(finish)) }
        }
        return true
    }, decode: { r, contents in
        for _ in 0..<(try r.count()) {
            guard case .importStarted(let start) = try SnapshotContents.event(&r, .importStarted, version: try r.u16()) else {
                throw r.malformed("import")
            }
            let startedAt = try r.varint(), finishedAt = try r.varint()
            guard case .importFinished(let finish) = try SnapshotContents.event(&r, .importFinished, version: try r.u16()) else {
                throw r.malformed("import")
            }
            contents.imports.append(ImportEntry(start: start, startedAt: startedAt, finishedAt: finishedAt == 0 ? nil : finishedAt,
                                                counts: finish.counts, contentSHA256: finish.contentSHA256))
        }
    }, required: false)

    /// Section 5, read from snapshots written before import transactions (never
    /// written now): as section 50 with every payload in version 1 and no versions.
    static let legacyImportsSection = SnapshotSectionCodec(section: .imports, encode: { _, _ in false }, decode: { r, contents in
        for _ in 0..<(try r.count()) {
            guard case .importStarted(let start) = try SnapshotContents.event(&r, .importStarted, version: 1) else {
                throw r.malformed("import")
            }
            let startedAt = try r.varint(), finishedAt = try r.varint()
            guard case .importFinished(let finish) = try SnapshotContents.event(&r, .importFinished, version: 1) else {
                throw r.malformed("import")
            }
            contents.imports.append(ImportEntry(start: start, startedAt: startedAt, finishedAt: finishedAt == 0 ? nil : finishedAt,
                                                counts: finish.counts))
        }
    }, required: false)

    /// Section 51, only when some are: events of aborted imports (never applied).
    static let notAppliedSection = SnapshotSectionCodec(section: .eventsNotApplied, encode: { source, w in
        guard source.state.eventsNotApplied > 0 else { return false }
        w.varint(source.state.eventsNotApplied)
        return true
    }, decode: { r, contents in
        contents.eventsNotApplied = try r.varint()
    }, required: false)
}
