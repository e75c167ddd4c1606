import Foundation
import HealthModel
import LedgerLog

/// Who reads a ledger: its owner (every source, every record kept raw) or an app,
/// which sees what HealthKit lets it see.
public enum Viewer: Sendable, Hashable {
    /// The person whose ledger it is.
    case owner
    /// An app, by bundle identifier.
    case app(String)
}

/// The one read view: every read of a ledger — the stores', the command line's, the
/// change feed's — is answered through it, in one step against one state, with the
/// viewer's visibility applied inside. No caller decides what an app may see:
///
/// - samples and correlations: HealthKit's rule (without read permission an app sees
///   only its own samples; correlations through the member types it may read);
/// - characteristics: nil when not set *or* not readable (the two look the same);
/// - records kept raw: the owner's only;
/// - read permission is never revealed to an app.
///
/// Get one from `Ledger.read(as:_:)` (an open ledger, inside one step of its actor)
/// or, for a lock-free reader, from projections loaded by `StateLoader`. A view of an
/// app that is not registered cannot be made (`RuleViolation.appNotRegistered`).
public struct LedgerReadView {
    /// The projections read (`inout` in the reads only so that a query can sort a
    /// type's timeline the first time).
    package var state: LedgerState
    let fs: any LogFileSystem
    /// The ledger's id (from the log's header), for change anchors.
    let ledgerId: UUID
    /// Who reads.
    public let viewer: Viewer
    /// The app's ordinal; nil for the owner.
    let app: AppOrdinal?

    /// The app ordinal `viewer` reads as in `state` (nil: the owner); throws
    /// `appNotRegistered` for an app that is not registered.
    package static func ordinal(of viewer: Viewer, in state: LedgerState) throws(RuleViolation) -> AppOrdinal? {
        guard case .app(let bundle) = viewer else { return nil }
        guard let ordinal = state.registry.ordinal(of: bundle) else { throw .appNotRegistered(bundle) }
        return ordinal
    }

    /// A view of `state` (read from the log in `fs`) for `viewer`.
    package init(state: consuming LedgerState, fs: any LogFileSystem, ledgerId: UUID, viewer: Viewer) throws(RuleViolation) {
        self.app = try Self.ordinal(of: viewer, in: state)
        self.state = state
        self.fs = fs
        self.ledgerId = ledgerId
        self.viewer = viewer
    }

    /// A view that takes `state` over (leaving it empty) without copying it; give it
    /// back with `giveBack(to:)`.
    init(taking state: inout LedgerState, fs: any LogFileSystem, ledgerId: UUID, viewer: Viewer, app: AppOrdinal?) {
        self.state = Self.placeholder
        swap(&self.state, &state)
        self.fs = fs
        self.ledgerId = ledgerId
        self.viewer = viewer
        self.app = app
    }

    /// What a taken state is left holding meanwhile: one shared empty state, so that
    /// taking allocates nothing (an empty `SampleIndex` has a timeline per type code).
    private static let placeholder = LedgerState()

    /// Hands the projections back to where `init(taking:)` took them from.
    mutating func giveBack(to state: inout LedgerState) {
        swap(&self.state, &state)
    }

    /// What the viewer may see of samples of `type` (HealthKit's visibility rule).
    package func visibility(for type: ObjectType) -> QueryVisibility {
        state.visibility(app: app, type: type)
    }

    // MARK: Samples

    /// Streams the samples of `query` the viewer may see, in the query's order, after
    /// the sample `after`, to `body`. Returns the next page's cursor when the query's
    /// limit cut the answer short, else nil.
    @discardableResult
    public mutating func forEach(_ query: SampleQuery, after: UUID? = nil, _ body: (Sample) throws -> Void) throws -> UUID? {
        try SampleReader(fs).forEach(query, visibility: visibility(for: query.type), after: after, in: &state, body)
    }

    /// `forEach`, with the samples of the common shape given to `plain` as their bytes
    /// (`PlainQuantityBytes`) instead of to `body`, in the same order: for front ends
    /// that print many samples.
    @discardableResult
    package mutating func forEach(_ query: SampleQuery, after: UUID? = nil, plain: (consuming PlainQuantityBytes) throws -> Void,
                                  _ body: (Sample) throws -> Void) throws -> UUID? {
        let visibility = visibility(for: query.type)
        return try withoutActuallyEscaping(plain) { plain in
            try SampleReader(fs).forEach(query, visibility: visibility, after: after, in: &state, plain: plain, body)
        }
    }

    /// One page of an HKSampleQuery: at most `query.limit` samples (0: all) after `after`.
    public mutating func samples(_ query: SampleQuery, after: UUID? = nil) throws -> SamplePage {
        try SampleReader(fs).page(query, visibility: visibility(for: query.type), after: after, in: &state)
    }

    /// Streams the correlations of an HKCorrelationQuery the viewer may see (an app:
    /// through the member types it may read, holding only those members).
    @discardableResult
    public mutating func forEach(_ query: CorrelationQuery, after: UUID? = nil, _ body: (Sample) throws -> Void) throws -> UUID? {
        try SampleReader(fs).forEach(query, visibility: visibility(for: .correlation(query.type)), after: after, in: &state, body)
    }

    /// One page of an HKCorrelationQuery.
    public mutating func correlations(_ query: CorrelationQuery, after: UUID? = nil) throws -> SamplePage {
        try SampleReader(fs).page(query, visibility: visibility(for: .correlation(query.type)), after: after, in: &state)
    }

    /// The samples of `query` the viewing app saved itself, whatever it may read
    /// (what HealthKit's deleteObjects may delete); for the owner, every sample.
    public mutating func ownSamples(_ query: SampleQuery) throws -> [Sample] {
        let visibility: QueryVisibility = app.map { .ownSamplesOnly($0) } ?? .everything
        return try SampleReader(fs).page(query, visibility: visibility, in: &state).samples
    }

    /// The tutorial's most recent sample of `type` the viewer may see: distant past →
    /// `now`, strictEndDate, newest start first (a sample dated in the future is not
    /// "most recent").
    public mutating func mostRecentSample(for type: ObjectType, now: Date) throws -> Sample? {
        try samples(.mostRecent(type, now: now)).samples.first
    }

    /// Records kept raw (`UnrecognizedSample`) that `matching` admits, ordered and
    /// limited as `query` says (its type is ignored). The owner's only: an app never
    /// sees raw records, so for an app this streams nothing and returns nil.
    @discardableResult
    public mutating func forEachRaw(matching: @escaping (UnrecognizedSample) -> Bool, _ query: SampleQuery, after: UUID? = nil,
                                    _ body: (Sample) throws -> Void) throws -> UUID? {
        guard case .owner = viewer else { return nil }
        return try SampleReader(fs).forEachRaw(matching: matching, query, after: after, in: &state, body)
    }

    // MARK: The change feed

    /// HKAnchoredObjectQuery: the changes to `types` after `anchor` the viewer may see.
    public mutating func changes(of types: Set<ObjectType>, predicate: SamplePredicate?, anchor: ChangeAnchor?,
                                 limit: Int) throws -> ChangeSet {
        try ChangeFeed.changes(of: types, predicate: predicate, anchor: anchor, limit: limit, app: app,
                               ledgerId: ledgerId, fs: fs, in: &state)
    }

    /// The anchor of "now" for `types`, as the viewer sees them.
    public mutating func currentAnchor(of types: Set<ObjectType>) throws -> ChangeAnchor {
        try ChangeFeed.currentAnchor(of: types, app: app, ledgerId: ledgerId, fs: fs, in: &state)
    }

    // MARK: Characteristics and authorization

    /// A characteristic's value: nil when not set or, for an app, not readable (the
    /// two look the same, as in HealthKit).
    public func characteristic(_ type: CharacteristicType) -> CharacteristicValue? {
        if let app, !state.authorization.permission(app: app, type: .characteristic(type)).canRead { return nil }
        return state.characteristics[type]
    }

    /// HealthKit's authorizationStatus(for:): the sharing status only (read permission
    /// is never revealed). The owner may write anything: `.sharingAuthorized`.
    public func sharingStatus(for type: ObjectType) -> SharingStatus {
        guard let app else { return .sharingAuthorized }
        return state.authorization.permission(app: app, type: type).share
    }

    /// Whether asking the viewer's owner for `share` and `read` would show anything new
    /// (HealthKit's getRequestStatusForAuthorization: some type is neither asked for
    /// nor answered). Reveals nothing about read permission. Always false for the owner.
    public func wouldRequestShowAnything(toShare share: Set<ObjectType>, read: Set<ObjectType>) -> Bool {
        guard let app else { return false }
        for t in share {
            let p = state.authorization.permission(app: app, type: t)
            if !p.requestedShare && p.share == .notDetermined { return true }
        }
        for t in read {
            let p = state.authorization.permission(app: app, type: t)
            if !p.requestedRead && p.read == nil { return true }
        }
        return false
    }

    /// The owner's view of what an app asked for and was answered, per type, in type
    /// code order (types it never asked for and was never answered are left out).
    /// Throws `ownerOnly` for an app viewer (read permission is never revealed to
    /// apps) and `appNotRegistered` for an unknown app.
    public func permissions(ofApp bundle: String) throws(RuleViolation) -> [(type: ObjectType, permission: TypePermission)] {
        let ordinal = try ownerLookup(bundle)
        return (state.authorization.permissions[ordinal] ?? [:]).sorted { $0.key < $1.key }
            .compactMap { code, p in ObjectType(code: code).map { ($0, p) } }
    }

    /// The owner's view of one permission of an app (all defaults when never asked
    /// for nor answered). Throws as `permissions(ofApp:)`.
    public func permission(ofApp bundle: String, for type: ObjectType) throws(RuleViolation) -> TypePermission {
        state.authorization.permission(app: try ownerLookup(bundle), type: type)
    }

    private func ownerLookup(_ bundle: String) throws(RuleViolation) -> AppOrdinal {
        guard case .owner = viewer else { throw .ownerOnly(action: "reading another app's permissions") }
        guard let ordinal = state.registry.ordinal(of: bundle) else { throw .appNotRegistered(bundle) }
        return ordinal
    }

    /// The owner's time zone (an IANA identifier), nil until one is set.
    public var ownerTimeZone: String? { state.ownerTimeZone }
}

extension Ledger {
    /// Answers one read for `viewer` in one step of the actor: `body` sees one state,
    /// with the viewer's visibility applied inside every answer (`LedgerReadView`).
    /// Throws `RuleViolation.appNotRegistered` for an app that is not registered.
    /// The view shows only events whose records are in the log file, and nothing of
    /// an import transaction before it commits (`Ledger.settleForRead`).
    public func read<T>(as viewer: Viewer, _ body: (inout LedgerReadView) throws -> T) async throws -> T {
        await settleForRead()
        let fs = fs, ledgerId = ledgerId
        return try readAdmitted { state in
            let app = try LedgerReadView.ordinal(of: viewer, in: state)
            // The view takes the projections over for the read (no copy: a first sort
            // of a timeline would otherwise copy every projection) and gives them back.
            var view = LedgerReadView(taking: &state, fs: fs, ledgerId: ledgerId, viewer: viewer, app: app)
            defer { view.giveBack(to: &state) }
            return try body(&view)
        }
    }
}
