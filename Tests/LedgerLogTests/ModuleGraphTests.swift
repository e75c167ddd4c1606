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
