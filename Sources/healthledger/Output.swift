import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writing to stdout and stderr without Foundation's buffering surprises.
enum Output {
    nonisolated(unsafe) private static var buffer: [UInt8] = []

    /// Appends a line to stdout (buffered; flushed at exit and every 64 KiB).
    static func line(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Writes buffered stdout.
    static func flush() {
        buffer.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(1, raw.baseAddress! + offset, raw.count - offset)
                if n <= 0 { break }
                offset += n
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes a line to stderr at once.
    static func error(_ text: String) {
        flush()
        let bytes = Array((text + "\n").utf8)
        bytes.withUnsafeBytes { _ = write(2, $0.baseAddress!, $0.count) }
    }

    /// Whether stderr is a terminal (progress is shown only then).
    static var stderrIsTerminal: Bool { isatty(2) == 1 }
}

