/// Series styles told apart without colour: each style has a colour (Okabe–Ito,
/// safe for colour blindness), a dash pattern for lines and a fill pattern for bars
/// and areas, so a chart printed in greyscale still reads.
public enum ChartStyle {
    /// Colours, in style order.
    public static let colours = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#56B4E9", "#E69F00", "#000000", "#F0E442"]
    /// Line dash arrays (`""` solid), in style order.
    public static let dashes = ["", "6 3", "2 2", "8 3 2 3", "1 3", "10 4"]
    /// Fill patterns: drawn inside a tile of 6 × 6 px over the style's colour.
    static let patternMarks = [
        "",  // solid
        "<path d=\"M0 6L6 0\" stroke=\"#fff\" stroke-width=\"1.5\"/>",
        "<circle cx=\"3\" cy=\"3\" r=\"1.3\" fill=\"#fff\"/>",
        "<path d=\"M0 0L6 6M6 0L0 6\" stroke=\"#fff\" stroke-width=\"1\"/>",
        "<path d=\"M0 3H6\" stroke=\"#fff\" stroke-width=\"1.5\"/>",
        "<path d=\"M3 0V6\" stroke=\"#fff\" stroke-width=\"1.5\"/>",
    ]

    public static func colour(_ style: Int) -> String { colours[abs(style) % colours.count] }
    public static func dash(_ style: Int) -> String { dashes[abs(style) % dashes.count] }

    /// The fill for a style's bars or areas: its pattern (`url(#…)`) or plain colour.
    static func fill(_ style: Int, chartID: String) -> String {
        abs(style) % patternMarks.count == 0 ? colour(style) : "url(#\(chartID)-p\(abs(style) % patternMarks.count)-\(abs(style) % colours.count))"
    }

    /// The `<pattern>` definition a style's fill refers to (empty for a solid style).
    static func patternDefinition(_ style: Int, chartID: String) -> String {
        let mark = abs(style) % patternMarks.count
        guard mark != 0 else { return "" }
        return "<pattern id=\"\(chartID)-p\(mark)-\(abs(style) % colours.count)\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
            + "<rect width=\"6\" height=\"6\" fill=\"\(colour(style))\"/>\(patternMarks[mark])</pattern>"
    }
}
