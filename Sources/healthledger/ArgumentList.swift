/// The command line's words, consumed by commands as they read their options.
///
/// Conventions: `--name value` or `--name=value`; flags are bare; `--` ends options;
/// a single-valued option given twice is a usage error.
/// Anything left unread when a command finishes is a usage error.
struct ArgumentList {
    private(set) var words: [String]

    init(_ words: [String]) { self.words = words }

    /// Removes a bare flag; true when it was present.
    mutating func flag(_ names: String...) -> Bool {
        var found = false
        words.removeAll { word in
            let hit = names.contains(word)
            found = found || hit
            return hit
        }
        return found
    }

    /// Removes `--name value`; nil when absent. Given twice is a usage error (which
    /// one was meant is not ours to guess: `save --value 70 --value 80`).
    mutating func option(_ name: String) throws -> String? {
        let values = try options(name)
        guard values.count <= 1 else { throw CLIError.usage("\(name) is given \(values.count) times; give it once") }
        return values.first
    }

    /// Removes every `--name value` / `--name=value`, in order.
    mutating func options(_ name: String) throws -> [String] {
        var values: [String] = []
        var i = 0
        var kept: [String] = []
        var endOfOptions = false
        while i < words.count {
            let word = words[i]
            if word == "--" { endOfOptions = true }
            if !endOfOptions, word == name {
                guard i + 1 < words.count else { throw CLIError.usage("\(name) needs a value") }
                values.append(words[i + 1])
                i += 2
                continue
            }
            if !endOfOptions, word.hasPrefix(name + "=") {
                values.append(String(word.dropFirst(name.count + 1)))
                i += 1
                continue
            }
            kept.append(word)
            i += 1
        }
        words = kept
        return values
    }

    /// Removes and returns the next positional word (not an option), or nil.
    mutating func positional() -> String? {
        guard let i = words.firstIndex(where: { !$0.hasPrefix("--") || $0 == "--" }) else { return nil }
        if words[i] == "--" {
            words.remove(at: i)
            return words.isEmpty || i >= words.count ? nil : words.remove(at: i)
        }
        return words.remove(at: i)
    }

    /// Joins every `--name value` of `names` (before `--`) into `--name=value`, so that a
    /// value is never taken for a positional word, wherever the option stands: `--app ID
    /// query bodyMass` names the command `query`, not `ID`. A trailing `--name` without a
    /// value stays as it is, for the reader of that option to refuse.
    mutating func joinValues(of names: Set<String>) {
        var joined: [String] = []
        var i = 0
        var endOfOptions = false
        while i < words.count {
            let word = words[i]
            if word == "--" { endOfOptions = true }
            if !endOfOptions, names.contains(word), i + 1 < words.count {
                joined.append(word + "=" + words[i + 1])
                i += 2
                continue
            }
            joined.append(word)
            i += 1
        }
        words = joined
    }

    /// Removes the next positional word, or throws a usage error naming `what`.
    mutating func required(_ what: String) throws -> String {
        guard let word = positional() else { throw CLIError.usage("missing \(what)") }
        return word
    }

    /// Removes every remaining positional word.
    mutating func remainingPositionals() -> [String] {
        var all: [String] = []
        while let word = positional() { all.append(word) }
        return all
    }

    /// Throws a usage error if anything was not consumed.
    func finish() throws {
        if let extra = words.first { throw CLIError.usage("unexpected argument '\(extra)'") }
    }
}
