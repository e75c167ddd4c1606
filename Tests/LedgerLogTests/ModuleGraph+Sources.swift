import Foundation
import Testing
import TestSupport

/// Reading Swift sources' imports (strings and comments blanked first).
extension ModuleGraph {
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
}
