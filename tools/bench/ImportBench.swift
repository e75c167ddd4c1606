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
