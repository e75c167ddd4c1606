import Foundation
import Testing
import HealthModel
import HealthLedger
import LedgerCore
import TestSupport

/// HealthKit's permission matrix, one row per combination of the share state
/// {not asked, asked but not answered, granted, denied} and the read state
/// {granted, denied, never answered}: the exact outcome of save, query (all sources
/// or only its own), a characteristic read, and delete.
struct AuthorizationMatrixTests {
    enum ShareState: String, CaseIterable, Sendable { case notAsked, askedNotAnswered, granted, denied }
    enum ReadState: String, CaseIterable, Sendable { case granted, denied, never }

    struct Row: Sendable, CustomTestStringConvertible {
        let share: ShareState
        let read: ReadState
        /// nil: the save succeeds; else the error.
        let save: HealthStoreError?
        /// How many samples the app's query returns (the other app saved one; it saved one if it could).
        let queryCount: Int
        let bloodType: BloodType
        /// Deleting the other app's sample is always refused; deleting its own:
        let deleteOwn: HealthStoreError?
        var testDescription: String { "share \(share.rawValue), read \(read.rawValue)" }
    }

    static let bodyMass = "HKQuantityTypeIdentifierBodyMass"
    static let rows: [Row] = {
        var rows: [Row] = []
        for share in ShareState.allCases {
            for read in ReadState.allCases {
                let canSave = share == .granted
                let saveError: HealthStoreError? = canSave ? nil
                    : share == .denied ? .authorizationDenied(type: bodyMass) : .authorizationNotDetermined(type: bodyMass)
                let own = canSave ? 1 : 0
                rows.append(Row(share: share, read: read, save: saveError,
                                queryCount: read == .granted ? 1 + own : own,
                                bloodType: read == .granted ? .oPositive : .notSet,
                                deleteOwn: canSave ? nil : nil))
            }
        }
        return rows
    }()

    @Test(arguments: rows)
    func outcome(_ row: Row) async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        try await owner.setCharacteristic(.bloodType(.oPositive))
        // another app's sample, always there
        let other = try await HealthStore(ledger: ledger, app: healthApp)
        try await owner.decide(app: healthApp.bundleIdentifier, [(.quantity(.bodyMass), .granted, nil)])
        let othersSample = UUID()
        try await other.save(try weight(80, at: "2026-02-01T08:00:00Z", uuid: othersSample))

        let app = try await HealthStore(ledger: ledger, app: tracker)
        if row.share != .notAsked || row.read != .never {
            try await app.requestAuthorization(toShare: row.share == .notAsked ? [] : [.quantity(.bodyMass)],
                                               read: row.read == .never ? [] : [.quantity(.bodyMass), .characteristic(.bloodType)])
        }
        let share: Answer? = row.share == .granted ? .granted : row.share == .denied ? .denied : nil
        let read: Answer? = row.read == .granted ? .granted : row.read == .denied ? .denied : nil
        if share != nil || read != nil {
            try await owner.decide(app: tracker.bundleIdentifier, [(.quantity(.bodyMass), share, read)])
        }
        if read != nil { try await owner.decide(app: tracker.bundleIdentifier, [(.characteristic(.bloodType), nil, read)]) }

        // save
        let mine = UUID()
        do {
            try await app.save(try weight(70, at: "2026-02-02T08:00:00Z", uuid: mine))
            #expect(row.save == nil, "\(row.testDescription): the save should have failed")
        } catch let error as HealthStoreError {
            #expect(error == row.save, "\(row.testDescription)")
        }
        // authorizationStatus reveals sharing only
        let expectedStatus: SharingStatus = row.share == .granted ? .sharingAuthorized : row.share == .denied ? .sharingDenied : .notDetermined
        #expect(try await app.authorizationStatus(for: .quantity(.bodyMass)) == expectedStatus)
        // query: all sources with read permission, else only its own
        #expect(try await app.execute(SampleQuery(type: .quantity(.bodyMass))).count == row.queryCount, "\(row.testDescription)")
        // characteristic: unset and denied look the same
        #expect(try await app.bloodType() == row.bloodType)
        // delete: never another app's sample
        await #expect(throws: HealthStoreError.notOwner(othersSample)) { try await app.delete([othersSample]) }
        if row.save == nil {
            try await app.delete([mine])
            #expect(try await app.execute(SampleQuery(type: .quantity(.bodyMass))).contains { $0.uuid == mine } == false)
        } else {
            await #expect(throws: HealthStoreError.objectNotFound(mine)) { try await app.delete([mine]) }
        }
    }

    @Test func revokingSharingTakesAwayDeletion() async throws {
        let ledger = try makeLedger()
        let owner = OwnerStore(ledger: ledger)
        let app = try await HealthStore(ledger: ledger, app: tracker)
        try await owner.decide(app: tracker.bundleIdentifier, [(.quantity(.bodyMass), .granted, nil)])
        let id = UUID()
        try await app.save(try weight(70, at: "2026-02-02T08:00:00Z", uuid: id))
        try await owner.decide(app: tracker.bundleIdentifier, [(.quantity(.bodyMass), .denied, nil)])
        await #expect(throws: HealthStoreError.authorizationDenied(type: Self.bodyMass)) { try await app.delete([id]) }
        try await owner.delete([id], reason: "owner cleans up")
        #expect(try await owner.execute(SampleQuery(type: .quantity(.bodyMass))).isEmpty)
    }
}
