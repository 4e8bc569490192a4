#if Postgres
import Foundation
import PostgresNIO

extension Postgres {
    /// Cancels one statement on the server when its task is cancelled.
    ///
    /// A cancelled task stops waiting at once; the statement itself is stopped by
    /// `pg_cancel_backend` for the backend running it, sent on a connection of its own (the pool
    /// may be full of busy connections). The statement's connection is held until that request
    /// has been answered, so that it can never reach a later statement on the same connection: a
    /// request arriving once the statement is over finds the backend idle, and the server ignores
    /// it. The statement then fails on the server (`57014`), its transaction is rolled back, and
    /// the connection goes back to the pool ready for the next one.
    final class ServerCancel: Sendable {
        private struct State {
            var backendID: Int32?
            var isRequested = false
            var request: Task<Void, Never>?
            /// The statement is over: a cancellation that comes now must not send a request,
            /// which nobody would wait for and which could reach the connection's next statement.
            var isOver = false
        }

        private let database: Database
        private let state = Locked(State())

        init(database: Database) {
            self.database = database
        }

        /// The statement started on the backend with this process id.
        func running(on backendID: Int32?) {
            state.withLock { state in
                state.backendID = backendID
                if state.isRequested { startLocked(&state) }
            }
        }

        /// The task was cancelled: ask the server to cancel the statement (now, or as soon as it runs).
        func request() {
            state.withLock { state in
                state.isRequested = true
                startLocked(&state)
            }
        }

        /// Returns once a cancel request sent for the statement has been answered; from now on a
        /// cancellation sends none (the statement is over).
        func settled() async {
            let request = state.withLock { state -> Task<Void, Never>? in
                state.isOver = true
                return state.request
            }
            await request?.value
        }

        private func startLocked(_ state: inout State) {
            guard state.request == nil, !state.isOver, let backendID = state.backendID else { return }
            let database = database
            state.request = Task { await database.cancelStatement(onBackend: backendID) }
        }
    }
}

extension Postgres.Database {
    /// The backend process id of a pool connection, asked once per connection.
    func backendID(of connection: PostgresConnection) async throws -> Int32? {
        if let known = backendIDs.withLock({ $0[connection.id] }) { return known }
        let rows = try await connection.query("SELECT pg_backend_pid()", logger: Self.logger).collect()
        guard let id = try rows.first?.decode(Int32.self) else { return nil }
        backendIDs.withLock { $0[connection.id] = id }
        return id
    }

    /// Sends `pg_cancel_backend` for `backendID` on a connection of its own. Failures are ignored:
    /// the statement then ends at `statementTimeout`, as before.
    func cancelStatement(onBackend backendID: Int32) async {
        guard let connection = try? await PostgresConnection.connect(
            configuration: try address.connectionConfiguration, id: -1, logger: Self.logger)
        else { return }
        _ = try? await connection.query("SELECT pg_cancel_backend(\(backendID))", logger: Self.logger).collect()
        try? await connection.close()
    }
}
#endif
