import Foundation

/// What opening for writing found and did at the tail of the log.
public struct RecoveryReport: Sendable, Equatable {
    /// Where validation started (a checkpoint, or just after the file header).
    public let scannedFrom: UInt64
    /// A torn tail that was cut, if any.
    public let cut: TailCut?
}

/// A torn tail cut at open: the bytes are kept in `quarantineFile`, not destroyed.
public struct TailCut: Sendable, Equatable, CustomStringConvertible {
    /// Where the cut starts (the start of the first incomplete batch).
    public let offset: UInt64
    /// How many bytes were cut.
    public let length: UInt64
    /// The first failed rule in the cut bytes.
    public let damage: LogDamage
    /// The file (relative to the ledger folder) holding the cut bytes.
    public let quarantineFile: String

    /// `cut 123 bytes from byte 4567 (…) into quarantine/…`.
    public var description: String {
        "cut \(length) bytes from byte \(offset) (\(damage.kind.rawValue)) into \(quarantineFile)"
    }
}
