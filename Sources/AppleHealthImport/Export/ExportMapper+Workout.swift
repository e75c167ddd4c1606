import Foundation
import HealthModel
import LedgerCore

extension ExportMapper {
    // MARK: Workout

    func workout() throws(ImportError) -> MappedWorkout {
        let mark = pendingChildren.count
        var activityName = "", durationValue: Double?, durationUnit: String?
        var distance: Double?, distanceUnit: String?, energy: Double?, energyUnit: String?
        var source = 0, sourceVersion = -1, device: Device?
        var start: (Date, Int)?, end: (Date, Int)?, creation: (Date, Int)?
        for i in 0..<scanner.attributeCount {
            switch ExportName(rawValue: scanner.attributeName(i)) {
            case .workoutActivityType?: activityName = internedString(i)
            case .duration?: durationValue = try number(i, "duration")
            case .durationUnit?: durationUnit = internedString(i)
            case .totalDistance?: distance = try number(i, "totalDistance")
            case .totalDistanceUnit?: distanceUnit = internedString(i)
            case .totalEnergyBurned?: energy = try number(i, "totalEnergyBurned")
            case .totalEnergyBurnedUnit?: energyUnit = internedString(i)
            case .sourceName?: source = self.source(i)
            case .sourceVersion?: sourceVersion = version(i)
            case .device?: device = deviceInfos[scanner.withValue(i) { devices.value($0) { newDevice($0) } }].device
            case .startDate?: start = try date(i, "startDate")
            case .endDate?: end = try date(i, "endDate")
            case .creationDate?: creation = try date(i, "creationDate")
            default: unknownAttributes["Workout@\(scanner.name(scanner.attributeName(i)))", default: 0] += 1
            }
        }
        if scanner.attributeIndex(ExportName.sourceName.id) == nil { source = sourceFor("") }
        guard let start else { throw invalid("a Workout without a startDate") }
        let end_ = end ?? start
        var metadata = Metadata()
        var events: [WorkoutEvent] = []
        var statistics: [WorkoutStatistic] = []
        var routes: [WorkoutRoute] = []
        var routePoints = 0
        let depth = scanner.depth
        loop: while true {
            switch try nextToken() {
            case .endElement where scanner.depth == depth - 1: break loop
            case .endElement: continue
            case .endOfDocument: throw invalid("the document ends inside a Workout")
            case .startElement:
                switch ExportName(rawValue: scanner.element) {
                case .MetadataEntry? where scanner.depth == depth + 1:
                    let entry = try metadataEntry()
                    metadata.append(entry.key, entry.value)
                case .WorkoutEvent? where scanner.depth == depth + 1:
                    events.append(try workoutEvent())
                case .WorkoutStatistics? where scanner.depth == depth + 1:
                    statistics.append(try workoutStatistic())
                case .WorkoutRoute? where scanner.depth == depth + 1:
                    let route = try workoutRoute()
                    routePoints += route.locations.count
                    routes.append(route)
                default:
                    try keepChild(below: depth)
                }
            }
        }
        let uuid = identity.uuid(.workout)
        try attachPendingChildren(from: mark, to: "Workout", [MetadataEntry(key: "uuid", value: .string(uuid.uuidString))])
        let src = sourceValue(source, sourceVersion)
        let offsets = WrittenOffsets(start: start.1, end: end_.1, creation: creation?.1)
        do {
            let activity = try WorkoutActivityType(name: activityName)
            func seconds(_ v: Double?, _ unit: String?) throws -> Double? {
                guard let v else { return nil }
                return try Quantity(v, unit: unit ?? "min").doubleValue(for: .second)
            }
            let common = try SampleCommon(uuid: uuid, startDate: start.0, endDate: end_.0, metadata: metadata, device: device,
                                          source: src, creationDate: creation?.0, writtenOffsets: offsets, field: "workout")
            let w = try Workout(activityType: activity,
                                duration: try seconds(durationValue, durationUnit) ?? end_.0.timeIntervalSince(start.0),
                                totalEnergyBurned: try energy.map { try Quantity($0, unit: energyUnit ?? "kcal") },
                                totalDistance: try distance.map { try Quantity($0, unit: distanceUnit ?? "km") },
                                events: events, statistics: statistics, routes: routes, common: common)
            return MappedWorkout(sample: .workout(w), source: source, rawReason: nil, events: events.count,
                                 statistics: statistics.count, routes: routes.count, routePoints: routePoints)
        } catch {
            // Kept raw: the activity type and duration as written, the reason.
            let reason = "\(error)"
            // Its metadata is kept or the import refused (never dropped).
            let safeEnd = end_.0 >= start.0 ? end_ : start
            let common: SampleCommon
            do {
                common = try SampleCommon(uuid: uuid, startDate: start.0, endDate: safeEnd.0, metadata: metadata, device: device,
                                          source: src, creationDate: creation?.0,
                                          writtenOffsets: WrittenOffsets(start: start.1, end: safeEnd.1, creation: creation?.1))
            } catch {
                throw invalid("a Workout that cannot be kept even raw: \(error)")
            }
            let raw = UnrecognizedSample(typeIdentifier: ObjectType.workoutIdentifier, value: activityName,
                                         unit: durationValue.map { "\(Quantity.format($0)) \(durationUnit ?? "")" },
                                         reason: reason, common: common)
            return MappedWorkout(sample: .unrecognized(raw), source: source, rawReason: reason, events: events.count,
                                 statistics: statistics.count, routes: routes.count, routePoints: routePoints)
        }
    }

    func workoutEvent() throws(ImportError) -> WorkoutEvent {
        let kindName = text(.type) ?? ""
        guard let d = scanner.attributeIndex(ExportName.date.id) else { throw invalid("a WorkoutEvent without a date") }
        let date = try self.date(d, "date").0
        let duration = try optionalNumber(.duration)
        let unit = text(.durationUnit) ?? "min"
        var metadata = Metadata()
        let depth = scanner.depth
        while true {
            let token = try nextToken()
            if token == .endElement && scanner.depth == depth - 1 { break }
            if token == .startElement {
                if scanner.element == ExportName.MetadataEntry.id {
                    let entry = try metadataEntry()
                    metadata.append(entry.key, entry.value)
                } else {
                    try keepChild(below: depth - 1)  // under the Workout
                }
            }
        }
        do {
            let seconds = try duration.map { try Quantity($0, unit: unit).doubleValue(for: .second) } ?? 0
            return try WorkoutEvent(kind: try WorkoutEvent.Kind(name: kindName), date: date, duration: seconds, metadata: metadata)
        } catch {
            throw invalid("WorkoutEvent: \(error)")
        }
    }

    func workoutStatistic() throws(ImportError) -> WorkoutStatistic {
        let type = TypeIdentifier(parsing: text(.type) ?? "")
        let start = try scanner.attributeIndex(ExportName.startDate.id).map { i throws(ImportError) in try date(i, "startDate").0 }
        let end = try scanner.attributeIndex(ExportName.endDate.id).map { i throws(ImportError) in try date(i, "endDate").0 }
        let statistic = WorkoutStatistic(type: type, startDate: start ?? .distantPast, endDate: end ?? start ?? .distantPast,
                                         average: try optionalNumber(.average), minimum: try optionalNumber(.minimum),
                                         maximum: try optionalNumber(.maximum), sum: try optionalNumber(.sum), unit: text(.unit))
        try keepChildrenToEnd(below: scanner.depth - 1)  // under the Workout
        return statistic
    }

    func workoutRoute() throws(ImportError) -> WorkoutRoute {
        let sourceName = text(.sourceName), sourceVersion = text(.sourceVersion)
        let creation = try scanner.attributeIndex(ExportName.creationDate.id).map { i throws(ImportError) in try date(i, "creationDate").0 }
        let start = try scanner.attributeIndex(ExportName.startDate.id).map { i throws(ImportError) in try date(i, "startDate").0 }
        let end = try scanner.attributeIndex(ExportName.endDate.id).map { i throws(ImportError) in try date(i, "endDate").0 }
        var metadata = Metadata()
        var file: String?
        var locations: [RouteLocation] = []
        let depth = scanner.depth
        while true {
            let token = try nextToken()
            if token == .endElement && scanner.depth == depth - 1 { break }
            guard token == .startElement else { continue }
            switch ExportName(rawValue: scanner.element) {
            case .MetadataEntry?:
                let entry = try metadataEntry()
                metadata.append(entry.key, entry.value)
            case .FileReference?:
                file = text(.path)
            case .Location?:
                guard let d = scanner.attributeIndex(ExportName.date.id),
                      let lat = try optionalNumber(.latitude), let lon = try optionalNumber(.longitude) else {
                    throw invalid("a Location without date, latitude or longitude")
                }
                locations.append(RouteLocation(date: try date(d, "date").0, latitude: lat, longitude: lon,
                                               altitude: try optionalNumber(.altitude),
                                               horizontalAccuracy: try optionalNumber(.horizontalAccuracy),
                                               verticalAccuracy: try optionalNumber(.verticalAccuracy),
                                               course: try optionalNumber(.course), speed: try optionalNumber(.speed)))
            default:
                try keepChild(below: depth - 1)  // under the Workout
            }
        }
        if let file, locations.isEmpty {
            do {
                if let points = try routeFile(file) { locations = points } else { missingRouteFiles.append(file) }
            } catch let e as ImportError {
                throw e
            } catch {
                throw invalid("route \(file): \(error)")
            }
        }
        return WorkoutRoute(sourceName: sourceName, sourceVersion: sourceVersion, creationDate: creation, startDate: start,
                            endDate: end, fileReference: file, locations: locations, metadata: metadata)
    }
}
