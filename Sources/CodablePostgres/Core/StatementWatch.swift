#if Postgres
import Foundation

extension Postgres {
    /// One watcher for all the statements of a database that are waiting for the server: every
    /// quarter second, it fails those past their time limit, and those whose connection closed
    /// under them (postgres-nio can leave a statement waiting forever on a connection the server
    /// ended). One task for the database, while statements run, instead of one per statement;
    /// it ends when none is left and starts again with the next.
    final class StatementWatch: Sendable {
        /// A statement being watched.
        private struct Entry {
            let started: ContinuousClock.Instant
            let limit: Duration?
            let sql: String
            /// Whether the statement's connection is closed.
            let isLost: @Sendable () -> Bool
            /// Fails the statement's caller with `error` (the statement itself is left to finish).
            let fail: @Sendable (Postgres.Error) -> Void
            /// How many ticks in a row found the connection closed.
            var closedChecks = 0
        }

        private struct State {
            var entries: [UInt64: Entry] = [:]
            var next: UInt64 = 0
            var ticker: Task<Void, Never>?
        }

        private let state = Locked(State())
        private static let tick = Duration.milliseconds(250)

        /// Watches a statement until ``end(_:)``; returns its ticket.
        func watch(
            limit: Duration?, sql: String, isLost: @escaping @Sendable () -> Bool, fail: @escaping @Sendable (Postgres.Error) -> Void
        ) -> UInt64 {
            state.withLock { state in
                state.next += 1
                state.entries[state.next] = Entry(started: .now, limit: limit, sql: sql, isLost: isLost, fail: fail)
                // Detached: the watcher is the database's, not the priority or task-locals of the
                // statement that happened to start it.
                if state.ticker == nil { state.ticker = Task.detached(priority: .medium) { [weak self] in await self?.run() } }
                return state.next
            }
        }

        /// Stops watching a statement (answered, failed or cancelled).
        func end(_ ticket: UInt64) {
            state.withLock { _ = $0.entries.removeValue(forKey: ticket) }
        }

        private func run() async {
            while (try? await Task.sleep(for: Self.tick)) != nil {
                let now = ContinuousClock.now
                let (failures, isIdle) = state.withLock { state -> ([(Entry, Postgres.Error)], Bool) in
                    var failures: [(Entry, Postgres.Error)] = []
                    for (ticket, var entry) in state.entries {
                        let failure: Postgres.Error
                        if let limit = entry.limit, now - entry.started >= limit {
                            failure = Postgres.Error(
                                .connection, message: "the server did not answer within \(limit); the connection is lost or the server is overloaded",
                                sql: entry.sql)
                        } else if now - entry.started >= Self.tick, entry.isLost() {
                            // Twice in a row: an answer already on its way gets half a second.
                            entry.closedChecks += 1
                            state.entries[ticket] = entry
                            guard entry.closedChecks >= 2 else { continue }
                            failure = Postgres.Error(
                                .connection, message: "the connection to the server was closed before the statement's answer arrived", sql: entry.sql)
                        } else {
                            if entry.closedChecks != 0 { entry.closedChecks = 0; state.entries[ticket] = entry }
                            continue
                        }
                        state.entries[ticket] = nil
                        failures.append((entry, failure))
                    }
                    if state.entries.isEmpty { state.ticker = nil }
                    return (failures, state.entries.isEmpty)
                }
                for (entry, failure) in failures { entry.fail(failure) }
                if isIdle { return }
            }
        }

        deinit {
            state.withLock { $0.ticker?.cancel() }
        }
    }
}
#endif
