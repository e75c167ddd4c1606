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
public struct Device: Hashable, Sendable {
    public var name: String?
    public var manufacturer: String?
    public var model: String?
    public var hardwareVersion: String?
    public var firmwareVersion: String?
    public var softwareVersion: String?
    public var localIdentifier: String?
    public var udiDeviceIdentifier: String?

    public init(name: String? = nil, manufacturer: String? = nil, model: String? = nil,
                hardwareVersion: String? = nil, firmwareVersion: String? = nil, softwareVersion: String? = nil,
                localIdentifier: String? = nil, udiDeviceIdentifier: String? = nil) {
        self.name = name
        self.manufacturer = manufacturer
        self.model = model
        self.hardwareVersion = hardwareVersion
        self.firmwareVersion = firmwareVersion
        self.softwareVersion = softwareVersion
        self.localIdentifier = localIdentifier
        self.udiDeviceIdentifier = udiDeviceIdentifier
    }

    /// The fields in a fixed order (name, manufacturer, model, hardware, firmware,
    /// software, localIdentifier, udiDeviceIdentifier), for encoders.
    public var fields: [String?] {
        [name, manufacturer, model, hardwareVersion, firmwareVersion, softwareVersion, localIdentifier, udiDeviceIdentifier]
    }

    /// A device from `fields` in the order of `fields`.
    public init(fields: [String?]) {
        func at(_ i: Int) -> String? { i < fields.count ? fields[i] : nil }
        self.init(name: at(0), manufacturer: at(1), model: at(2), hardwareVersion: at(3), firmwareVersion: at(4),
                  softwareVersion: at(5), localIdentifier: at(6), udiDeviceIdentifier: at(7))
    }
}
