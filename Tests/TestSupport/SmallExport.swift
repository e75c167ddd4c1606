import Foundation

/// A small Apple Health export written by hand to hold one of everything the
/// importer maps (Me, an exact repeat, HRV beats with a device, a correlation whose
/// members repeat top-level Records, an unknown type, a Record without a value, a
/// workout with events, an activity summary). Its expected import is worked out by
/// hand in the tests that use it.
package enum SmallExport {
    package static let xml = """
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE HealthData [
<!-- HealthKit Export Version: 11 -->
<!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary|ClinicalRecord)*)>
]>
<HealthData locale="en_US">
 <ExportDate value="2019-06-17 21:07:11 -0400"/>
 <Me HKCharacteristicTypeIdentifierDateOfBirth="1985-03-14" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexMale" HKCharacteristicTypeIdentifierBloodType="HKBloodTypeONegative" HKCharacteristicTypeIdentifierFitzpatrickSkinType="HKFitzpatrickSkinTypeNotSet" HKCharacteristicTypeIdentifierCardioFitnessMedicationsUse="None"/>
 <Record type="HKQuantityTypeIdentifierBodyMass" sourceName="Health" sourceVersion="12.3" unit="lb" creationDate="2019-05-01 08:00:00 -0400" startDate="2019-05-01 07:59:00 -0400" endDate="2019-05-01 07:59:00 -0400" value="165.4">
  <MetadataEntry key="HKWasUserEntered" value="1"/>
 </Record>
 <Record type="HKQuantityTypeIdentifierBodyMass" sourceName="Health" sourceVersion="12.3" unit="lb" creationDate="2019-05-01 08:00:00 -0400" startDate="2019-05-01 07:59:00 -0400" endDate="2019-05-01 07:59:00 -0400" value="165.4">
  <MetadataEntry key="HKWasUserEntered" value="1"/>
 </Record>
 <Record type="HKQuantityTypeIdentifierHeartRateVariabilitySDNN" sourceName="Apple Watch de Ana" sourceVersion="5.2.1" device="&lt;&lt;HKDevice: 0x283f5c6e0&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch3,2, software:5.2.1&gt;" unit="ms" creationDate="2019-05-02 21:08:13 +0200" startDate="2019-05-02 21:07:11 +0200" endDate="2019-05-02 21:08:12 +0200" value="48.2">
  <HeartRateVariabilityMetadataList>
   <InstantaneousBeatsPerMinute bpm="62" time="9:07:11.42 PM"/>
   <InstantaneousBeatsPerMinute bpm="64" time="9:07:12.38 PM"/>
  </HeartRateVariabilityMetadataList>
 </Record>
 <Record type="HKQuantityTypeIdentifierBloodPressureSystolic" sourceName="Omron" unit="mmHg" creationDate="2019-05-03 07:00:00 -0400" startDate="2019-05-03 07:00:00 -0400" endDate="2019-05-03 07:00:00 -0400" value="120"/>
 <Record type="HKQuantityTypeIdentifierBloodPressureDiastolic" sourceName="Omron" unit="mmHg" creationDate="2019-05-03 07:00:00 -0400" startDate="2019-05-03 07:00:00 -0400" endDate="2019-05-03 07:00:00 -0400" value="80"/>
 <Record type="HKQuantityTypeIdentifierFutureThing" sourceName="Omron" unit="count" creationDate="2019-05-03 07:00:00 -0400" startDate="2019-05-03 07:00:00 -0400" endDate="2019-05-03 07:00:00 -0400" value="3"/>
 <Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="Health" sourceVersion="12.3" creationDate="2019-05-04 07:00:00 -0400" startDate="2019-05-03 23:30:00 -0400" endDate="2019-05-04 06:45:00 -0400" value="HKCategoryValueSleepAnalysisAsleepCore"/>
 <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Health" sourceVersion="12.3" unit="count" creationDate="2019-05-04 07:00:00 -0400" startDate="2019-05-04 06:00:00 -0400" endDate="2019-05-04 07:00:00 -0400"/>
 <Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Omron" creationDate="2019-05-03 07:00:00 -0400" startDate="2019-05-03 07:00:00 -0400" endDate="2019-05-03 07:00:00 -0400">
  <MetadataEntry key="HKWeatherTemperature" value="56 degF"/>
  <Record type="HKQuantityTypeIdentifierBloodPressureSystolic" sourceName="Omron" unit="mmHg" creationDate="2019-05-03 07:00:00 -0400" startDate="2019-05-03 07:00:00 -0400" endDate="2019-05-03 07:00:00 -0400" value="120"/>
  <Record type="HKQuantityTypeIdentifierBloodPressureDiastolic" sourceName="Omron" unit="mmHg" creationDate="2019-05-03 07:00:00 -0400" startDate="2019-05-03 07:00:00 -0400" endDate="2019-05-03 07:00:00 -0400" value="80"/>
 </Correlation>
 <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="30.5" durationUnit="min" totalDistance="5.1" totalDistanceUnit="km" totalEnergyBurned="310" totalEnergyBurnedUnit="kcal" sourceName="Apple Watch de Ana" sourceVersion="5.2.1" creationDate="2019-05-05 08:31:00 +0200" startDate="2019-05-05 08:00:00 +0200" endDate="2019-05-05 08:30:30 +0200">
  <MetadataEntry key="HKIndoorWorkout" value="0"/>
  <WorkoutEvent type="HKWorkoutEventTypePause" date="2019-05-05 08:10:00 +0200" duration="0" durationUnit="min"/>
  <WorkoutEvent type="HKWorkoutEventTypeResume" date="2019-05-05 08:12:00 +0200" duration="0" durationUnit="min"/>
 </Workout>
 <ActivitySummary dateComponents="2019-05-05" activeEnergyBurned="420.5" activeEnergyBurnedGoal="500" activeEnergyBurnedUnit="kcal" appleMoveTime="0" appleMoveTimeGoal="0" appleExerciseTime="32" appleExerciseTimeGoal="30" appleStandHours="11" appleStandHoursGoal="12"/>
</HealthData>
"""

    /// Writes `xml` (or a variant of it) as `name` in `folder`, creating the folder.
    @discardableResult
    package static func write(_ text: String = xml, named name: String = "export.xml", in folder: String) throws -> String {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Line `n` (1-based) of `xml`.
    package static func line(_ n: Int) -> String {
        String(xml.split(separator: "\n", omittingEmptySubsequences: false)[n - 1])
    }
}
