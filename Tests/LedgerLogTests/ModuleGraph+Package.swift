import Foundation
import Testing
import TestSupport

/// The readers and the checks behind `ModuleGraphTests`.
enum ModuleGraph {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Modules of the toolchain and the system, imported freely and not part of the graph.
    static let systemModules: Set<String> = [
        "Foundation", "Dispatch", "Glibc", "XCTest", "Testing", "FoundationEssentials",
        "FoundationNetworking", "_Concurrency", "Synchronization", "os",
    ]

    // MARK: Package.swift

    enum Kind: String {
        case target, executableTarget, testTarget, systemLibrary
    }

    struct Dependency: Equatable {
        var name: String
        /// Added by `+ (withPostgres ? [...] : [])`.
        var onlyWithPostgres: Bool
    }

    struct Target {
        var name: String
        var kind: Kind
        var dependencies: [Dependency] = []
        var path: String?
        var exclude: [String] = []
        /// Declared in `postgresTargets`.
        var onlyWithPostgres: Bool
        var line: Int

        /// Where its sources are: `path:`, or SwiftPM's default.
        var directory: String { path ?? (kind == .testTarget ? "Tests/\(name)" : "Sources/\(name)") }

        /// The name `import` uses (SwiftPM's c99name: `ledger-torture` is `ledger_torture`).
        var moduleName: String {
            String(name.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
        }
    }

    struct Token: Equatable {
        enum Kind { case identifier, string, punctuation }
        var kind: Kind
        var text: String
        var line: Int
    }

    /// Package.swift's tokens: identifiers (and numbers), string literals without escapes,
    /// single punctuation characters; comments dropped.
    static func tokens(_ text: String) throws -> [Token] {
        let b = Array(text.utf8)
        var out: [Token] = []
        var i = 0
        var line = 1
        func at(_ k: Int) -> UInt8 { k < b.count ? b[k] : 0 }
        func isIdentifierStart(_ c: UInt8) -> Bool { c == 95 || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) }
        func isIdentifier(_ c: UInt8) -> Bool { isIdentifierStart(c) || (c >= 48 && c <= 57) }
        while i < b.count {
            let c = b[i]
            if c == UInt8(ascii: "\n") {
                line += 1
                i += 1
            } else if c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") || c == UInt8(ascii: "\r") {
                i += 1
            } else if c == UInt8(ascii: "/") && at(i + 1) == UInt8(ascii: "/") {
                while i < b.count && b[i] != UInt8(ascii: "\n") { i += 1 }
            } else if c == UInt8(ascii: "/") && at(i + 1) == UInt8(ascii: "*") {
                let start = line
                var depth = 0
                repeat {
                    if i >= b.count { throw Failure("Package.swift:\(start): a block comment is not closed") }
                    if b[i] == UInt8(ascii: "/") && at(i + 1) == UInt8(ascii: "*") {
                        depth += 1
                        i += 2
                    } else if b[i] == UInt8(ascii: "*") && at(i + 1) == UInt8(ascii: "/") {
                        depth -= 1
                        i += 2
                    } else {
                        if b[i] == UInt8(ascii: "\n") { line += 1 }
                        i += 1
                    }
                } while depth > 0
            } else if c == UInt8(ascii: "\"") {
                if at(i + 1) == UInt8(ascii: "\"") && at(i + 2) == UInt8(ascii: "\"") {
                    throw Failure("Package.swift:\(line): a multi-line string literal; this reader knows only \"...\" without escapes")
                }
                var j = i + 1
                while j < b.count && b[j] != UInt8(ascii: "\"") {
                    if b[j] == UInt8(ascii: "\\") || b[j] == UInt8(ascii: "\n") {
                        throw Failure("Package.swift:\(line): a string literal with an escape or a line break; this reader knows only \"...\" without escapes")
                    }
                    j += 1
                }
                if j >= b.count { throw Failure("Package.swift:\(line): a string literal is not closed") }
                out.append(Token(kind: .string, text: String(decoding: b[(i + 1)..<j], as: UTF8.self), line: line))
                i = j + 1
            } else if isIdentifier(c) {
                var j = i
                while j < b.count && isIdentifier(b[j]) { j += 1 }
                out.append(Token(kind: .identifier, text: String(decoding: b[i..<j], as: UTF8.self), line: line))
                i = j
            } else {
                out.append(Token(kind: .punctuation, text: String(decoding: [c], as: UTF8.self), line: line))
                i += 1
            }
        }
        return out
    }

    /// Reads the targets of Package.swift's `Package(targets: [...])`, and those of
    /// `postgresTargets` when the array is followed by `+ (withPostgres ? postgresTargets : [])`.
    struct PackageParser {
        let tokens: [Token]
        var i = 0

        init(text: String) throws { tokens = try ModuleGraph.tokens(text) }

        /// The targets of a Package.swift's text.
        static func targets(_ text: String) throws -> [Target] {
            var parser = try PackageParser(text: text)
            return try parser.parse()
        }

        /// Every kind of target PackageDescription has; each declaration of one must be read.
        static let allTargetKinds: Set<String> = [
            "target", "executableTarget", "testTarget", "systemLibrary", "binaryTarget", "plugin", "macro",
        ]

        mutating func parse() throws -> [Target] {
            guard let start = find(["let", "package", "=", "Package", "("]) else {
                throw Failure("Package.swift: no `let package = Package(`")
            }
            i = start
            var targets: [Target] = []
            var sawTargets = false
            var withPostgresTargets = false
            repeat {
                if accept(")") { break }  // a trailing comma
                let label = try identifier()
                try expect(":")
                if label == "targets" {
                    targets += try targetArray(onlyWithPostgres: false)
                    if peek("+") {
                        try expect(["+", "(", "withPostgres", "?", "postgresTargets", ":", "[", "]", ")"],
                                   what: "the targets array's only add-on, `+ (withPostgres ? postgresTargets : [])`")
                        withPostgresTargets = true
                    }
                    sawTargets = true
                } else {
                    try skipExpression()
                }
            } while try comma(closing: ")")
            guard sawTargets else { throw Failure("Package.swift: `Package(` has no `targets:`") }
            if withPostgresTargets {
                guard let body = find(["var", "postgresTargets", ":", "[", "Target", "]", "{"]) else {
                    throw Failure("Package.swift: `postgresTargets` is used but no `var postgresTargets: [Target] {` declares it")
                }
                i = body
                targets += try targetArray(onlyWithPostgres: true)
                try expect(["}"], what: "the end of `postgresTargets`")
            }
            // Every target declared anywhere in the file is one of those read above.
            let declarations = tokens.indices.filter { k in
                k + 2 < tokens.count && tokens[k].text == "." && tokens[k + 1].kind == .identifier
                    && Self.allTargetKinds.contains(tokens[k + 1].text) && tokens[k + 2].text == "("
            }
            guard declarations.count == targets.count else {
                let lines = declarations.map { String(tokens[$0].line) }.joined(separator: ", ")
                throw Failure("Package.swift declares \(declarations.count) targets (lines \(lines)) but this reader "
                              + "read \(targets.count) from `targets: [...]` and `postgresTargets`: extend ModuleGraph.PackageParser")
            }
            var seen = Set<String>()
            for target in targets where !seen.insert(target.name).inserted {
                throw Failure("Package.swift:\(target.line): target \(target.name) is declared twice")
            }
            return targets
        }

        mutating func targetArray(onlyWithPostgres: Bool) throws -> [Target] {
            try expect(["["], what: "a target array")
            var targets: [Target] = []
            while !accept("]") {
                targets.append(try target(onlyWithPostgres: onlyWithPostgres))
                if !accept(",") {
                    try expect(["]"], what: "the end of a target array")
                    break
                }
            }
            return targets
        }

        mutating func target(onlyWithPostgres: Bool) throws -> Target {
            let line = current?.line ?? 0
            try expect(["."], what: "a target (`.target(`, `.executableTarget(`, `.testTarget(` or `.systemLibrary(`)")
            let kindName = try identifier()
            guard let kind = Kind(rawValue: kindName) else {
                throw Failure("Package.swift:\(line): `.\(kindName)(` is a target kind this test does not read: extend ModuleGraph.PackageParser")
            }
            try expect(["("], what: "`.\(kindName)(`")
            guard try identifier() == "name" else { throw Failure("Package.swift:\(line): a target whose first argument is not `name:`") }
            try expect([":"], what: "`name:`")
            var target = Target(name: try string(), kind: kind, onlyWithPostgres: onlyWithPostgres, line: line)
            while try comma(closing: ")") {
                if accept(")") { break }  // a trailing comma
                let labelLine = current?.line ?? 0
                let label = try identifier()
                try expect([":"], what: "`\(label):`")
                switch label {
                case "dependencies": target.dependencies = try dependencies(of: target.name)
                case "path": target.path = try string()
                case "exclude": target.exclude = try stringArray()
                // Settings and system-library details: they do not change which files or modules.
                case "swiftSettings", "cSettings", "linkerSettings", "pkgConfig", "providers": try skipExpression()
                default:
                    throw Failure("Package.swift:\(labelLine): target \(target.name) has `\(label):`, an argument this test does not read "
                                  + "(it may change which files or modules belong to the target): extend ModuleGraph.PackageParser")
                }
            }
            return target
        }

        /// `["A", "B"]`, optionally `+ (withPostgres ? ["C"] : [])`.
        mutating func dependencies(of name: String) throws -> [Dependency] {
            var out = try stringArray(what: "dependency of \(name)").map { Dependency(name: $0, onlyWithPostgres: false) }
            if peek("+") {
                try expect(["+", "(", "withPostgres", "?"], what: "a dependency add-on of \(name), `+ (withPostgres ? [\"...\"] : [])`")
                out += try stringArray(what: "dependency of \(name)").map { Dependency(name: $0, onlyWithPostgres: true) }
                try expect([":", "[", "]", ")"], what: "the end of \(name)'s `+ (withPostgres ? [...] : [])`")
            }
            return out
        }

        mutating func stringArray(what: String = "element") throws -> [String] {
            try expect(["["], what: "an array of string literals")
            var out: [String] = []
            while !accept("]") {
                guard let token = current, token.kind == .string else {
                    throw Failure("Package.swift:\(current?.line ?? 0): a \(what) that is not a string literal "
                                  + "(`\(current?.text ?? "end of file")`): this test reads only \"Name\"; extend ModuleGraph.PackageParser")
                }
                out.append(token.text)
                i += 1
                if !accept(",") {
                    try expect(["]"], what: "the end of an array")
                    break
                }
            }
            return out
        }

        var current: Token? { i < tokens.count ? tokens[i] : nil }

        func peek(_ text: String) -> Bool { current?.text == text && current?.kind != .string }

        mutating func accept(_ text: String) -> Bool {
            guard peek(text) else { return false }
            i += 1
            return true
        }

        mutating func expect(_ texts: [String], what: String) throws {
            for text in texts where !accept(text) {
                throw Failure("Package.swift:\(current?.line ?? 0): expected `\(text)` in \(what), found `\(current?.text ?? "end of file")`: "
                              + "a shape this test does not read; extend ModuleGraph.PackageParser")
            }
        }

        mutating func expect(_ text: String) throws { try expect([text], what: "the package") }

        /// `,` (true: more follows) or `closing` (false: consumed).
        mutating func comma(closing: String) throws -> Bool {
            if accept(",") { return true }
            try expect([closing], what: "an argument list")
            return false
        }

        mutating func identifier() throws -> String {
            guard let token = current, token.kind == .identifier else {
                throw Failure("Package.swift:\(current?.line ?? 0): expected a name, found `\(current?.text ?? "end of file")`")
            }
            i += 1
            return token.text
        }

        mutating func string() throws -> String {
            guard let token = current, token.kind == .string else {
                throw Failure("Package.swift:\(current?.line ?? 0): expected a string literal, found `\(current?.text ?? "end of file")`")
            }
            i += 1
            return token.text
        }

        /// Past one argument's value: up to the `,`, `)` or `]` that ends it.
        mutating func skipExpression() throws {
            var depth = 0
            while let token = current {
                if token.kind == .punctuation {
                    switch token.text {
                    case "(", "[", "{": depth += 1
                    case ")", "]", "}":
                        if depth == 0 { return }
                        depth -= 1
                    case ",": if depth == 0 { return }
                    default: break
                    }
                }
                i += 1
            }
            throw Failure("Package.swift: an argument runs to the end of the file")
        }

        /// The index just past the first occurrence of `texts` (identifiers and punctuation).
        func find(_ texts: [String]) -> Int? {
            guard tokens.count >= texts.count else { return nil }
            for k in 0...(tokens.count - texts.count)
            where zip(tokens[k...], texts).allSatisfy({ $0.text == $1 && $0.kind != .string }) {
                return k + texts.count
            }
            return nil
        }
    }
}
