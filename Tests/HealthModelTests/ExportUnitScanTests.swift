import Foundation
import Testing
import HealthModel
import TestSupport

/// Every unit string written in the real exports under ../shared parses and prints
/// back to an equal unit. (Zipped exports are scanned by the importer's tests, which
/// have the inflater.)
struct ExportUnitScanTests {
    static let xmlFiles = [
        "data/apple-health/ashtom-hkimport-2017/export.xml",
        "data/apple-health/dogsheep-fixtures-2019/export.xml",
        "data/apple-health/dogsheep-fixtures-2019/zip_contents/apple_health_export/export.xml",
    ]

    static let available = xmlFiles.compactMap { SharedData.file($0) }

    @Test(.enabled(if: available.count == xmlFiles.count, "needs the three export.xml files of ../shared/data/apple-health (absent)"))
    func everyUnitInTheExportsParsesAndPrintsBack() throws {
        var units = Set<String>()
        for url in Self.available {
            units.formUnion(Self.unitStrings(in: Array(try Data(contentsOf: url))))
        }
        #expect(units.isSuperset(of: ["count", "km", "count/min", "kcal", "g", "mg", "kg", "mg/dL", "mcg", "mi", "min"]))
        for text in units.sorted() {
            let unit = try HealthUnit(text)
            #expect(try HealthUnit(unit.canonicalString) == unit, "\(text)")
        }
    }

    /// Values of `unit="…"` and `…Unit="…"` attributes, entities decoded.
    static func unitStrings(in xml: [UInt8]) -> Set<String> {
        var raw = Set<[UInt8]>()
        let needle = Array("nit=\"".utf8)
        var i = 0
        while i + needle.count < xml.count {
            if xml[i] == needle[0], Array(xml[i..<i + needle.count]) == needle {
                let start = i + needle.count
                var end = start
                while end < xml.count, xml[end] != 0x22 { end += 1 }
                raw.insert(Array(xml[start..<end]))
                i = end
            }
            i += 1
        }
        return Set(raw.map {
            String(decoding: $0, as: UTF8.self).replacingOccurrences(of: "&#183;", with: "·").replacingOccurrences(of: "&amp;", with: "&")
        })
    }
}
