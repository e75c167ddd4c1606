import HealthModel

/// A value as a FHIR Quantity writes it: the number, the unit people read, and the
/// UCUM code when the unit has one (then `system` is UCUM's).
package struct FHIRQuantity: Sendable, Equatable {
    /// The number, in `unit`.
    package let value: Double
    /// The unit as people read it (the UCUM code when there is one).
    package let unit: String
    /// The UCUM code, nil when the unit has none (then no `system` is written).
    package let ucum: String?
}

/// HealthKit units as UCUM writes them, and the conversion of a sample's value to the
/// unit its type is exported in (DESIGN.md, "FHIR export").
package enum FHIRUnits {
    /// UCUM codes of the HealthKit unit spellings values are exported in: every
    /// canonical unit of a quantity type and every unit of `FHIRCodeTable`. A unit
    /// missing here is written as its HealthKit spelling, without a UCUM code.
    package static let ucumCodes: [String: String] = [
        "%": "%", "IU": "[iU]", "L": "L", "L/min": "L/min", "S": "S", "W": "W", "cm": "cm", "count": "{count}",
        "count/min": "/min", "count/s": "/s", "dBASPL": "dB[SPL]", "degC": "Cel", "g": "g", "kcal": "kcal",
        "kcal/(kg*hr)": "kcal/(kg.h)", "kg": "kg", "m": "m", "m/s": "m/s", "mL": "mL", "mg/dL": "mg/dL", "min": "min",
        "ml/(kg*min)": "mL/(kg.min)", "mL/(kg*min)": "mL/(kg.min)", "mmHg": "mm[Hg]", "ms": "ms", "s": "s",
    ]

    /// The unit `type`'s values are exported in: its `FHIRCodeTable` unit, else its
    /// canonical unit.
    package static func exportUnit(of type: QuantityType) -> HealthUnit {
        if let spelling = FHIRCodeTable.entry(type.identifier)?.unit, let unit = try? HealthUnit(spelling, cached: true) {
            return unit
        }
        return type.canonicalUnit
    }

    /// `quantity` of `type` as exported: converted to `exportUnit(of:)` with the model's
    /// conversion; a percentage (HealthKit's `%` holds a fraction, 0.97 for 97 %)
    /// written as UCUM's `%`, 0…100. The UCUM code is the table's for a type in
    /// `FHIRCodeTable` (`{steps}`, `kg/m2`), else `ucumCodes`'s. A quantity that does
    /// not convert (no model value does) is written in its own unit.
    package static func quantity(_ quantity: Quantity, of type: QuantityType) -> FHIRQuantity {
        let target = exportUnit(of: type)
        guard let converted = try? quantity.doubleValue(for: target) else {
            return FHIRQuantity(value: quantity.value, unit: quantity.unit.spelling, ucum: ucumCodes[quantity.unit.spelling])
        }
        let value = target.spelling == "%" ? converted * 100 : converted
        let ucum = FHIRCodeTable.entry(type.identifier)?.ucum ?? ucumCodes[target.spelling]
        return FHIRQuantity(value: value, unit: ucum ?? target.spelling, ucum: ucum)
    }

    /// A quantity in a unit named by spelling (a workout's totals: `kcal`, `m`).
    package static func quantity(_ quantity: Quantity, in spelling: String) -> FHIRQuantity {
        guard let unit = try? HealthUnit(spelling, cached: true), let value = try? quantity.doubleValue(for: unit) else {
            return FHIRQuantity(value: quantity.value, unit: quantity.unit.spelling, ucum: ucumCodes[quantity.unit.spelling])
        }
        return FHIRQuantity(value: value, unit: ucumCodes[spelling] ?? spelling, ucum: ucumCodes[spelling])
    }
}
