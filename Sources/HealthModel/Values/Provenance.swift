/// Where a sample came from: the app (or imported source) that saved it.
///
/// The store stamps it on every saved object; an app cannot claim another's source.
public struct Source: Hashable, Sendable {
    /// The app's bundle identifier (`com.raywenderlich.PrancerciseTracker`).
    public let bundleIdentifier: String
    /// The app's display name.
    public let name: String
    /// The app version that saved the object (HKSourceRevision.version), if known.
    public let version: String?

    public init(bundleIdentifier: String, name: String, version: String? = nil) {
        self.bundleIdentifier = bundleIdentifier
        self.name = name
        self.version = version
    }
}

/// The device that produced a sample (HKDevice). Every field is optional, as in HealthKit.
///
/// A value type whose eight fields live in one shared, copy-on-write box: samples
/// carry it by reference, so copying a sample does not copy eight strings.
public struct Device: Hashable, Sendable {
    private final class Box: Sendable {
        let fields: [String?]
        init(_ fields: [String?]) { self.fields = fields }
    }
    private var box: Box

    private func field(_ i: Int) -> String? { box.fields[i] }
    private mutating func set(_ i: Int, _ value: String?) {
        var fields = box.fields
        fields[i] = value
        box = Box(fields)
    }

    public var name: String? { get { field(0) } set { set(0, newValue) } }
    public var manufacturer: String? { get { field(1) } set { set(1, newValue) } }
    public var model: String? { get { field(2) } set { set(2, newValue) } }
    public var hardwareVersion: String? { get { field(3) } set { set(3, newValue) } }
    public var firmwareVersion: String? { get { field(4) } set { set(4, newValue) } }
    public var softwareVersion: String? { get { field(5) } set { set(5, newValue) } }
    public var localIdentifier: String? { get { field(6) } set { set(6, newValue) } }
    public var udiDeviceIdentifier: String? { get { field(7) } set { set(7, newValue) } }

    public init(name: String? = nil, manufacturer: String? = nil, model: String? = nil,
                hardwareVersion: String? = nil, firmwareVersion: String? = nil, softwareVersion: String? = nil,
                localIdentifier: String? = nil, udiDeviceIdentifier: String? = nil) {
        box = Box([name, manufacturer, model, hardwareVersion, firmwareVersion, softwareVersion, localIdentifier,
                   udiDeviceIdentifier])
    }

    /// The fields in a fixed order (name, manufacturer, model, hardware, firmware,
    /// software, localIdentifier, udiDeviceIdentifier), for encoders.
    public var fields: [String?] { box.fields }

    /// A device from `fields` in the order of `fields`.
    public init(fields: [String?]) {
        box = Box((0..<8).map { $0 < fields.count ? fields[$0] : nil })
    }

    public static func == (a: Device, b: Device) -> Bool { a.box === b.box || a.box.fields == b.box.fields }
    public func hash(into hasher: inout Hasher) { hasher.combine(box.fields) }
}
