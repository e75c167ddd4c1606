// One import for the common case: `import HealthLedger` brings the health model
// (types, samples, units) and the ledger (`Ledger`, queries, errors) along with the
// stores, so an app needs no other import. The log layer stays behind `Ledger`.
@_exported import HealthModel
@_exported import LedgerCore
