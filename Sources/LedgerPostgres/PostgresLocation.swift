import Foundation
import LedgerLog

/// Where a ledger lives in PostgreSQL: `postgres://[user[:password]@]host[:port]/db?ledger=ID`.
///
/// `ledger` names the ledger in the database (1–128 of `A–Z a–z 0–9 . _ -`); every
/// other query parameter is libpq's (`sslmode`, `connect_timeout`, …) and is passed on.
/// Without `ledger` the URL names a store (`healthledger --store URL` lists its ledgers).
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    /// The URI handed to libpq (the `ledger` parameter removed).
    public let conninfo: String
    /// The ledger's name, or nil for the whole store.
    public let ledger: String?
    /// `postgres://host:port/db?ledger=ID` without user or password: for messages and cache names.
    public let description: String
    /// `host-port-db`: the folder name of this store's caches.
    let cacheKey: String

    /// Whether `text` uses the scheme (`postgres://` or `postgresql://`).
    public static func isPostgresURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Parses a URL; a malformed one or a bad ledger name is `PostgresLocationError`.
    public init(_ text: String) throws {
        guard Self.isPostgresURL(text), var parts = URLComponents(string: text), let host = parts.host, !host.isEmpty else {
            throw PostgresLocationError(url: Self.redacted(text), reason: "expected postgres://[user@]host[:port]/database[?ledger=ID]")
        }
        let database = String(parts.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else {
            throw PostgresLocationError(url: Self.redacted(text), reason: "the URL names no database (postgres://host/DATABASE)")
        }
        var ledger: String?
        var rest: [URLQueryItem] = []
        for item in parts.queryItems ?? [] {
            if item.name == "ledger" {
                guard ledger == nil else { throw PostgresLocationError(url: Self.redacted(text), reason: "ledger= given twice") }
                ledger = item.value ?? ""
            } else {
                rest.append(item)
            }
        }
        if let ledger { try Self.checkName(ledger, url: Self.redacted(text)) }
        parts.queryItems = rest.isEmpty ? nil : rest
        parts.scheme = "postgresql"
        guard let uri = parts.string else {
            throw PostgresLocationError(url: Self.redacted(text), reason: "cannot rebuild the URL for libpq")
        }
        conninfo = uri
        self.ledger = ledger
        let port = parts.port.map { ":\($0)" } ?? ""
        description = "postgres://\(host)\(port)/\(database)" + (ledger.map { "?ledger=\($0)" } ?? "")
        cacheKey = "\(host)-\(parts.port ?? 5432)-\(database)".map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." ? $0 : "_" }
            .reduce(into: "") { $0.append($1) }
    }

    /// The same store with another ledger.
    public func with(ledger name: String) throws -> PostgresLocation {
        try Self.checkName(name, url: description)
        var parts = URLComponents(string: conninfo)!
        parts.queryItems = (parts.queryItems ?? []) + [URLQueryItem(name: "ledger", value: name)]
        return try PostgresLocation(parts.string!)
    }

    static func checkName(_ name: String, url: String) throws {
        let allowed = name.utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2E || b == 0x5F || b == 0x2D
        }
        guard (1...128).contains(name.utf8.count), allowed, name != ".", name != ".." else {
            throw PostgresLocationError(url: url, reason: "ledger '\(name)' is not 1–128 of A–Z a–z 0–9 . _ -")
        }
    }

    /// The URL with any password replaced by `***`.
    static func redacted(_ text: String) -> String {
        guard let at = text.firstIndex(of: "@"), let scheme = text.range(of: "://"), scheme.upperBound < at else { return text }
        let userInfo = text[scheme.upperBound..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + ":***" + String(text[at...])
    }
}

/// A `postgres://` URL that cannot be used, and why.
public struct PostgresLocationError: Error, Sendable, Equatable, CustomStringConvertible {
    public let url: String
    public let reason: String
    public var description: String { "invalidPostgresURL: \(url): \(reason)" }
}
