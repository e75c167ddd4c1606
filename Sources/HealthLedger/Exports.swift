// One import for the common case: `import HealthLedger` brings the health model
// (types, samples, units) and the store API: the stores, and from LedgerCore only the
// values they take and give (queries, predicates, statistics, change sets, anchors,
// errors) and `Ledger`'s open and close. Everything else in LedgerCore — events,
// commands, the write verbs, projections, codecs, snapshots, replay — is `package`:
// this package's front ends and tools use it, a client cannot name it
// (`StoreBoundaryTests` compiles clients to prove it; `tools/count_exposed.sh` counts).
@_exported import HealthModel
@_exported import LedgerCore
