import Foundation
import HealthLedger
import HealthModel
import LedgerCore

/// Whose report it is, and the store handle every read goes through: the owner's
/// (every source) or an app's (HealthKit's visibility, decided by the store API —
/// never by the report).
public enum ReportViewer: Sendable {
    case owner(OwnerStore)
    case app(HealthStore)

    /// The ledger behind the store.
    public var ledger: Ledger {
        switch self {
        case .owner(let s): s.ledger
        case .app(let s): s.ledger
        }
    }

    /// The app's bundle identifier; nil for the owner.
    public var bundleIdentifier: String? {
        if case .app(let s) = self { return s.app.bundleIdentifier }
        return nil
    }

    /// One page of a sample query, as this viewer may see it.
    func samples(_ query: SampleQuery, after: UUID?) async throws -> SamplePage {
        switch self {
        case .owner(let s): try await s.samples(query, after: after)
        case .app(let s): try await s.samples(query, after: after)
        }
    }

    /// Every sample of `type` in `period`, oldest start first, a page at a time.
    func forEach(_ type: ObjectType, in period: DatePredicate?, pageSize: Int = 65_536,
                 _ body: (Sample) throws -> Void) async throws {
        let query = SampleQuery(type: type, predicate: period, limit: pageSize, sort: [SampleSortDescriptor(.startDate, ascending: true)])
        var after: UUID?
        repeat {
            let page = try await samples(query, after: after)
            for s in page.samples { try body(s) }
            after = page.next
        } while after != nil
    }

    /// The most recent sample of a type (the tutorial's query), as this viewer sees it.
    func mostRecent(_ type: ObjectType, now: Date) async throws -> Sample? {
        switch self {
        case .owner(let s): try await s.mostRecentSample(for: type, now: now)
        case .app(let s): try await s.mostRecentSample(for: type, now: now)
        }
    }

    /// Date of birth, sex and blood type as this viewer may read them (an app without
    /// read permission sees them unset, as in HealthKit).
    func characteristics() async throws -> (DateOfBirth?, BiologicalSex, BloodType) {
        switch self {
        case .owner(let s):
            var dob: DateOfBirth?
            var sex = BiologicalSex.notSet, blood = BloodType.notSet
            if case .dateOfBirth(let d)? = await s.characteristic(.dateOfBirth) { dob = d }
            if case .biologicalSex(let v)? = await s.characteristic(.biologicalSex) { sex = v }
            if case .bloodType(let v)? = await s.characteristic(.bloodType) { blood = v }
            return (dob, sex, blood)
        case .app(let s):
            return (try? await s.dateOfBirthComponents(), try await s.biologicalSex(), try await s.bloodType())
        }
    }
}
