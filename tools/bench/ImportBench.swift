import AppleHealthImport
import Foundation

/// Apple Health import: inflate, XML scan, and the whole import, against peers.
enum ImportBench {
    static func inflate(report: Report, zipPath: String) throws {
        let archive = try ZipArchive(path: zipPath)
        for entry in archive.entries where !entry.isDirectory {
            let stream = try archive.open(entry)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
            defer { buffer.deallocate() }
            var total = 0
            let t = try Measure.time {
                while true {
                    let n = try stream.read(into: buffer)
                    if n == 0 { break }
                    total += n
                }
            }
            report.line("inflate \(entry.name)", [("MB", Double(total) / 1e6), ("seconds", t), ("MB/s", Double(total) / 1e6 / t)])
        }
    }
}

extension ImportBench {
    static func scan(report: Report, xmlPath: String) throws {
        let file = try ReadOnlyFile(path: xmlPath)
        let scanner = XMLScanner(stream: FileRegionStream(file))
        var elements = 0, attributes = 0
        let t = try Measure.time {
            while true {
                let token = try scanner.next()
                if token == .endOfDocument { break }
                if token == .startElement { elements += 1; attributes += scanner.attributeCount }
            }
        }
        report.line("xml scan", [("MB", Double(file.size) / 1e6), ("seconds", t), ("MB/s", Double(file.size) / 1e6 / t),
                                 ("elements", Double(elements)), ("attributes", Double(attributes))])
    }
}

extension ImportBench {
    /// The import's pass alone (`AppleHealthImporter.check`: read-ahead, scan, map,
    /// encode; no ledger), `runs` times: wall seconds and the calling (mapping)
    /// thread's CPU seconds, which a loaded machine inflates less than wall time.
    static func pass(report: Report, xmlPath: String, runs: Int) throws {
        var walls: [Double] = [], cpus: [Double] = []
        var records = 0
        for _ in 0..<max(1, runs) {
            let cpu0 = Measure.threadCPU()
            let t = try Measure.time { records = try AppleHealthImporter.check(try ExportSource(path: xmlPath)).records }
            cpus.append(Measure.threadCPU() - cpu0)
            walls.append(t)
        }
        walls.sort()
        cpus.sort()
        let size = Double((try? FileManager.default.attributesOfItem(atPath: xmlPath)[.size] as? Int) ?? 0)
        report.line("export pass", [("MB", size / 1e6), ("records", Double(records)), ("runs", Double(walls.count)),
                                    ("best s", walls[0]), ("median s", walls[walls.count / 2]),
                                    ("thread CPU best s", cpus[0]), ("thread CPU median s", cpus[cpus.count / 2]),
                                    ("records/s", Double(records) / walls[0])])
    }
}
