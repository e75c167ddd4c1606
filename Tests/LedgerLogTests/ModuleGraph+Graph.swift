import Foundation
import Testing
import TestSupport

/// The graph: Package.swift's targets against their sources' imports and DESIGN.md.
extension ModuleGraph {
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
