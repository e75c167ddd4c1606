import Foundation
import Testing
import TestSupport

/// The module graph is written down in three places, and these tests keep them equal:
///
/// (a) Package.swift's target dependencies, read from its text;
/// (b) the modules each target's Swift files import (`import X`, with any attribute or
///     access level, inside `#if` blocks too: every configuration counts);
/// (c) DESIGN.md: the block after "Module graph (checked by ModuleGraphTests)" (each
///     module of `Sources/` and the modules of ours it imports, with its row) and the
///     last column of the Layers section's two tables (each target's dependencies in
///     Package.swift).
///
/// The rule between (a) and (b): a target imports exactly the targets it declares. The one
/// exception is a test target's dependency on an executable target (`healthledger`,
/// `ledger-torture`): it is there so that `swift build --build-tests` builds the binary
/// the tests run, and needs no import.
///
/// The readers are small and strict: a shape they do not know (a target kind, an argument
/// label, a dependency that is not a string literal, an import they cannot read, an
/// unterminated string) fails the test and says what to extend; nothing is skipped.
/// Package.swift is read with `HEALTHLEDGER_POSTGRES=1`'s targets and dependencies in.
@Suite struct ModuleGraphTests {
    static let root = SharedData.repositoryRoot

    static func read(_ relativePath: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(relativePath), encoding: .utf8)
    }

    /// Package.swift's targets and every target's imports.
    static func graph() throws -> ModuleGraph.Graph {
        try ModuleGraph.Graph(packageText: read("Package.swift"), root: root)
    }

    @Test func packageDependenciesAreExactlyTheImports() throws {
        let problems = try Self.graph().dependencyProblems()
        if !problems.isEmpty {
            Issue.record("""
                Package.swift's dependencies and the imports disagree (\(problems.count)):
                \(problems.joined(separator: "\n"))
                """)
        }
    }

    @Test func designModuleGraphIsTheImports() throws {
        let graph = try Self.graph()
        let problems = try graph.designBlockProblems(design: Self.read("DESIGN.md"))
        if !problems.isEmpty {
            Issue.record("""
                DESIGN.md's module graph and the imports disagree (\(problems.count)):
                \(problems.joined(separator: "\n"))
                The block, as the imports say it should be:
                \(graph.designBlock())
                """)
        }
    }

    @Test func designTablesListPackageDependencies() throws {
        let problems = try Self.graph().designTableProblems(design: Self.read("DESIGN.md"))
        if !problems.isEmpty {
            Issue.record("""
                DESIGN.md's Layers tables and Package.swift disagree (\(problems.count)):
                \(problems.joined(separator: "\n"))
                """)
        }
    }

    // The readers themselves, on small inputs.

    @Test func importsInStringsAndCommentsAreNotImports() throws {
        let source = #"""
            import Foundation
            @testable import LedgerLog
            @_exported public import TestSupport
            #if canImport(Glibc)
                package import Glibc
            #endif
            internal import struct HealthModel.Sample
            // import NotInACommentLine
            /* import NotInABlock /* nested */
            import StillInTheBlock */
            let help = """
                import NotInAMultiLineString \(f("import NotInInterpolation"))
                """
            let raw = #"import NotInARawString \"#
            let s = "\"import NotInAString"
            """#
        let modules = try ModuleGraph.imports(inSwift: source, file: "example.swift").map(\.module)
        #expect(modules == ["Foundation", "LedgerLog", "TestSupport", "Glibc", "HealthModel"])
    }

    @Test func unreadableImportsFail() throws {
        let twoOnALine = try ModuleGraph.imports(inSwift: "import Foundation; import Glibc", file: "a.swift")
        #expect(twoOnALine.map(\.module) == ["Foundation", "Glibc"])
        #expect(throws: ModuleGraph.Failure.self) { try ModuleGraph.imports(inSwift: "import Foundation Glibc", file: "a.swift") }
        #expect(throws: ModuleGraph.Failure.self) { try ModuleGraph.imports(inSwift: "let a = \"unterminated", file: "b.swift") }
        #expect(throws: ModuleGraph.Failure.self) { try ModuleGraph.imports(inSwift: "/* unterminated", file: "c.swift") }
    }

    @Test func unknownPackageShapesFail() throws {
        let good = """
            let package = Package(
                name: "P",
                targets: [
                    .target(name: "A", dependencies: ["B"] + (withPostgres ? ["C"] : []), path: "x"),
                    .target(name: "B"),
                ] + (withPostgres ? postgresTargets : []),
                swiftLanguageModes: [.v6]
            )
            var postgresTargets: [Target] {
                [
                    .target(name: "C"),
                ]
            }
            """
        let targets = try ModuleGraph.PackageParser.targets(good)
        #expect(targets.map(\.name) == ["A", "B", "C"])
        #expect(targets[0].dependencies == [.init(name: "B", onlyWithPostgres: false), .init(name: "C", onlyWithPostgres: true)])
        #expect(targets[2].onlyWithPostgres)
        for (bad, replacement) in [
            (#"["B"]"#, #"[.product(name: "B", package: "b")]"#),   // a dependency that is not a string
            (#"path: "x""#, #"sources: ["x"]"#),                   // an argument label not read
            (".target(name: \"B\")", ".binaryTarget(name: \"B\", path: \"b\")"),   // a target kind not read
            ("(withPostgres ? postgresTargets : [])", "otherTargets"),             // another add-on
            ("(withPostgres ? [\"C\"] : [])", "(useC ? [\"C\"] : [])"),            // another condition
        ] {
            let text = good.replacingOccurrences(of: bad, with: replacement)
            #expect(text != good)
            #expect(throws: ModuleGraph.Failure.self, "\(replacement)") { try ModuleGraph.PackageParser.targets(text) }
        }
        // A target declared outside the arrays read.
        #expect(throws: ModuleGraph.Failure.self) {
            try ModuleGraph.PackageParser.targets(good + "\npackage.targets.append(.target(name: \"D\"))")
        }
    }
}

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

    // MARK: Swift sources

    /// The source with every comment and the inside of every string literal blanked
    /// (line breaks kept): what is left is code, line for line.
    static func codeOnly(_ source: String, file: String) throws -> [UInt8] {
        enum Mode {
            case code(interpolationDepth: Int?)
            case string(hashes: Int, multiLine: Bool, line: Int)
        }
        let newline = UInt8(ascii: "\n"), quote = UInt8(ascii: "\""), hash = UInt8(ascii: "#")
        let slash = UInt8(ascii: "/"), star = UInt8(ascii: "*"), backslash = UInt8(ascii: "\\")
        var b = Array(source.utf8)
        let n = b.count
        func at(_ k: Int) -> UInt8 { k < n ? b[k] : 0 }
        func blank(_ k: Int) { if b[k] != newline { b[k] = UInt8(ascii: " ") } }
        func hashes(from k: Int) -> Int {
            var j = k
            while j < n && b[j] == hash { j += 1 }
            return j - k
        }
        var stack: [Mode] = [.code(interpolationDepth: nil)]
        var i = 0
        var line = 1
        while i < n {
            if b[i] == newline { line += 1 }
            switch stack[stack.count - 1] {
            case .code(let depth):
                let c = b[i]
                if c == slash && at(i + 1) == slash {
                    while i < n && b[i] != newline { blank(i); i += 1 }
                } else if c == slash && at(i + 1) == star {
                    let start = line
                    var nesting = 0
                    repeat {
                        guard i < n else { throw Failure("\(file):\(start): a block comment is not closed") }
                        if b[i] == slash && at(i + 1) == star {
                            nesting += 1
                            blank(i); blank(i + 1); i += 2
                        } else if b[i] == star && at(i + 1) == slash {
                            nesting -= 1
                            blank(i); blank(i + 1); i += 2
                        } else {
                            if b[i] == newline { line += 1 }
                            blank(i); i += 1
                        }
                    } while nesting > 0
                } else if c == quote || (c == hash && at(i + hashes(from: i)) == quote) {
                    let h = hashes(from: i)
                    let q = i + h
                    let multiLine = at(q + 1) == quote && at(q + 2) == quote
                    stack.append(.string(hashes: h, multiLine: multiLine, line: line))
                    i = q + (multiLine ? 3 : 1)
                } else if let depth, c == UInt8(ascii: "(") {
                    stack[stack.count - 1] = .code(interpolationDepth: depth + 1)
                    i += 1
                } else if let depth, c == UInt8(ascii: ")") {
                    if depth == 0 { stack.removeLast() } else { stack[stack.count - 1] = .code(interpolationDepth: depth - 1) }
                    i += 1
                } else {
                    i += 1
                }
            case .string(let h, let multiLine, let start):
                let c = b[i]
                if c == backslash && hashes(from: i + 1) >= h {
                    let k = i + 1 + h
                    if at(k) == UInt8(ascii: "(") {
                        for j in i...k { blank(j) }
                        stack.append(.code(interpolationDepth: 0))
                        i = k + 1
                    } else {
                        for j in i...min(k, n - 1) { blank(j) }  // the escaped character too
                        if at(k) == newline { line += 1 }
                        i = k + 1
                    }
                } else if c == quote && (!multiLine || (at(i + 1) == quote && at(i + 2) == quote))
                            && hashes(from: i + (multiLine ? 3 : 1)) >= h {
                    stack.removeLast()
                    i += (multiLine ? 3 : 1) + h
                } else if c == newline && !multiLine {
                    throw Failure("\(file):\(start): a string literal is not closed on its line")
                } else {
                    blank(i)
                    i += 1
                }
            }
        }
        switch stack.last {
        case .code(interpolationDepth: nil) where stack.count == 1: return b
        case .string(_, _, let start): throw Failure("\(file):\(start): a string literal is not closed")
        default: throw Failure("\(file): an interpolation is not closed")
        }
    }

    struct Import {
        var module: String
        var file: String
        var line: Int
    }

    static let accessLevels: Set<String> = ["public", "package", "internal", "fileprivate", "private"]
    static let importKinds: Set<String> = ["typealias", "struct", "class", "enum", "protocol", "let", "var", "func"]

    /// The import declarations of a Swift file, in order. Any statement of code with the
    /// keyword `import` that is not one import declaration fails (statements: the lines,
    /// and the parts of a line between `;`s).
    static func imports(inSwift source: String, file: String) throws -> [Import] {
        let code = try codeOnly(source, file: file)
        var out: [Import] = []
        for (index, bytes) in code.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            for statement in String(decoding: bytes, as: UTF8.self).split(separator: ";", omittingEmptySubsequences: false) {
                let words = statement.split(whereSeparator: \.isWhitespace).map(String.init)
                let identifiers = statement.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") })
                guard identifiers.contains("import") else { continue }
                let unreadable = Failure("\(file):\(index + 1): `\(statement.trimmingCharacters(in: .whitespaces))` is not an import this "
                                         + "test reads (`[@attributes] [access] import [kind] Module[.Sub]`): extend ModuleGraph.imports")
                var k = 0
                while k < words.count && words[k].hasPrefix("@") { k += 1 }
                if k < words.count && accessLevels.contains(words[k]) { k += 1 }
                guard k < words.count, words[k] == "import" else { throw unreadable }
                k += 1
                if k < words.count && importKinds.contains(words[k]) { k += 1 }
                guard k == words.count - 1, let module = words[k].split(separator: ".", omittingEmptySubsequences: false).first,
                      let first = module.first, first.isLetter || first == "_",
                      module.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { throw unreadable }
                out.append(Import(module: String(module), file: file, line: index + 1))
            }
        }
        return out
    }

    // MARK: The graph

    struct Graph {
        var targets: [Target]
        /// By target name: the target names it imports (system modules left out).
        var imported: [String: Set<String>] = [:]
        /// Imports of modules that are neither targets nor system modules.
        var unknownImports: [Import] = []
        /// Targets whose folder holds Swift files.
        var swiftTargets: Set<String> = []
        /// Problems with folders: a target without one, a folder without a target, a C target's dependencies.
        var layoutProblems: [String] = []

        init(packageText: String, root: URL) throws {
            targets = try PackageParser.targets(packageText)
            let byModule = Dictionary(uniqueKeysWithValues: targets.map { ($0.moduleName, $0.name) })
            let fm = FileManager.default
            for target in targets {
                let directory = root.appendingPathComponent(target.directory)
                var isDirectory: ObjCBool = false
                guard fm.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
                    layoutProblems.append("\(target.name): its folder \(target.directory) does not exist")
                    continue
                }
                var imports = Set<String>()
                for file in try ModuleGraph.swiftFiles(in: directory, excluding: target.exclude) {
                    let relative = target.directory + "/" + file.relative
                    let source = try String(contentsOf: file.url, encoding: .utf8)
                    for found in try ModuleGraph.imports(inSwift: source, file: relative) {
                        if let name = byModule[found.module] {
                            imports.insert(name)
                        } else if !ModuleGraph.systemModules.contains(found.module) {
                            unknownImports.append(found)
                        }
                    }
                    swiftTargets.insert(target.name)
                }
                imported[target.name] = imports
                if !swiftTargets.contains(target.name) && !target.dependencies.isEmpty {
                    layoutProblems.append("\(target.name) has no Swift files (a C target or a system library) but declares dependencies, "
                                          + "which this test cannot check")
                }
                if target.kind == .systemLibrary && swiftTargets.contains(target.name) {
                    layoutProblems.append("\(target.name) is a system library but \(target.directory) holds Swift files")
                }
            }
            // Every folder of Sources/ and Tests/ is a target's.
            let folders = Set(targets.map(\.directory))
            for parent in ["Sources", "Tests"] {
                let entries = try fm.contentsOfDirectory(atPath: root.appendingPathComponent(parent).path)
                for entry in entries.sorted() where !entry.hasPrefix(".") && !folders.contains("\(parent)/\(entry)") {
                    layoutProblems.append("\(parent)/\(entry) is no target's folder in Package.swift")
                }
            }
        }

        var byName: [String: Target] { Dictionary(uniqueKeysWithValues: targets.map { ($0.name, $0) }) }

        /// (a) against (b).
        func dependencyProblems() -> [String] {
            var problems = layoutProblems
            for found in unknownImports {
                problems.append("\(found.file):\(found.line) imports \(found.module), which is neither a target of Package.swift "
                                + "nor in ModuleGraph.systemModules")
            }
            let byName = self.byName
            for target in targets {
                for dependency in target.dependencies {
                    guard let other = byName[dependency.name] else {
                        problems.append("\(target.name) depends on \(dependency.name), which Package.swift does not declare")
                        continue
                    }
                    if other.onlyWithPostgres && !dependency.onlyWithPostgres && !target.onlyWithPostgres {
                        problems.append("\(target.name) depends on \(dependency.name) (only with HEALTHLEDGER_POSTGRES=1) in every build")
                    }
                }
                guard swiftTargets.contains(target.name) else { continue }
                let declared = Set(target.dependencies.map(\.name))
                let imports = imported[target.name] ?? []
                for name in imports.subtracting(declared).sorted() {
                    problems.append("\(target.name) imports \(name), but Package.swift does not declare the dependency")
                }
                for name in declared.subtracting(imports).sorted() {
                    // A test target depends on an executable target so that the binary it runs is
                    // built; that edge needs no import.
                    if target.kind == .testTarget && byName[name]?.kind == .executableTarget { continue }
                    problems.append("\(target.name) declares a dependency on \(name), but no Swift file of \(target.name) imports it")
                }
            }
            return problems
        }

        /// The modules of Sources/ (libraries, executables, C targets, system libraries).
        var sourcesTargets: [Target] { targets.filter { $0.directory == "Sources/\($0.name)" } }

        /// Row 0 imports none of ours; every other module is one row above the highest it imports.
        func rows() -> [String: Int] {
            var rows: [String: Int] = [:]
            func row(_ name: String, _ visiting: Set<String>) -> Int {
                if let known = rows[name] { return known }
                guard !visiting.contains(name) else { return 0 }  // a cycle: SwiftPM refuses it anyway
                let below = (imported[name] ?? []).map { row($0, visiting.union([name])) }
                let value = below.isEmpty ? 0 : below.max()! + 1
                rows[name] = value
                return value
            }
            for target in targets { _ = row(target.name, []) }
            return rows
        }

        /// DESIGN.md's block as the imports say it should be.
        func designBlock() -> String {
            let rows = self.rows()
            let lines = sourcesTargets
                .sorted { (rows[$0.name]!, $1.name) > (rows[$1.name]!, $0.name) }
                .map { target -> String in
                    let imports = (imported[target.name] ?? []).sorted()
                    let head = "row \(rows[target.name]!)  \(target.name)"
                    return imports.isEmpty ? head : head + " → " + imports.joined(separator: ", ")
                }
            return (["```"] + lines + ["```"]).joined(separator: "\n")
        }

        static let designMarker = "Module graph (checked by ModuleGraphTests)"

        /// (c): DESIGN.md's block against (b).
        func designBlockProblems(design: String) throws -> [String] {
            let lines = design.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let markers = lines.indices.filter { lines[$0].contains(Self.designMarker) }
            guard markers.count == 1 else {
                throw Failure("DESIGN.md: \(markers.count) lines say \"\(Self.designMarker)\"; the block must follow exactly one")
            }
            guard let open = lines[(markers[0] + 1)...].firstIndex(where: { $0.hasPrefix("```") }),
                  let close = lines[(open + 1)...].firstIndex(where: { $0.hasPrefix("```") }) else {
                throw Failure("DESIGN.md: no ``` block after \"\(Self.designMarker)\"")
            }
            var written: [String: (row: Int, imports: Set<String>)] = [:]
            var problems: [String] = []
            for number in (open + 1)..<close where !lines[number].trimmingCharacters(in: .whitespaces).isEmpty {
                let line = lines[number]
                let unreadable = Failure("DESIGN.md:\(number + 1): `\(line)` is not `row N  Module → A, B` (or `row N  Module` for none)")
                let sides = line.components(separatedBy: "→")
                let head = sides[0].split(whereSeparator: \.isWhitespace)
                guard sides.count <= 2, head.count == 3, head[0] == "row", let row = Int(head[1]) else { throw unreadable }
                let module = String(head[2])
                var imports = Set<String>()
                if sides.count == 2 {
                    for name in sides[1].split(separator: ",") {
                        let trimmed = name.trimmingCharacters(in: .whitespaces)
                        guard !trimmed.isEmpty, !trimmed.contains(where: \.isWhitespace), imports.insert(trimmed).inserted else { throw unreadable }
                    }
                }
                if written[module] != nil { problems.append("DESIGN.md:\(number + 1): \(module) has two lines") }
                written[module] = (row, imports)
            }
            let rows = self.rows()
            let expected = Set(sourcesTargets.map(\.name))
            for module in Set(written.keys).subtracting(expected).sorted() {
                problems.append("DESIGN.md's block has a line for \(module), which is no target of Sources/")
            }
            for module in expected.subtracting(written.keys).sorted() {
                problems.append("DESIGN.md's block has no line for \(module)")
            }
            for module in expected.intersection(written.keys).sorted() {
                let (row, listed) = written[module]!
                let imports = imported[module] ?? []
                for name in listed.subtracting(imports).sorted() {
                    problems.append("DESIGN.md's block says \(module) → \(name), but no Swift file of \(module) imports \(name)")
                }
                for name in imports.subtracting(listed).sorted() {
                    problems.append("DESIGN.md's block lacks \(module) → \(name), which \(module)'s Swift files import")
                }
                if row != rows[module] {
                    problems.append("DESIGN.md's block puts \(module) in row \(row); its row is \(rows[module]!) "
                                    + "(0 when it imports none of ours, else one above the highest it imports)")
                }
            }
            return problems
        }

        /// (c): the last column of the Layers section's tables against (a).
        func designTableProblems(design: String) throws -> [String] {
            let lines = design.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            guard let start = lines.firstIndex(of: "## Layers") else { throw Failure("DESIGN.md has no `## Layers` section") }
            let end = lines[(start + 1)...].firstIndex(where: { $0.hasPrefix("## ") }) ?? lines.count
            let byName = self.byName
            func backticked(_ cell: String) -> [String] {
                cell.components(separatedBy: "`").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
            }
            var problems: [String] = []
            var rowOf: [String: Int] = [:]
            for number in (start + 1)..<end where lines[number].hasPrefix("| `") {
                let cells = lines[number].components(separatedBy: "|").dropFirst().dropLast()
                guard cells.count >= 2, let name = backticked(cells.first!).first else {
                    throw Failure("DESIGN.md:\(number + 1): a table row without `target` first and the dependencies last")
                }
                guard let target = byName[name] else {
                    problems.append("DESIGN.md:\(number + 1): a row for \(name), which is no target of Package.swift")
                    continue
                }
                if rowOf.updateValue(number, forKey: name) != nil { problems.append("DESIGN.md:\(number + 1): a second row for \(name)") }
                let listed = Set(backticked(cells.last!).filter { byName[$0] != nil })
                let declared = Set(target.dependencies.map(\.name))
                for other in listed.subtracting(declared).sorted() {
                    problems.append("DESIGN.md:\(number + 1): \(name)'s row lists \(other), but Package.swift does not declare it")
                }
                for other in declared.subtracting(listed).sorted() {
                    problems.append("DESIGN.md:\(number + 1): \(name)'s row omits \(other), a dependency in Package.swift")
                }
            }
            for target in targets where rowOf[target.name] == nil {
                problems.append("DESIGN.md's Layers tables have no row for \(target.name)")
            }
            return problems
        }
    }

    /// The Swift files under `directory` (recursively, sorted), less the `exclude:`d paths.
    static func swiftFiles(in directory: URL, excluding: [String]) throws -> [(url: URL, relative: String)] {
        guard let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else {
            throw Failure("cannot list \(directory.path)")
        }
        let base = directory.standardizedFileURL.path
        var out: [(url: URL, relative: String)] = []
        for case let url as URL in enumerator where url.pathExtension == "swift" {
            let path = url.standardizedFileURL.path
            guard path.hasPrefix(base + "/") else { throw Failure("\(path) is not under \(base)") }
            let relative = String(path.dropFirst(base.count + 1))
            if excluding.contains(where: { relative == $0 || relative.hasPrefix($0 + "/") }) { continue }
            out.append((url, relative))
        }
        return out.sorted { $0.relative < $1.relative }
    }
}
