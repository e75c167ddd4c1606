import Foundation
import LedgerCrypto
import Testing
@testable import LedgerKeys

/// A fresh folder under the system's temporary folder (mode 0700), removed by `remove()`.
struct TemporaryFolder {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("ledgerkeys-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    func join(_ name: String) -> String { path + "/" + name }
}

/// A file's permission bits.
func mode(_ path: String) throws -> Int {
    try (FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
}

func setMode(_ path: String, _ mode: Int) throws {
    try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
}

func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

/// Writes `bytes` to `path` with mode 0600.
func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    try setMode(path, 0o600)
}

/// Whether `needle` occurs anywhere in `haystack`.
func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, haystack.count >= needle.count else { return false }
    for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
        if haystack[start..<start + needle.count].elementsEqual(needle) { return true }
    }
    return false
}

/// The KEK with key bytes 0, 1, …, 31.
let countingKEK = KeyEncryptionKey(key: try! SealKey(bytes: (0..<32).map { UInt8($0) }))

func scope(source: UInt64 = 1, type: UInt16 = 7, year: Int = 2026, month: Int = 1, kind: KeySource.Kind = .app) -> KeyScope {
    let id = (0..<16).map { UInt8(truncatingIfNeeded: source >> UInt64(8 * ($0 % 8))) }
    let source = kind == .app ? KeySource.app(ordinal: source) : try! KeySource(kind: kind, id: id)
    return KeyScope(source: source, type: type, month: try! UTCMonth(year: year, month: month))
}

/// The error `body` throws, or nil when it returns (any other error is an issue).
func error<T>(_ body: () throws -> T) -> KeyStoreError? {
    do {
        _ = try body()
        return nil
    } catch let error as KeyStoreError {
        return error
    } catch {
        Issue.record("not a KeyStoreError: \(error)")
        return nil
    }
}
