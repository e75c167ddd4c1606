import Foundation

/// A JSON document written straight into bytes, its commas placed by the writer: for
/// exports of millions of objects (FHIR resources), without a `String` per field and
/// without `JSONEncoder`. Keys are static; strings are escaped as `JSONObject.quote`.
package struct JSONBytes {
    /// What has been written.
    package var bytes: [UInt8] = []
    /// Whether the next value opens its container (no comma before it).
    private var first = true

    package init() {}

    /// Starts an object (as a value, or after `key`).
    package mutating func openObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        first = true
    }

    /// Ends the object opened last.
    package mutating func closeObject() {
        bytes.append(UInt8(ascii: "}"))
        first = false
    }

    /// Starts an array (as a value, or after `key`).
    package mutating func openArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        first = true
    }

    /// Ends the array opened last.
    package mutating func closeArray() {
        bytes.append(UInt8(ascii: "]"))
        first = false
    }

    /// A member's key; its value follows.
    package mutating func key(_ k: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        k.withUTF8Buffer { unsafe bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        first = true
    }

    /// A string value.
    package mutating func string(_ s: String) {
        separate()
        var s = s
        let plain = s.withUTF8 { b in unsafe !b.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) }
        if plain {
            bytes.append(UInt8(ascii: "\""))
            s.withUTF8 { unsafe bytes.append(contentsOf: $0) }
            bytes.append(UInt8(ascii: "\""))
        } else {
            bytes.append(contentsOf: JSONObject.quote(s).utf8)
        }
    }

    /// A number value (finite: FHIR decimals have no NaN), as `JSONObject.number` writes it.
    package mutating func number(_ v: Double) {
        separate()
        SampleJSONWriter.number(v, &bytes)
    }

    /// An integer value.
    package mutating func integer(_ v: Int) {
        separate()
        bytes.append(contentsOf: String(v).utf8)
    }

    /// A boolean value.
    package mutating func bool(_ v: Bool) {
        separate()
        bytes.append(contentsOf: (v ? "true" : "false").utf8)
    }

    /// Members rendered beforehand (`"a":1,"b":2`, no braces), placed as the next
    /// members of the open object.
    package mutating func members(_ raw: [UInt8]) {
        separate()
        bytes.append(contentsOf: raw)
    }

    /// A date as a string value, in UTC (`ISO8601.string`'s text), whole seconds
    /// written in place.
    package mutating func date(_ d: Date) {
        separate()
        SampleJSONWriter.date(d, &bytes)
    }

    /// A UUID as a string value: `prefix` then its 36 characters, upper case as
    /// `uuidString` writes it, or lower case (`urn:uuid:` form), written in place.
    package mutating func uuid(_ u: UUID, prefix: StaticString = "", lowercase: Bool = false) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        prefix.withUTF8Buffer { unsafe bytes.append(contentsOf: $0) }
        let letter = lowercase ? UInt8(ascii: "a") : UInt8(ascii: "A")
        // unsafe: the UUID's 16 bytes read in place during the call.
        unsafe withUnsafeBytes(of: u.uuid) { b in
            for i in 0..<16 {
                if i == 4 || i == 6 || i == 8 || i == 10 { bytes.append(UInt8(ascii: "-")) }
                let byte = unsafe b[i], high = byte >> 4, low = byte & 15
                bytes.append(high < 10 ? UInt8(ascii: "0") + high : letter - 10 + high)
                bytes.append(low < 10 ? UInt8(ascii: "0") + low : letter - 10 + low)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// `"k":"v"`.
    package mutating func member(_ k: StaticString, _ v: String) {
        key(k)
        string(v)
    }

    /// `"k":"v"` when `v` is not nil.
    package mutating func member(_ k: StaticString, _ v: String?) {
        guard let v else { return }
        member(k, v)
    }

    /// A newline (between NDJSON lines); the next value starts a new document.
    package mutating func newline() {
        bytes.append(0x0A)
        first = true
    }

    private mutating func separate() {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
    }
}
