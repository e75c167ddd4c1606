import Foundation
import LedgerChecksums

/// The shared first steps of opening a log file: size, header, genesis link.
struct LogOpening {
    let size: UInt64
    let header: LogFileHeader
    let headerBytes: [UInt8]
    let genesis: SHA256Digest

    init(fs: any LogFileSystem, file: any LogFile) throws {
        size = try file.size()
        guard size >= UInt64(LogFormat.fileHeaderLength) else {
            throw LogError.notALedgerLog(reason: "\(fs.path)/\(LogWriter.logFileName) is shorter than a log header")
        }
        var bytes = [UInt8](repeating: 0, count: LogFormat.fileHeaderLength)
        _ = try bytes.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        header = try bytes.withUnsafeBytes { try LogFileHeader.decode($0) }
        headerBytes = bytes
        genesis = BatchChain.genesis(fileHeader: bytes)
    }
}
