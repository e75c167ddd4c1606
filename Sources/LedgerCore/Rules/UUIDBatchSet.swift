import Foundation

/// The UUIDs of one command's samples, to find one listed twice: a flat table of
/// their 16 bytes with linear probing, sized once for the batch (at most half full).
/// Cheaper than `Set<UUID>`, which hashes every UUID with SipHash: the rules check
/// every sample of a save, a million per import.
///
/// Invariant: `keys` holds two words per slot (`mask + 1` slots), a UUID's two halves side by side; a
/// slot is empty when its `used` byte is 0 (the all-zero UUID is a valid member).
struct UUIDBatchSet: ~Copyable {
    private let keys: UnsafeMutablePointer<UInt64>
    private let used: UnsafeMutablePointer<UInt8>
    private let mask: Int
    private var members = 0
    /// Slots passed over looking for a free one or the UUID (tests check that UUIDs
    /// differing only in a few bytes spread out).
    private(set) var probes = 0

    /// Chosen once per process: the table's layout affects only speed, never a result,
    /// and a seed the caller cannot know keeps a batch of crafted UUIDs from landing
    /// in one run of slots (what `Set<UUID>`'s seeded hash gave).
    private static let seed = UInt64.random(in: .min ... .max)

    /// Every bit of both halves reaches every bit of the result (UUIDs numbered in
    /// their last bytes, as tests and some apps make them, must not share a start).
    @inline(__always)
    static func hash(_ a: UInt64, _ b: UInt64) -> UInt64 {
        var h = (a ^ seed) &* 0x9E37_79B9_7F4A_7C15 ^ b
        h ^= h >> 32
        h &*= 0xBF58_476D_1CE4_E5B9
        h ^= h >> 29
        h &*= 0x94D0_49BB_1331_11EB
        h ^= h >> 32
        return h
    }

    /// A set for up to `count` members.
    init(count: Int) {
        var size = 16
        while size < 2 * count { size <<= 1 }
        keys = .allocate(capacity: 2 * size)
        used = .allocate(capacity: size)
        used.initialize(repeating: 0, count: size)
        mask = size - 1
    }

    deinit {
        keys.deallocate()
        used.deallocate()
    }

    /// Inserts `uuid`; false when it was already there.
    mutating func insert(_ uuid: UUID) -> Bool {
        precondition(2 * (members + 1) <= mask + 1, "a batch set holds at most the count it was made for")
        let (a, b) = withUnsafeBytes(of: uuid.uuid) { ($0.loadUnaligned(as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
        var i = Int(truncatingIfNeeded: Self.hash(a, b)) & mask
        while used[i] != 0 {
            if keys[2 * i] == a && keys[2 * i + 1] == b { return false }
            i = (i + 1) & mask
            probes += 1
        }
        used[i] = 1
        members += 1
        keys[2 * i] = a
        keys[2 * i + 1] = b
        return true
    }
}
