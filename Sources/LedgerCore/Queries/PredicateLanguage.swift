import Foundation
import HealthModel

/// Why a predicate's text does not parse: the 1-based column and what was wrong.
/// Front ends say which option or parameter it came from (`--where: column 3: …`).
package struct PredicateSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    package let column: Int
    package let message: String
    package var description: String { "column \(column): \(message)" }
}

extension SamplePredicate {
    /// Parses the predicate language (`SamplePredicate.grammar`: `query --where`, the
    /// server's `where=`) into a predicate for samples of `type`.
    package init(parsing text: String, for type: ObjectType) throws(PredicateSyntaxError) {
        do {
            self = try PredicateLanguage.parse(text, type: type)
        } catch let e as PredicateSyntaxError {
            throw e
        } catch {
            throw PredicateSyntaxError(column: 1, message: "\(error)")
        }
    }

    /// The language, as `healthledger query --help` prints it.
    public static var grammar: String { PredicateLanguage.grammar }
}

/// `query TYPE --where EXPR`: a small expression language for HealthKit's predicates.
enum PredicateLanguage {
    static let grammar = """
        --where EXPR (HealthKit's predicates; words are case-sensitive):
          expr    := term ("or" term)*
          term    := factor ("and" factor)*
          factor  := "not" factor | "(" expr ")" | "exists" metadata.KEY | field op operand
          op      := = | != | < | <= | > | >=
          field   := value           quantity value, with its unit (any compatible unit:
                                     value > 180 count/min; a count type's may go without:
                                     value > 10000), or category value (by name or number:
                                     value = asleepCore)
                     uuid            = or != a UUID
                     source          = or != a bundle identifier
                     device.name | device.manufacturer | device.model | device.localIdentifier
                     metadata.KEY    compared to a string, number, date, boolean or quantity
                     activity        workout activity type (= or !=: running)
                     duration        workout duration (seconds, or with a time unit: 30 min)
                     energy | distance   workout totals, with a unit (300 kcal, 5 km)
                                     (activity, duration, energy, distance: workouts only)
          operand := NUMBER [UNIT] | true | false | WORD | "quoted string"
                     (NUMBER is decimal: 72, -0.5, 1e5; not 0x10)
                     (a WORD that is an ISO 8601 date is a date; quote units with
                     parentheses: "mL/(kg*min)")
          e.g. --where 'value > 100 kg and metadata.HKWasUserEntered = true and not source = com.example.scale'
        A bad expression is exit 2 naming the column.
        """

    struct Token {
        enum Kind: Equatable { case word, string, op, open, close, end }
        let kind: Kind
        let text: String
        let column: Int
    }

    static func error(_ column: Int, _ message: String) -> PredicateSyntaxError {
        PredicateSyntaxError(column: column, message: message)
    }

    static func tokens(_ text: String) throws -> [Token] {
        let chars = Array(text)
        var out: [Token] = []
        var i = 0
        while i < chars.count {
            let c = chars[i]
            let column = i + 1
            if c.isWhitespace { i += 1; continue }
            if c == "(" { out.append(Token(kind: .open, text: "(", column: column)); i += 1; continue }
            if c == ")" { out.append(Token(kind: .close, text: ")", column: column)); i += 1; continue }
            if "=!<>".contains(c) {
                var op = String(c)
                if i + 1 < chars.count, chars[i + 1] == "=" { op.append("="); i += 1 }
                i += 1
                guard Comparison(rawValue: op) != nil else { throw error(column, "unknown operator '\(op)'") }
                out.append(Token(kind: .op, text: op, column: column))
                continue
            }
            if c == "\"" {
                var s = ""
                i += 1
                while i < chars.count, chars[i] != "\"" {
                    if chars[i] == "\\", i + 1 < chars.count { i += 1 }
                    s.append(chars[i])
                    i += 1
                }
                guard i < chars.count else { throw error(column, "unterminated string") }
                i += 1
                out.append(Token(kind: .string, text: s, column: column))
                continue
            }
            var word = ""
            while i < chars.count, !chars[i].isWhitespace, !"()=!<>\"".contains(chars[i]) {
                word.append(chars[i])
                i += 1
            }
            out.append(Token(kind: .word, text: word, column: column))
        }
        out.append(Token(kind: .end, text: "end of expression", column: chars.count + 1))
        return out
    }

    /// Parses `text` into a predicate for samples of `type`.
    static func parse(_ text: String, type: ObjectType) throws -> SamplePredicate {
        var p = Parser(tokens: try tokens(text), type: type)
        let predicate = try p.expression(depth: 0)
        guard p.peek.kind == .end else { throw error(p.peek.column, "expected 'and', 'or' or the end, found '\(p.peek.text)'") }
        return predicate
    }

    struct Parser {
        let tokens: [Token]
        let type: ObjectType
        var index = 0

        var peek: Token { tokens[index] }
        mutating func take() -> Token {
            defer { if index < tokens.count - 1 { index += 1 } }
            return tokens[index]
        }

        mutating func expression(depth: Int) throws -> SamplePredicate {
            guard depth < 64 else { throw error(peek.column, "nested too deeply") }
            var parts = [try term(depth: depth)]
            while peek.kind == .word, peek.text == "or" {
                _ = take()
                parts.append(try term(depth: depth))
            }
            return parts.count == 1 ? parts[0] : .or(parts)
        }

        mutating func term(depth: Int) throws -> SamplePredicate {
            var parts = [try factor(depth: depth)]
            while peek.kind == .word, peek.text == "and" {
                _ = take()
                parts.append(try factor(depth: depth))
            }
            return parts.count == 1 ? parts[0] : .and(parts)
        }

        mutating func factor(depth: Int) throws -> SamplePredicate {
            let t = take()
            switch t.kind {
            case .open:
                let inner = try expression(depth: depth + 1)
                let close = take()
                guard close.kind == .close else { throw error(close.column, "expected ')', found '\(close.text)'") }
                return inner
            case .word where t.text == "not":
                guard depth < 64 else { throw error(t.column, "nested too deeply") }
                return .not(try factor(depth: depth + 1))
            case .word where t.text == "exists":
                let key = take()
                guard key.kind == .word, key.text.hasPrefix("metadata."), key.text.count > 9 else {
                    throw error(key.column, "expected metadata.KEY after 'exists'")
                }
                return .metadataExists(String(key.text.dropFirst(9)))
            case .word:
                return try test(field: t)
            default:
                throw error(t.column, "expected a field, 'not', 'exists' or '(', found '\(t.text)'")
            }
        }

        /// Whether a unit follows: the next word or string when it is not a keyword.
        var unitFollows: Bool { (peek.kind == .word && !["and", "or"].contains(peek.text)) || peek.kind == .string }

        /// NUMBER [UNIT] (a decimal number: `DecimalNumber`); without a unit, `unit`, or
        /// an error saying which unit is wanted (`missing`).
        mutating func quantity(_ operand: Token, default unit: HealthUnit?, missing: String? = nil) throws -> Quantity {
            guard operand.kind == .word, let v = DecimalNumber.parse(operand.text) else {
                throw error(operand.column, "expected a number, found '\(operand.text)'")
            }
            if unitFollows {
                let u = take()
                do { return try Quantity(v, unit: u.text) } catch { throw PredicateLanguage.error(u.column, "\(error)") }
            }
            guard let unit else { throw error(peek.column, missing ?? "expected a unit after \(operand.text)") }
            return try Quantity(v, unit)
        }

        /// The workout fields apply to workouts only (elsewhere they would match nothing, silently).
        func requireWorkout(_ field: Token) throws {
            guard type == .workout else {
                throw error(field.column, "'\(field.text)' applies to workouts, not \(type.shortName)")
            }
        }

        mutating func test(field: Token) throws -> SamplePredicate {
            let opToken = take()
            guard opToken.kind == .op, let op = Comparison(rawValue: opToken.text) else {
                throw error(opToken.column, "expected an operator (= != < <= > >=) after '\(field.text)', found '\(opToken.text)'")
            }
            let operand = take()
            guard operand.kind == .word || operand.kind == .string else {
                throw error(operand.column, "expected a value after '\(opToken.text)', found '\(operand.text)'")
            }
            func equality(_ p: SamplePredicate) throws -> SamplePredicate {
                switch op {
                case .equal: return p
                case .notEqual: return .not(p)
                default: throw error(opToken.column, "'\(field.text)' takes = or !=")
                }
            }
            switch field.text {
            case "value", "category":
                switch type {
                case .quantity(let q):
                    let at = peek.column
                    // a bare number is a count only for a count type: a heart rate of 1 is 1 count/s
                    // or 1 count/min, so a type of any other kind needs its unit said
                    let value = try quantity(operand, default: q.canonicalUnit == .count ? .count : nil,
                                             missing: "\(q.shortName) values have a unit: write one after \(operand.text) "
                                                 + "(\(q.canonicalUnit.canonicalString) or another unit of \(q.dimension))")
                    guard (try? value.doubleValue(for: q.canonicalUnit)) != nil else {
                        throw error(at, "unit '\(value.unit)' does not fit \(q.shortName) (\(q.canonicalUnit))")
                    }
                    return .quantity(op, value)
                case .category(let c):
                    guard let v = Int(operand.text) ?? (try? c.value(named: operand.text)) else {
                        throw error(operand.column, "\(c.shortName) has no value '\(operand.text)'")
                    }
                    return .categoryValue(op, v)
                default:
                    throw error(field.column, "'value' applies to quantity and category types")
                }
            case "uuid":
                guard let u = UUIDText.parse(operand.text) else { throw error(operand.column, "'\(operand.text)' is not a UUID") }
                return try equality(.uuids([u]))
            case "source":
                return try equality(.sources([operand.text]))
            case "activity":
                try requireWorkout(field)
                guard let a = try? WorkoutActivityType(name: operand.text) else {
                    throw error(operand.column, "unknown workout activity type '\(operand.text)'")
                }
                return try equality(.workoutActivity(a))
            case "duration":
                try requireWorkout(field)
                return .workoutDuration(op, try quantity(operand, default: try HealthUnit("s")).doubleValue(for: try HealthUnit("s")))
            case "energy":
                try requireWorkout(field)
                return .workoutEnergy(op, try quantity(operand, default: nil))
            case "distance":
                try requireWorkout(field)
                return .workoutDistance(op, try quantity(operand, default: nil))
            default:
                if field.text.hasPrefix("device."), let p = SamplePredicate.DeviceProperty(rawValue: String(field.text.dropFirst(7))) {
                    return try equality(.device(p, operand.text))
                }
                if field.text.hasPrefix("metadata."), field.text.count > 9 {
                    let key = String(field.text.dropFirst(9))
                    if operand.kind == .string { return .metadata(key, op, .string(operand.text)) }
                    if operand.text == "true" || operand.text == "false" { return .metadata(key, op, .bool(operand.text == "true")) }
                    if let d = DecimalNumber.parse(operand.text) {
                        if unitFollows { return .metadata(key, op, .quantity(try quantity(operand, default: nil))) }
                        return .metadata(key, op, Int64(operand.text).map(MetadataValue.integer) ?? .number(d))
                    }
                    if operand.text.first?.isNumber == true, let date = ISO8601.date(from: operand.text) {
                        return .metadata(key, op, .date(date))
                    }
                    return .metadata(key, op, .string(operand.text))
                }
                throw error(field.column, "unknown field '\(field.text)'")
            }
        }
    }
}
