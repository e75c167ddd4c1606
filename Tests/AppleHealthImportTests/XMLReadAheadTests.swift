import Foundation
import Testing
@testable import AppleHealthImport

/// A scanner reading ahead on a thread of its own (`XMLScanner(readingAhead:)`) hands
/// out exactly what a scanner reading the stream itself does: the same tokens, names,
/// values, depths, offsets, lines and columns of every tag, prolog, and the same error
/// at the same place after the same tags — whatever the batch and buffer sizes.
struct XMLReadAheadTests {
    /// Everything a caller can ask of each token, as text; the error (if any) last.
    static func fullTrace(_ scanner: XMLScanner) -> [String] {
        var out: [String] = []
        do {
            while true {
                let token = try scanner.next()
                if token == .endOfDocument {
                    out.append("end comments=\(scanner.prologComments) doctype=\(scanner.doctype ?? "-")")
                    // Asked again, the end again.
                    out.append("again \(try scanner.next())")
                    return out
                }
                let where_ = scanner.errorAtCurrentTag("here")
                let path = (1...max(1, scanner.depth)).compactMap { scanner.depth >= $0 ? scanner.name(scanner.openElement(atDepth: $0)) : nil }
                var line = "\(token) \(scanner.name(scanner.element)) depth=\(scanner.depth) path=\(path) at=\(scanner.tagOffset) "
                    + "line=\(where_.line) column=\(where_.column) offset=\(where_.offset)"
                if token == .startElement {
                    for i in 0..<scanner.attributeCount {
                        line += " \(scanner.name(scanner.attributeName(i)))=\(scanner.valueString(i))"
                    }
                    if let i = scanner.attributeIndex(0) { line += " first=\(i)" }
                }
                out.append(line)
            }
        } catch {
            out.append("error \(error) offset=\(error.offset)")
            return out
        }
    }

    static func both(_ xml: String, tagsPerBatch: Int, bufferSize: Int = 64, names: [String] = ["Record", "type"])
        -> (direct: [String], ahead: [String]) {
        let bytes = Array(xml.utf8)
        let direct = fullTrace(XMLScanner(stream: MemoryStream(bytes, chunk: 7), predefinedNames: names, bufferSize: bufferSize))
        let ahead = fullTrace(XMLScanner(readingAhead: MemoryStream(bytes, chunk: 7), predefinedNames: names,
                                         tagsPerBatch: tagsPerBatch, depth: 2, bufferSize: bufferSize))
        return (direct, ahead)
    }

    /// Many records over many lines (tags spanning lines, values with entities): more
    /// tags than a batch holds, more bytes than the reading buffer.
    static let many: String = {
        var xml = "<?xml version=\"1.0\"?>\n<!-- HealthKit Export Version: 13 -->\n<!DOCTYPE HealthData [\n<!ELEMENT HealthData ANY>\n]>\n"
        xml += "<HealthData locale=\"en_US\">\n"
        for i in 0..<300 {
            xml += " <Record type=\"HKQuantityTypeIdentifierStepCount\" value=\"\(i)\"\n   device=\"&lt;&lt;HKDevice \(i)&gt;\"\n"
            xml += i % 3 == 0 ? "   unit=\"count\"/>\n" : "   unit='count'>\n  <MetadataEntry key=\"k\(i % 7)\" value=\"v&amp;\(i)\"/>\n </Record>\n"
        }
        return xml + "</HealthData>\n"
    }()

    @Test(arguments: [1, 2, 3, 17, 4096])
    func theSameTagsWhateverTheBatchSize(_ tagsPerBatch: Int) {
        for xml in [XMLScannerTests.document, Self.many] {
            let (direct, ahead) = Self.both(xml, tagsPerBatch: tagsPerBatch)
            #expect(ahead.count == direct.count)
            #expect(ahead == direct)
        }
        #expect(Self.both(Self.many, tagsPerBatch: tagsPerBatch).direct.count > 900)
    }

    /// A malformed document: the tags before the fault, then the same error.
    @Test(arguments: [
        "<HealthData>\n <Record a=\"1\">\n </Recor>\n</HealthData>",
        "<HealthData>\n<Record type=\"x value=\"1\"/>\n</HealthData>",
        "<HealthData a=\"&nbsp;\"/>",
        "<HealthData>\n <Record a=\"1\"/>\n",
        "<HealthData/>\nx",
        "<HealthData>\n" + String(repeating: " <Record type=\"t\" value=\"1\"/>\n", count: 50) + " <Record type=\"t\" type=\"u\"/>\n</HealthData>",
    ])
    func errorsComeAfterTheSameTagsAtTheSamePlace(_ xml: String) {
        for tagsPerBatch in [1, 4, 4096] {
            let (direct, ahead) = Self.both(xml, tagsPerBatch: tagsPerBatch)
            #expect(direct.last?.hasPrefix("error ") == true)
            #expect(ahead == direct)
        }
    }

    /// Dropping a scanner that reads ahead before the end stops its reading thread
    /// (blocked on a full hand-off, it is let go): the thread, which holds the shared
    /// read-ahead state while it runs, lets go of it.
    @Test func droppingItEarlyStopsTheReader() throws {
        let bytes = Array(Self.many.utf8)
        weak var shared: XMLReadAhead?
        do {
            let scanner = XMLScanner(readingAhead: MemoryStream(bytes, chunk: 5), tagsPerBatch: 1, depth: 1, bufferSize: 64)
            #expect(try scanner.next() == .startElement)
            #expect(try scanner.next() == .startElement)
            shared = scanner.ahead
            #expect(shared != nil)
        }
        var waited = 0
        while shared != nil && waited < 10_000 {
            usleep(1000)
            waited += 1
        }
        #expect(shared == nil, "the reading thread still runs 10 s after its scanner was dropped")
    }
}
