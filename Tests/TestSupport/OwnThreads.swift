import LedgerHTTP

/// Threads of the tests' own, for in-process async tests that measure time or
/// deadlines. Swift Testing runs synchronous tests (the CLI's, which wait on child
/// processes) on the shared cooperative pool — two threads on this machine — and can
/// hold both for minutes; an async test whose tasks and actors (the ledger, the
/// stores) run on that pool then sees its 100 ms become 130 s. Under `OwnThreads.run`
/// the body, its child tasks and the default actors it calls run on these threads
/// instead (a task executor preference, SE-0417), as a server's handlers do.
package enum OwnThreads {
    /// Shared by every test that asks: four threads, which idle on a condition.
    package static let executor = ServerExecutor(threads: 4)

    /// Runs `body` with `executor` as its task executor preference. An unstructured
    /// task made inside does not inherit it: make it with `Task(executorPreference:)`.
    package static func run<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await withTaskExecutorPreference(executor) { try await body() }
    }
}
