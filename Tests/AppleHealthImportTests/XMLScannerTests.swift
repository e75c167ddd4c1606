import Testing
@testable import AppleHealthImport

/// The export's XML subset: tags, attributes in any order, entities, a skipped DTD
/// (also the malformed one of iOS 16.0–16.3), and errors with line and column.
struct XMLScannerTests {
    /// The document as a trace: `<Name a=v b=w>` for a start tag, `</Name>` for an end.
    static func trace(_ xml: String, chunk: Int = .max, bufferSize: Int = 1 << 20) throws(XMLError) -> [String] {
        let scanner = XMLScanner(stream: MemoryStream(Array(xml.utf8), chunk: chunk), bufferSize: bufferSize)
        var out: [String] = []
        while true {
            switch try scanner.next() {
            case .startElement:
                let attributes = scanner.allAttributes().map { " \($0.0)=\($0.1)" }.joined()
                out.append("<\(scanner.name(scanner.element))\(attributes)>")
            case .endElement:
                out.append("</\(scanner.name(scanner.element))>")
            case .endOfDocument:
                return out
            }
        }
    }

    static func error(_ xml: String, chunk: Int = .max) -> XMLError? {
        do {
            _ = try trace(xml, chunk: chunk)
            return nil
        } catch {
            return error
        }
    }

    static let document = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE HealthData [
        <!-- HealthKit Export Version: 11 -->
        <!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary|ClinicalRecord)*)>
        <!ATTLIST HealthData
          locale CDATA #REQUIRED
        >
        ]>
        <HealthData locale="en_US">
         <ExportDate value="2019-06-17 21:07:11 -0400"/>
         <Record unit="mL/min&#183;kg" type="HKQuantityTypeIdentifierVO2Max" value="45.5">
          <MetadataEntry key="HKMetadataKeyDevicePlacementSide" value="&lt;left &amp; &quot;right&quot;&gt; &#x263A;"/>
         </Record>
         <Record value='72' type='HKQuantityTypeIdentifierHeartRate' unit="count/min" ></Record>
        </HealthData>

        """

    static let expected = [
        "<HealthData locale=en_US>",
        "<ExportDate value=2019-06-17 21:07:11 -0400>", "</ExportDate>",
        "<Record unit=mL/min·kg type=HKQuantityTypeIdentifierVO2Max value=45.5>",
        "<MetadataEntry key=HKMetadataKeyDevicePlacementSide value=<left & \"right\"> ☺>", "</MetadataEntry>",
        "</Record>",
        "<Record value=72 type=HKQuantityTypeIdentifierHeartRate unit=count/min>", "</Record>",
        "</HealthData>",
    ]

    @Test func tagsAttributesAndEntities() throws {
        #expect(try Self.trace(Self.document) == Self.expected)
    }

    /// The same tokens whatever the read size: one byte at a time, with the
    /// smallest buffer, must equal the document read whole.
    @Test(arguments: [1, 2, 3, 7, 64, 4096])
    func readSizeDoesNotMatter(_ chunk: Int) throws {
        #expect(try Self.trace(Self.document, chunk: chunk, bufferSize: 64) == Self.expected)
    }

    @Test func theDoctypeIsKeptAsTextAndItsCommentIsSeen() throws {
        let scanner = XMLScanner(stream: MemoryStream(Array(Self.document.utf8)))
        #expect(try scanner.next() == .startElement)
        #expect(scanner.skippedDoctype)
        #expect(scanner.doctype?.contains("<!-- HealthKit Export Version: 11 -->") == true)
    }

    /// iOS 16.0–16.3 wrote `<!ATTLIST … >` blocks missing their closing `>` and an
    /// element declaration with an unbalanced parenthesis; the DTD is skipped, so
    /// the document still reads.
    @Test func aMalformedDoctypeIsSkipped() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE HealthData [
            <!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary|ClinicalRecord|Audiogram|VisionPrescription)*)>
            <!ATTLIST ExportDate
              value CDATA #REQUIRED
            <!ELEMENT Me EMPTY>
            <!ATTLIST Me
              HKCharacteristicTypeIdentifierDateOfBirth CDATA #REQUIRED
            ]>
            <HealthData locale="en_US"><Me HKCharacteristicTypeIdentifierBloodType="HKBloodTypeNotSet"/></HealthData>
            """
        #expect(try Self.trace(xml, chunk: 5) == [
            "<HealthData locale=en_US>", "<Me HKCharacteristicTypeIdentifierBloodType=HKBloodTypeNotSet>", "</Me>", "</HealthData>",
        ])
    }

    @Test func errorsSayLineAndColumn() {
        // Line 3, column 10 is the '<' of the end tag that does not match.
        let mismatched = "<HealthData>\n <Record a=\"1\">\n </Recor>\n</HealthData>"
        let e = Self.error(mismatched)
        #expect(e?.line == 3)
        #expect(e?.column == 2)
        #expect(e?.reason == "end tag </Recor> does not match <Record>")
        // The same place whatever the read size.
        #expect(Self.error(mismatched, chunk: 1) == e)

        // `type="x value="` closes at the second quote; the `1` right after it (column 24) is the error.
        let missingQuote = "<HealthData>\n<Record type=\"x value=\"1\"/>\n</HealthData>"
        #expect(Self.error(missingQuote)?.description == "malformedXML: line 2, column 24: expected whitespace before an attribute")

        let unknownEntity = "<HealthData a=\"&nbsp;\"/>"
        #expect(Self.error(unknownEntity) == XMLError(offset: 15, line: 1, column: 16, reason: "unknown entity '&nbsp;'"))

        let truncated = "<HealthData>\n <Record a=\"1\"/>\n"
        #expect(Self.error(truncated, chunk: 3)?.reason == "the document ends inside <HealthData>")
        #expect(Self.error(truncated, chunk: 3)?.line == 3)

        let textAfterRoot = "<HealthData/>\nx"
        #expect(Self.error(textAfterRoot)?.description == "malformedXML: line 2, column 1: content after the root element")
    }
}
