/// Rows of text cells lined up for a terminal: every column but the last padded to
/// its widest cell (by characters), two spaces apart, each line indented. Widths come
/// from the content, so no cell is ever cut (`activitySummariesRecorded`).
struct TextColumns {
    var rows: [[String]] = []
    let indent: String

    init(indent: String = "  ") { self.indent = indent }

    mutating func add(_ cells: String...) { rows.append(cells) }

    /// The lines, in the order the rows were added.
    var lines: [String] {
        let columns = rows.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: columns)
        for row in rows {
            for (i, cell) in row.enumerated() where i < row.count - 1 { widths[i] = max(widths[i], cell.count) }
        }
        return rows.map { row in
            indent + row.enumerated().map { i, cell in
                i < row.count - 1 ? cell + String(repeating: " ", count: widths[i] - cell.count) : cell
            }.joined(separator: "  ")
        }
    }
}
