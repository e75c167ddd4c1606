import Foundation
import HealthModel

/// Projection: what statistics need beyond the sample index, so that a statistics
/// query reads no log.
///
/// - `values[slot]`: a quantity sample's value in its type's canonical unit (NaN for
///   any other sample), and `userEntered[slot]`: 1 when its metadata says
///   `HKWasUserEntered`, else 0 (a byte, as snapshots map it; any other byte of a
///   damaged snapshot reads as 1). Together with the slot's interval, type, source and deleted
///   bit (`SampleIndex`) and the type's timeline (slots sorted by start), that is
///   every input of the statistics engine: per type, time-sorted values.
/// - `priorities`: the owner's source order per quantity type (`sourcePrioritySet`).
/// - `grantOrder`: apps in the order they were first granted sharing for any type
///   (HealthKit's default order among third-party apps).
///
/// Invariants: `values.count == userEntered.count ==` the sample index's slot count
/// (one entry appended per slot, in slot order); a value never changes (a sample is
/// immutable; deletion is the index's deleted bit); `grantOrder` has no duplicates.
package struct StatisticsProjection: Sendable, Equatable {
    package private(set) var values: Column<Double> = []
    package private(set) var userEntered: Column<UInt8> = []
    package private(set) var priorities: [UInt16: [String]] = [:]
    package private(set) var grantOrder: [AppOrdinal] = []

    package init() {}

    /// NaN compares unequal to itself: compare the bit patterns.
    package static func == (a: StatisticsProjection, b: StatisticsProjection) -> Bool {
        a.values.count == b.values.count && zip(a.values, b.values).allSatisfy { $0.bitPattern == $1.bitPattern }
            && zip(a.userEntered, b.userEntered).allSatisfy { ($0 != 0) == ($1 != 0) } && a.userEntered.count == b.userEntered.count
            && a.priorities == b.priorities && a.grantOrder == b.grantOrder
    }

    mutating func add(slot: UInt32, value: Double, userEntered flag: Bool) {
        precondition(Int(slot) == values.count, "one statistics entry per slot, in slot order")
        values.append(value)
        userEntered.append(flag ? 1 : 0)
    }

    mutating func granted(_ app: AppOrdinal) {
        if !grantOrder.contains(app) { grantOrder.append(app) }
    }

    mutating func setPriority(_ code: UInt16, _ sources: [String]) {
        priorities[code] = sources.isEmpty ? nil : sources
    }

    mutating func reserve(_ n: Int) {
        values.reserveCapacity(n)
        userEntered.reserveCapacity(n)
    }

    /// The owner's order for a type code (empty: the default order).
    package func priority(_ code: UInt16) -> [String] { priorities[code] ?? [] }

    /// Whether a slot's sample was entered by hand.
    package func isUserEntered(_ slot: Int) -> Bool { userEntered[slot] != 0 }

    init(values: Column<Double>, userEntered: Column<UInt8>, priorities: [UInt16: [String]], grantOrder: [AppOrdinal]) {
        self.values = values
        self.userEntered = userEntered
        self.priorities = priorities
        self.grantOrder = grantOrder
    }

    /// Feeds the projection into a digest (only when it holds a priority or a value,
    /// so that ledgers without quantities keep their digest).
    func feed(_ d: inout DigestWriter) {
        let codes = priorities.keys.sorted()
        if !codes.isEmpty { d.section("sourcePriorities", count: codes.count) }
        for code in codes {
            d.u16(code)
            d.u64(UInt64(priorities[code]!.count))
            for s in priorities[code]! { d.string(s) }
        }
    }
}

/// The order of sources when a cumulative sum merges overlapping samples.
///
/// With an owner's list for the type, the listed sources come first, in its order
/// (a source's manual entries just above its other samples); the rest follow in the
/// default order. HealthKit's default order: samples entered by hand
/// (`HKWasUserEntered`) first, then Apple devices — Apple Watch before iPhone (a
/// source whose bundle identifier starts with `com.apple.health`, or one an export
/// brought, whose name says `Watch` or `iPhone`) —, then other apps in the order
/// they were first granted sharing, then apps never granted, in registration order.
///
/// A rank is a number, lower better; the samples of one (source, manual) pair share
/// a rank and add up where they overlap.
package struct SourcePriority: Sendable {
    /// Most sources a priority list may name.
    package static let maxSources = 4096

    let listed: [AppOrdinal: Int]
    let listCount: Int
    let defaultRank: [AppOrdinal: Int]
    let appCount: Int

    /// The priority in force for `type` in `state`.
    package init(type: QuantityType, state: LedgerState) {
        let list = state.statistics.priority(ObjectType.quantity(type).code)
        var listed: [AppOrdinal: Int] = [:]
        for (i, bundle) in list.enumerated() {
            if let o = state.registry.ordinal(of: bundle) { listed[o] = i }
        }
        self.listed = listed
        listCount = list.count
        let apps = state.registry.apps
        appCount = apps.count
        let grant = state.statistics.grantOrder
        var grantPosition: [AppOrdinal: Int] = [:]
        for (i, o) in grant.enumerated() { grantPosition[o] = i }
        func deviceClass(_ a: AppRegistration) -> Int {
            // Apple's devices: `com.apple.health.<UUID>` on a device, `export:<name>` from an export
            guard a.bundleIdentifier.hasPrefix("com.apple.health") || a.imported else { return 2 }
            if a.name.contains("Watch") { return 0 }
            if a.name.contains("iPhone") { return 1 }
            return 2
        }
        let ordinals = (0..<apps.count).map { AppOrdinal($0 + 1) }
        let sorted = ordinals.sorted { x, y in
            let a = apps[Int(x) - 1], b = apps[Int(y) - 1]
            return (deviceClass(a), grantPosition[x] ?? grant.count + Int(x), x) < (deviceClass(b), grantPosition[y] ?? grant.count + Int(y), y)
        }
        var defaultRank: [AppOrdinal: Int] = [:]
        for (i, o) in sorted.enumerated() { defaultRank[o] = i }
        self.defaultRank = defaultRank
    }

    /// The rank of a sample of `app` (entered by hand or not).
    package func rank(app: AppOrdinal, userEntered: Bool) -> UInt32 {
        if let i = listed[app] { return UInt32(2 * i + (userEntered ? 0 : 1)) }
        let d = defaultRank[app] ?? appCount + Int(app)
        return UInt32(2 * listCount + (userEntered ? 0 : 1 << 22) + min(d, (1 << 22) - 1))
    }

    /// The sources in the order in force: listed ones, then the others in the default order.
    package func ordered(_ state: LedgerState) -> [String] {
        let all = (1...max(1, appCount)).compactMap { o -> (Int, String)? in
            guard let r = state.registry.registration(AppOrdinal(o)) else { return nil }
            return (Int(rank(app: AppOrdinal(o), userEntered: false)), r.bundleIdentifier)
        }
        return all.sorted { $0.0 < $1.0 }.map(\.1)
    }
}
