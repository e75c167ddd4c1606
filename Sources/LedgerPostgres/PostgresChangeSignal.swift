import Foundation
import LedgerLog
#if canImport(Glibc)
import Glibc
#endif

/// LISTEN on the store's channel: a wake-up when a transaction appended batches to the
/// ledger. Only a signal — followers read by position after it (and poll as well), so
/// a notification lost with a dropped connection delays and never loses a change.
final class PostgresChangeSignal: LogChangeSignal, @unchecked Sendable {
    private let connection: PostgresConnection
    private let ledger: String
    private let location: String

    init(connection: PostgresConnection, ledger: String, location: String) throws {
        self.connection = connection
        self.ledger = ledger
        self.location = location
        do {
            try connection.execute("LISTEN \(PostgresSchema.notifyChannel)", operation: "LISTEN")
        } catch let error as PostgresError {
            connection.close()
            throw PostgresLogFileSystem.logError(error, location: location)
        }
    }

    deinit { connection.close() }

    func waitForSignal(timeout: Double) throws -> Bool {
        let deadline = Date().addingTimeInterval(max(0, timeout))
        while true {
            let got: Bool
            do {
                got = try connection.notifications().contains { $0.payload == ledger }
            } catch let error as PostgresError {
                throw PostgresLogFileSystem.logError(error, location: location)
            }
            if got { return true }
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return false }
            var p = pollfd(fd: connection.socket(), events: Int16(POLLIN), revents: 0)
            guard p.fd >= 0 else { return false }
            _ = poll(&p, 1, Int32(min(left, 3600) * 1000) + 1)
        }
    }
}
