import Foundation
import HealthModel
import LedgerReporting
import Testing

/// `SampleCSV.appendRow` (the export's byte writer) writes exactly `row(_:)`'s text for
/// every quantity sample, whatever its fields hold: whole and fractional seconds,
/// dates outside years 1…9999 the fast date cannot write, integers and fractions and
/// huge values, sources with and without a version, devices and metadata that need
/// quoting, creation dates.
@Suite struct SampleCSVRowTests {
    @Test func theByteWriterWritesTheRowsText() throws {
        var device = Device()
        device.name = "Scale, \"S\""
        device.manufacturer = "Acme"
        let metadata: Metadata = ["note": .string("a, \"b\"\nc"), "HKWasUserEntered": .bool(true)]
        let dates = [Date(timeIntervalSince1970: 1_817_184_780), Date(timeIntervalSince1970: 1_817_184_780.25),
                     Date(timeIntervalSince1970: -62_135_596_800 - 86_400 * 400), Date(timeIntervalSince1970: 0)]
        let values: [(Double, String)] = [(3235, "count"), (12.5, "count"), (72.25, "kg"), (1e300, "count"), (0.000001, "g"), (98.6, "degF")]
        var checked = 0
        for start in dates {
            for (value, unit) in values {
                let type: QuantityType = unit == "kg" || unit == "g" ? .bodyMass : unit == "degF" ? .bodyTemperature : .stepCount
                for variant in 0..<4 {
                    guard let q = try? QuantitySample(
                        type: type, quantity: try Quantity(value, unit: unit), start: start, end: start.addingTimeInterval(300),
                        metadata: variant & 1 == 1 ? metadata : Metadata(), device: variant & 2 == 2 ? device : nil,
                        source: variant == 3 ? Source(bundleIdentifier: "com.example.a,b", name: "A", version: "1.0 \"beta\"") : nil,
                        creationDate: variant >= 2 ? start.addingTimeInterval(0.5) : nil) else { continue }
                    var bytes: [UInt8] = []
                    SampleCSV.appendRow(.quantity(q), to: &bytes)
                    let text = SampleCSV.row(.quantity(q))
                    #expect(String(decoding: bytes, as: UTF8.self) == text)
                    checked += 1
                }
            }
        }
        #expect(checked == 60, "\(checked) samples were valid")  // the rest the model refuses (its dates and value ranges)
    }
}
