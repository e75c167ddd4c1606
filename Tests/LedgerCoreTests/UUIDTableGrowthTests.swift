import Foundation
import Testing
@testable import LedgerCore

/// The UUID table through its growths (`UUIDTable.grow`): slots placed again in
/// ascending order when they are dense (the sample index's case), in bucket order
/// when they are not; either way every UUID is found at its slot, none that was not
/// inserted is, and the table's invariants hold.
struct UUIDTableGrowthTests {
    static func uuid(_ slot: UInt32, salt: UInt64) -> UUID {
        var x = UInt64(slot) &* 0x9E37_79B9_7F4A_7C15 ^ salt
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<16 {
            x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes[i] = UInt8(truncatingIfNeeded: x >> 56)
        }
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    /// `slots` inserted in order into a table of 16 buckets (several growths), then
    /// looked up; a slot's UUID is a function of it (`uuid(_:salt:)`).
    static func check(_ slots: [UInt32], salt: UInt64) {
        let slotCount = UInt32(min(Int(UInt32.max - 1), Int(slots.max() ?? 0) + 1))
        var table = UUIDTable(capacity: 1)
        for slot in slots { table.insert(uuid(slot, salt: salt), slot: slot) { uuid($0, salt: salt) } }
        #expect(table.count == slots.count)
        for slot in slots {
            #expect(table.find(uuid(slot, salt: salt), slotCount: slotCount) { uuid($0, salt: salt) } == slot)
        }
        for k in 0..<50 {
            #expect(table.find(uuid(UInt32(k), salt: salt ^ 0xFFFF), slotCount: slotCount) { uuid($0, salt: salt) } == nil)
        }
        if Int(slotCount) == slots.count {
            #expect(table.checkInvariants(slotCount: slots.count).isEmpty)
        }
    }

    @Test(arguments: [1, 13, 14, 100, 5_000])
    func denseSlotsAreFoundAfterEveryGrowth(count: Int) {
        Self.check((0..<UInt32(count)).map { $0 }, salt: UInt64(count))
    }

    /// Slots far apart (none is built so; the table must not lean on density).
    @Test func sparseSlotsAreFoundAfterEveryGrowth() {
        Self.check((0..<2_000).map { UInt32($0) * 97 + 5 }, salt: 7)
        Self.check([4_000_000_000, 3, 70_000, 12, 2_999_999_999], salt: 9)
    }
}
