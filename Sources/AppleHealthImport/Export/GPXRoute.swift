import Foundation
import HealthModel

/// The track points of a GPX 1.1 file as Apple Health writes workout routes
/// (`workout-routes/route_….gpx`): `trkpt lat lon` with `ele`, `time` and, under
/// `extensions`, `speed`, `course`, `hAcc`, `vAcc`.
enum GPXRoute {
    /// Reads every track point. Throws `XMLError` for XML that is not well-formed or
    /// a point without a parsable latitude, longitude or time.
    static func locations(_ bytes: [UInt8]) throws(XMLError) -> [RouteLocation] {
        let names = ["trkpt", "lat", "lon", "ele", "time", "speed", "course", "hAcc", "vAcc"]
        // The whole file in one buffer, so element text stays readable.
        let scanner = XMLScanner(stream: MemoryStream(bytes), predefinedNames: names, bufferSize: bytes.count + 64)
        var points: [RouteLocation] = []
        var lat = 0.0, lon = 0.0
        var fields: [Int: Double] = [:]
        var time: Date?
        var inPoint = false
        while true {
            switch try scanner.next() {
            case .endOfDocument:
                return points
            case .startElement:
                if scanner.element == 0 {
                    func coordinate(_ id: Int) throws(XMLError) -> Double {
                        guard let i = scanner.attributeIndex(id), let v = scanner.withValue(i, ExportValues.number) else {
                            throw scanner.errorAtCurrentTag("a trkpt without a numeric \(names[id])")
                        }
                        return v
                    }
                    lat = try coordinate(1)
                    lon = try coordinate(2)
                    fields = [:]
                    time = nil
                    inPoint = true
                }
            case .endElement:
                let id = scanner.element
                if inPoint && id >= 3 && id <= 8, let text = scanner.textBeforeTag {
                    let bytes = Array(text.utf8)
                    if id == 4 {
                        guard let d = bytes.withUnsafeBufferPointer({ ExportValues.date($0) }) else {
                            throw scanner.errorAtCurrentTag("time '\(text)' is not a date")
                        }
                        time = Date(timeIntervalSinceReferenceDate: d.seconds)
                    } else if let v = bytes.withUnsafeBufferPointer({ ExportValues.number($0) }) {
                        fields[id] = v
                    } else {
                        throw scanner.errorAtCurrentTag("\(names[id]) '\(text)' is not a number")
                    }
                } else if id == 0 && inPoint {
                    guard let time else { throw scanner.errorAtCurrentTag("a trkpt without a time") }
                    points.append(RouteLocation(date: time, latitude: lat, longitude: lon, altitude: fields[3],
                                                horizontalAccuracy: fields[7], verticalAccuracy: fields[8],
                                                course: fields[6], speed: fields[5]))
                    inPoint = false
                }
            }
        }
    }
}
