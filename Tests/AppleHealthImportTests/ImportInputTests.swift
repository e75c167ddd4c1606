import Foundation
import Testing
import LedgerChecksums
import TestSupport
@testable import AppleHealthImport

/// Export input that used to be accepted silently: bytes that are not UTF-8 (they
/// became U+FFFD) and a zip or folder holding two exports (the first was imported).
struct ImportInputTests {
    static func scan(_ bytes: [UInt8], chunk: Int = .max) throws(XMLError) -> [String] {
        let scanner = XMLScanner(stream: MemoryStream(bytes, chunk: chunk), bufferSize: 64)
        var out: [String] = []
        while true {
            switch try scanner.next() {
            case .startElement: out.append(scanner.allAttributes().map { "\($0.0)=\($0.1)" }.joined(separator: " "))
            case .endElement: break
            case .endOfDocument: return out
            }
        }
    }

    static func error(_ bytes: [UInt8], chunk: Int = .max) -> String? {
        do { _ = try scan(bytes, chunk: chunk); return nil } catch { return error.description }
    }

    static let open = Array("<HealthData a=\"".utf8), close = Array("\"/>".utf8)

    @Test(arguments: [
        ("lone continuation", [0x80] as [UInt8], 0, "0x80"),
        ("invalid byte", [0x41, 0xFF], 1, "0xFF"),
        ("overlong", [0xC0, 0x80], 0, "0xC0"),
        ("surrogate", [0xED, 0xA0, 0x80], 0, "0xED"),
        ("beyond U+10FFFF", [0xF4, 0x90, 0x80, 0x80], 0, "0xF4"),
        ("cut short by the quote", [0x41, 0xE2, 0x82], 1, "0xE2"),
        ("after an entity, past 16 bytes", Array("&amp;0123456789abcdefghij".utf8) + [0xFE], 25, "0xFE"),
    ] as [(String, [UInt8], Int, String)])
    func invalidUTF8InAnAttributeIsMalformed(_ name: String, _ value: [UInt8], _ at: Int, _ byte: String) {
        let doc = Self.open + value + Self.close
        let expected = "malformedXML: line 1, column \(Self.open.count + at + 1): invalid UTF-8 in an attribute value (byte \(byte))"
        #expect(Self.error(doc) == expected, "\(name)")
        #expect(Self.error(doc, chunk: 1) == expected, "\(name), read a byte at a time")
    }

    @Test func validUTF8IsKeptExactly() throws {
        let value = "é☺😀 Jane’s iPhone — 0123456789abcdef&amp;"
        #expect(try Self.scan(Self.open + Array(value.utf8) + Self.close) == ["a=é☺😀 Jane’s iPhone — 0123456789abcdef&"])
    }

    @Test func invalidUTF8InANameIsMalformed() throws {
        let element = Array("<Health".utf8) + [0xFF] + Array("Data/>".utf8)
        #expect(Self.error(element) == "malformedXML: line 1, column 8: invalid UTF-8 in a name (byte 0xFF)")
        let attribute = Array("<HealthData\n b".utf8) + [0xC3] + Array("=\"1\"/>".utf8)
        #expect(Self.error(attribute) == "malformedXML: line 2, column 3: invalid UTF-8 in a name (byte 0xC3)")
        #expect(try Self.scan(Array("<HealthData é=\"1\"/>".utf8)) == ["é=1"])
    }

    @Test func anExportWithInvalidUTF8IsRefusedWithItsPlace() throws {
        let dir = TemporaryDirectory()
        var bytes = Array(SmallExport.xml.utf8)
        // Line 21 holds the first "Omron"; its 'r' (column 77) becomes 0xFF.
        #expect(SmallExport.line(21).utf8.dropFirst(74).starts(with: "Omron".utf8))
        let needle = Array("sourceName=\"Omron\"".utf8)
        let offset = try #require((0...(bytes.count - needle.count)).first { Array(bytes[$0..<$0 + needle.count]) == needle })
        bytes[offset + 14] = 0xFF
        try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
        let path = dir.path + "/broken.xml"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try AppleHealthImporter.check(try ExportSource(path: path), options: ImportOptions())
        } throws: { error in
            "\(error)" == "malformedXML: broken.xml: line 21, column 77: invalid UTF-8 in an attribute value (byte 0xFF)"
        }
    }

    /// A zip of stored (uncompressed) entries.
    static func storedZip(_ entries: [(String, [UInt8])]) -> [UInt8] {
        var out: [UInt8] = [], central: [UInt8] = []
        func u16(_ v: Int, _ into: inout [UInt8]) { into += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func u32(_ v: UInt32, _ into: inout [UInt8]) { for k in 0..<4 { into.append(UInt8(v >> (8 * UInt32(k)) & 0xFF)) } }
        for (name, data) in entries {
            let crc = CRC32.checksum(data), offset = UInt32(out.count), nameBytes = Array(name.utf8)
            u32(0x0403_4B50, &out); u16(20, &out); u16(0x800, &out); u16(0, &out); u16(0, &out); u16(0x21, &out)
            u32(crc, &out); u32(UInt32(data.count), &out); u32(UInt32(data.count), &out); u16(nameBytes.count, &out); u16(0, &out)
            out += nameBytes + data
            u32(0x0201_4B50, &central); u16(20, &central); u16(20, &central); u16(0x800, &central); u16(0, &central)
            u16(0, &central); u16(0x21, &central); u32(crc, &central); u32(UInt32(data.count), &central)
            u32(UInt32(data.count), &central); u16(nameBytes.count, &central); u16(0, &central); u16(0, &central)
            u16(0, &central); u16(0, &central); u32(0, &central); u32(offset, &central)
            central += nameBytes
        }
        let centralOffset = UInt32(out.count)
        out += central
        u32(0x0605_4B50, &out); u16(0, &out); u16(0, &out); u16(entries.count, &out); u16(entries.count, &out)
        u32(UInt32(central.count), &out); u32(centralOffset, &out); u16(0, &out)
        return out
    }

    @Test func aZipHoldingTwoExportsIsRefusedNamingBoth() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
        let xml = Array(SmallExport.xml.utf8)
        let gpx = Array("<?xml version=\"1.0\"?><gpx></gpx>".utf8)
        let path = dir.path + "/two.zip"
        try Data(Self.storedZip([("apple_health_export/export.xml", xml), ("apple_health_export/workout-routes/r.gpx", gpx),
                                 ("old/apple_health_export/export.xml", xml)])).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try ExportSource(path: path)
        } throws: { error in
            "\(error)" == "ambiguousExport: \(path) holds 2 export XMLs (apple_health_export/export.xml, old/apple_health_export/export.xml); import one at a time (unzip and give its path)"
        }
        // One export in the same zip is found, as before.
        let one = dir.path + "/one.zip"
        try Data(Self.storedZip([("apple_health_export/workout-routes/r.gpx", gpx), ("apple_health_export/export.xml", xml)]))
            .write(to: URL(fileURLWithPath: one))
        #expect(try ExportSource(path: one).xmlName == "apple_health_export/export.xml")
    }

    @Test func aFolderHoldingTwoExportsIsRefusedNamingBoth() throws {
        let dir = TemporaryDirectory()
        _ = try SmallExport.write(named: "export.xml", in: dir.path + "/apple_health_export")
        _ = try SmallExport.write(named: "Export copy.xml", in: dir.path)
        #expect {
            _ = try ExportSource(path: dir.path)
        } throws: { error in
            "\(error)" == "ambiguousExport: \(dir.path) holds 2 export XMLs (Export copy.xml, apple_health_export/export.xml); import one at a time (unzip and give its path)"
        }
    }
}
