import Foundation
import Testing
import HealthModel
@testable import LedgerCore
import TestSupport

/// `SampleIndex.recordFirst(of:after:whoseFirstIs:)`, the window walk's way to a
/// sample's position (slots in ascending order, each from the one before): it must
/// name the record start `position` names, whatever the records' lengths (1 sample,
/// exactly a word of 64, hundreds across words) and however far apart the slots walked.
struct RecordFirstTests {
    /// An index of records of the given lengths, saved one after another.
    static func index(recordLengths: [Int]) -> SampleIndex {
        var index = SampleIndex()
        var n = 0
        for (record, length) in recordLengths.enumerated() {
            for position in 0..<length {
                n += 1
                let header = SampleCodec.Header(kind: .quantity, uuid: fixedUUID(n), typeCode: ObjectType.quantity(.stepCount).code,
                                                start: Double(n), end: Double(n + 60), replaces: nil, syncIndex: -1, syncVersion: 0,
                                                memberOf: nil)
                _ = index.add(header, syncIdentifier: nil, app: 1, recordOffset: UInt64(100 + record * 10_000), position: UInt32(position))
            }
        }
        return index
    }

    /// Walks `slots` (ascending) as the window walk does and returns each one's record start.
    static func walk(_ index: SampleIndex, _ slots: [UInt32]) -> [UInt32] {
        var previous: (slot: UInt32, first: UInt32)?
        return slots.map { slot in
            let first = previous.map { index.recordFirst(of: slot, after: $0.slot, whoseFirstIs: $0.first) } ?? slot - index.position(slot)
            previous = (slot, first)
            return first
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5])
    func everyWalkFindsTheRecordStartPositionFinds(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let lengths = (0..<120).map { _ in [1, 1, 2, 63, 64, 65, 128, 300, Int.random(in: 1...700, using: &random)].randomElement(using: &random)! }
        let index = Self.index(recordLengths: lengths)
        let all = UInt32(index.count)
        let expected = (0..<all).map { $0 - index.position($0) }
        // Every slot; then subsets from dense to sparse (one in 2 … one in 5,000).
        #expect(Self.walk(index, Array(0..<all)) == expected)
        for oneIn in [2, 7, 64, 65, 500, 5_000] {
            let picked = (0..<all).filter { _ in Int.random(in: 0..<oneIn, using: &random) == 0 }
            #expect(Self.walk(index, picked) == picked.map { expected[Int($0)] }, "one slot in \(oneIn)")
        }
    }

    @Test func aSlotAfterItselfOrInTheSameWordStaysInItsRecord() {
        // Records of 3, 64 and 5: starts at 0, 3 and 67.
        let index = Self.index(recordLengths: [3, 64, 5])
        #expect(index.recordFirst(of: 2, after: 2, whoseFirstIs: 0) == 0)
        #expect(index.recordFirst(of: 3, after: 2, whoseFirstIs: 0) == 3)
        #expect(index.recordFirst(of: 66, after: 4, whoseFirstIs: 3) == 3)
        #expect(index.recordFirst(of: 67, after: 66, whoseFirstIs: 3) == 67)
        #expect(index.recordFirst(of: 71, after: 0, whoseFirstIs: 0) == 67)
        #expect(index.recordFirst(of: 63, after: 63, whoseFirstIs: 3) == 3)
        #expect(index.recordFirst(of: 64, after: 63, whoseFirstIs: 3) == 3)
    }
}
