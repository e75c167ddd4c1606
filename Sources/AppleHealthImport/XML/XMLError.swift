/// XML that is not well-formed, with where: the byte offset in the document, and the
/// 1-based line and column (the column counts bytes of UTF-8 from the line's start).
public struct XMLError: Error, Hashable, Sendable, CustomStringConvertible {
    public let offset: UInt64
    public let line: Int
    public let column: Int
    public let reason: String

    public init(offset: UInt64, line: Int, column: Int, reason: String) {
        self.offset = offset
        self.line = line
        self.column = column
        self.reason = reason
    }

    /// `malformedXML: line 12, column 7: expected '=' after attribute name 'type'`.
    public var description: String { "malformedXML: line \(line), column \(column): \(reason)" }
}
