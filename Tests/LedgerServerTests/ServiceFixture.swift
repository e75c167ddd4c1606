import Foundation
import HealthLedger
import HealthModel
import LedgerHTTP
@testable import LedgerServer
import TestSupport

/// A ledger in a temporary folder served on 127.0.0.1 (a free port), with two apps
/// and their tokens, and the owner's.
final class ServiceFixture: @unchecked Sendable {
    // @unchecked: set up once, then only read.
    let dir = TemporaryDirectory()
    let ledger: Ledger
    let owner: OwnerStore
    let accessLog: AccessLog
    let server: HTTPServer
    let service: LedgerService
    var ownerToken = ""
    var appToken = ""
    var otherToken = ""
    var appTokenID = ""

    static let app = AppRegistration(bundleIdentifier: "com.example.scale", name: "Scale", readPurpose: "shows your weight",
                                     sharePurpose: "saves your weight")
    static let other = AppRegistration(bundleIdentifier: "com.example.other", name: "Other", readPurpose: "reads", sharePurpose: "writes")

    init(limits: HTTPLimits = HTTPLimits(), options: ServiceOptions = ServiceOptions(), shareTypes: Set<ObjectType> = [.quantity(.bodyMass)],
         readTypes: Set<ObjectType> = [.quantity(.bodyMass)]) async throws {
        try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
        ledger = try Ledger.create(path: dir.path)
        owner = OwnerStore(ledger: ledger)
        for registration in [Self.app, Self.other] {
            let store = try await HealthStore(ledger: ledger, app: registration)
            try await store.requestAuthorization(toShare: shareTypes, read: registration == Self.app ? readTypes : [])
            try await owner.grantRequested(app: registration.bundleIdentifier)
        }
        accessLog = try AccessLog.openForWriting(ledgerPath: dir.path)
        service = LedgerService(ledger: ledger, accessLog: accessLog, options: options)
        let service = self.service
        server = try HTTPServer(listen: .tcp(host: "127.0.0.1", port: 0), limits: limits,
                                handler: { request, peer in await service.handle(request, peer) }, refusal: LedgerService.refusal)
        server.start()
        ownerToken = try await owner.issueCredential(for: .owner, name: "owner").token
        let issued = try await owner.issueCredential(for: .app(Self.app.bundleIdentifier), name: "scale")
        appToken = issued.token
        appTokenID = issued.info.id.description
        otherToken = try await owner.issueCredential(for: .app(Self.other.bundleIdentifier)).token
    }

    func stop() async throws {
        await server.shutdown(grace: 5)
        try await accessLog.close()
        try await ledger.close()
    }

    /// One request on a connection of its own (or `on`), its response.
    func request(_ method: String, _ target: String, token: String?, body: String? = nil,
                 contentType: String = "application/json", headers: [String] = [], on client: RawClient? = nil) async throws
        -> RawClient.Response {
        try await RawClient.onThread {
            try self.requestBlocking(method, target, token: token, body: body, contentType: contentType, headers: headers, on: client)
        }
    }

    /// `request`, blocking the calling thread (a scenario run on a thread of its own).
    func requestBlocking(_ method: String, _ target: String, token: String?, body: String? = nil,
                         contentType: String = "application/json", headers: [String] = [], on client: RawClient? = nil) throws
        -> RawClient.Response {
        let c = try client ?? RawClient(server.address)
        var head = "\(method) \(target) HTTP/1.1\r\nHost: test\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        for h in headers { head += h + "\r\n" }
        if let body {
            head += "Content-Type: \(contentType)\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
        } else {
            head += "\r\n"
        }
        c.send(head)
        return try c.readResponse()
    }

    /// The response body's JSON object.
    static func object(_ r: RawClient.Response) throws -> [String: Any] {
        guard let o = try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any] else {
            throw RawClient.Failure(description: "not a JSON object: \(r.text)")
        }
        return o
    }

    /// The response body's JSON Lines.
    static func lines(_ r: RawClient.Response) throws -> [[String: Any]] {
        try r.text.split(separator: "\n").map { line in
            guard let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw RawClient.Failure(description: "not a JSON object: \(line)")
            }
            return o
        }
    }

    static func weight(_ kg: Double, at: String, uuid: String? = nil, metadata: String? = nil) -> String {
        "{\"type\":\"bodyMass\",\"value\":\(kg),\"unit\":\"kg\",\"start\":\"\(at)\""
            + (uuid.map { ",\"uuid\":\"\($0)\"" } ?? "") + (metadata.map { ",\"metadata\":\($0)" } ?? "") + "}"
    }
}
