import Foundation
import HealthLedger
import HealthModel
import LedgerHTTP
import LedgerReporting

/// Reading a request's parameters and body, each refusal a problem naming the
/// parameter: a malformed parameter 400, a value the model refuses 422.
extension Call {
    /// The path parameter `type` as a type (identifier or short name).
    func type() throws -> ObjectType {
        let text = params["type"] ?? ""
        do { return try ObjectType(identifier: text) } catch { throw Problem(error) }
    }

    /// A quantity type, for routes that compute over values.
    func quantityType() throws -> QuantityType {
        guard case .quantity(let q) = try type() else {
            throw Problem.invalid("notAQuantityType: \(params["type"] ?? "") is not a quantity type")
        }
        return q
    }

    func query(_ name: String) throws -> String? {
        let values = request.queryValues(name)
        guard values.count <= 1 else { throw Problem.usage("\(name) is given \(values.count) times") }
        return values.first
    }

    /// A whole number in `range` (absent: `default`).
    func int(_ name: String, in range: ClosedRange<Int>, default value: Int) throws -> Int {
        guard let text = try query(name) else { return value }
        guard text.utf8.count <= 12, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int(text), range.contains(n) else {
            throw Problem.usage("\(name) takes a whole number in \(range.lowerBound)…\(range.upperBound), not '\(text.prefix(40))'")
        }
        return n
    }

    /// A number of seconds in `range` (absent: `default`).
    func seconds(_ name: String, in range: ClosedRange<Double>, default value: Double) throws -> Double {
        guard let text = try query(name) else { return value }
        guard text.utf8.count <= 12, let n = Double(text), n.isFinite, range.contains(n) else {
            throw Problem.usage("\(name) takes seconds in \(range.lowerBound)…\(range.upperBound), not '\(text.prefix(40))'")
        }
        return n
    }

    func bool(_ name: String) throws -> Bool {
        switch try query(name) {
        case nil, "false": return false
        case "true", "": return true
        case let other?: throw Problem.usage("\(name) takes true or false, not '\(other.prefix(40))'")
        }
    }

    /// An ISO 8601 date or date-time; a date alone is the start of that day in `zone`.
    func date(_ name: String, zone: TimeZone) throws -> Date? {
        guard let text = try query(name) else { return nil }
        do { return try SampleJSONReader.date(text, name, zone: zone) } catch { throw Problem.invalid("\(error)") }
    }

    /// Comma-separated types (`share=bodyMass,height`), each also repeatable.
    func types(_ name: String) throws -> [ObjectType] {
        var out: [ObjectType] = []
        for value in request.queryValues(name) {
            for part in value.split(separator: ",") where !part.isEmpty {
                do { out.append(try ObjectType(identifier: String(part))) } catch { throw Problem(error) }
            }
        }
        return out
    }

    /// The body as JSON (`Content-Type: application/json`).
    func jsonBody() throws -> JSONValue {
        let type = request.headers["content-type"]?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard type == "application/json" else {
            throw Problem(415, "unsupportedMediaType", "the body must be application/json, not \(type ?? "absent")")
        }
        do { return try JSONValue.parse(request.body[...]) } catch { throw Problem.usage("invalidJSON: \(error)") }
    }

    /// Refuses query parameters the route does not take (a misspelt one must not be ignored).
    func only(_ names: Set<String>) throws {
        for (name, _) in request.query where !names.contains(name) {
            throw Problem.usage("unknown parameter '\(name.prefix(40))' (this route takes: \(names.sorted().joined(separator: ", ")))")
        }
    }
}
