import AppleHealthImport
import Foundation
import TestSupport

/// Debian's `chromium`, headless: loads a file and reports its DOM (`--dump-dom`),
/// every console message the page logged (`--enable-logging=stderr` prints them as
/// `CONSOLE` lines), and every network request the page made (from a net log: the
/// requests with a real initiator; the browser's own background requests have
/// none). A screenshot is decoded (our own inflater) to tell a blank page.
enum HeadlessChromium {
    /// The browser, or nil: `$CHROMIUM`, else the first of the usual paths.
    static let binary: String? = {
        let candidates = [ProcessInfo.processInfo.environment["CHROMIUM"], "/usr/bin/chromium", "/usr/bin/chromium-browser",
                          "/usr/bin/google-chrome"].compactMap { $0 }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    static var available: Bool { binary != nil }

    struct Load {
        let dom: String
        let consoleMessages: [String]
        let pageRequests: [String]
    }

    static let flags = ["--headless", "--disable-gpu", "--no-sandbox", "--disable-background-networking", "--no-first-run",
                        "--disable-extensions", "--disable-component-update", "--disable-sync", "--enable-logging=stderr", "--v=0"]

    /// Loads `file` once: DOM, console messages, page requests.
    static func load(_ file: String, scratch: String) throws -> Load {
        let netLog = scratch + "/netlog.json"
        let run = try chromium(flags + ["--user-data-dir=\(scratch)/profile-dom", "--log-net-log=\(netLog)", "--dump-dom",
                                        URL(fileURLWithPath: file).absoluteString])
        let console = run.stderr.split(separator: "\n").filter { $0.contains(":CONSOLE") }.map(String.init)
        return Load(dom: run.stdout, consoleMessages: console, pageRequests: try pageRequests(netLog))
    }

    /// Takes a screenshot of `file` into `png` (`width` × `height` px); returns the
    /// decoded image.
    static func screenshot(_ file: String, to png: String, width: Int, height: Int, scratch: String) throws -> PNGImage {
        try? FileManager.default.removeItem(atPath: png)
        _ = try chromium(flags + ["--user-data-dir=\(scratch)/profile-shot", "--hide-scrollbars", "--screenshot=\(png)",
                                  "--window-size=\(width),\(height)", URL(fileURLWithPath: file).absoluteString])
        return try PNGImage(contentsOf: png)
    }

    /// The URLs of network requests the page started (not the browser's own).
    static func pageRequests(_ netLog: String) throws -> [String] {
        let data = try Data(contentsOf: URL(fileURLWithPath: netLog))
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let constants = root["constants"] as? [String: Any], let types = constants["logEventTypes"] as? [String: Int],
              let startJob = types["URL_REQUEST_START_JOB"], let events = root["events"] as? [[String: Any]] else {
            throw ChromiumFailed(message: "the net log \(netLog) is not what chromium writes")
        }
        return events.compactMap { e -> String? in
            guard e["type"] as? Int == startJob, let p = e["params"] as? [String: Any], let url = p["url"] as? String else { return nil }
            return (p["initiator"] as? String) == "not an origin" ? nil : url
        }
    }

    struct ChromiumFailed: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    static func chromium(_ args: [String]) throws -> (stdout: String, stderr: String) {
        guard let binary else { throw ChromiumFailed(message: "no chromium") }
        let run = try ChildProcess.run(binary, args, timeout: 300)
        let stderr = run.stderrText
        guard run.termination == .exited(0) else {
            throw ChromiumFailed(message: "chromium ended with \(run.termination): \(stderr.suffix(2000))")
        }
        return (run.stdoutText, stderr)
    }
}

/// An 8-bit RGB or RGBA PNG, decoded (zlib through our DEFLATE decoder, then the
/// scanline filters): enough to tell a blank screenshot from a drawn one.
struct PNGImage {
    let width: Int
    let height: Int
    /// RGB per pixel, row by row.
    let rgb: [UInt8]

    struct Malformed: Error {
        let why: String
    }

    init(contentsOf path: String) throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        guard bytes.count > 33, bytes[0..<8].elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else { throw Malformed(why: "no PNG signature") }
        func u32(_ i: Int) -> Int { Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3]) }
        var i = 8, idat: [UInt8] = []
        var w = 0, h = 0, depth = 0, colour = 0
        while i + 8 <= bytes.count {
            let length = u32(i), type = String(decoding: bytes[i + 4..<i + 8], as: UTF8.self)
            guard length >= 0, i + 12 + length <= bytes.count else { throw Malformed(why: "chunk past the end") }
            let body = bytes[i + 8..<i + 8 + length]
            if type == "IHDR" {
                w = u32(i + 8); h = u32(i + 12); depth = Int(bytes[i + 16]); colour = Int(bytes[i + 17])
            } else if type == "IDAT" {
                idat += body
            } else if type == "IEND" { break }
            i += 12 + length
        }
        guard depth == 8, colour == 2 || colour == 6, w > 0, h > 0, w <= 20_000, h <= 20_000, idat.count > 6 else {
            throw Malformed(why: "not an 8-bit RGB(A) PNG (depth \(depth), colour type \(colour))")
        }
        let channels = colour == 6 ? 4 : 3
        let stride = w * channels
        let decoder = DeflateDecoder(source: MemoryStream(Array(idat[2...])), name: "IDAT")
        var raw = [UInt8](repeating: 0, count: (stride + 1) * h)
        var filled = 0
        while filled < raw.count {
            let n = try raw.withUnsafeMutableBytes { try decoder.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[filled...])) }
            if n == 0 { break }
            filled += n
        }
        guard filled == raw.count else { throw Malformed(why: "image data is short: \(filled) of \(raw.count) bytes") }
        var pixels = [UInt8](repeating: 0, count: stride * h)
        for y in 0..<h {
            let filter = raw[y * (stride + 1)]
            for x in 0..<stride {
                let v = raw[y * (stride + 1) + 1 + x]
                let a = x >= channels ? Int(pixels[y * stride + x - channels]) : 0
                let b = y > 0 ? Int(pixels[(y - 1) * stride + x]) : 0
                let c = x >= channels && y > 0 ? Int(pixels[(y - 1) * stride + x - channels]) : 0
                let predicted: Int
                switch filter {
                case 0: predicted = 0
                case 1: predicted = a
                case 2: predicted = b
                case 3: predicted = (a + b) / 2
                case 4:
                    let p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c)
                    predicted = pa <= pb && pa <= pc ? a : pb <= pc ? b : c
                default: throw Malformed(why: "scanline filter \(filter)")
                }
                pixels[y * stride + x] = UInt8(truncatingIfNeeded: Int(v) + predicted)
            }
        }
        width = w
        height = h
        var out = [UInt8]()
        out.reserveCapacity(w * h * 3)
        for p in 0..<(w * h) {
            let base = p * channels
            out.append(pixels[base])
            out.append(pixels[base + 1])
            out.append(pixels[base + 2])
        }
        rgb = out
    }

    /// The pixel's colour as 0xRRGGBB.
    func colour(_ p: Int) -> Int {
        let r = Int(rgb[p * 3]), g = Int(rgb[p * 3 + 1]), b = Int(rgb[p * 3 + 2])
        return r << 16 | g << 8 | b
    }

    /// Pixels that are not (nearly) white.
    var inkedPixels: Int {
        var n = 0
        for p in 0..<(width * height) {
            let c = colour(p)
            if c >> 16 < 250 || (c >> 8) & 0xFF < 250 || c & 0xFF < 250 { n += 1 }
        }
        return n
    }

    /// Distinct colours.
    var colours: Int {
        var seen = Set<Int>()
        for p in 0..<(width * height) { seen.insert(colour(p)) }
        return seen.count
    }
}
