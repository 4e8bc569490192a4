#if Postgres
import Foundation
import PostgresNIO

extension Postgres {
    /// Where statements run: any connection of the pool, or a transaction's connection.
    struct Session: Sendable {
        let database: Database
        let connection: PostgresConnection?
        /// What the statements of a transaction share (`nil` on the pool).
        var transaction: TransactionState? = nil

        /// Runs `sql` and returns its rows; failures become ``Postgres/Error``.
        ///
        /// Gives up when the server has not answered within the database's statement timeout (plus
        /// a grace period, since the server enforces the same limit itself), and soon after the
        /// statement's connection is closed: postgres-nio can leave a statement waiting forever on
        /// a connection the server ended (one queued while the previous statement's ReadyForQuery
        /// was still on its way).
        func rows(_ sql: String, _ binds: PostgresBindings = PostgresBindings(), within limit: Duration? = nil) async throws -> [PostgresRow] {
            let query = PostgresQuery(unsafeSQL: sql, binds: binds)
            if database.isClosed.withLock({ $0 }) {
                throw Postgres.Error(.closed, message: "the database is closed", sql: sql)
            }
            try Task.checkCancellation()
            let database = database, client = database.client, connection = connection
            let cancel = ServerCancel(database: database)
            let running = Locked<PostgresConnection?>(connection)
            let run: @Sendable () async throws -> [PostgresRow] = {
                // The connection is held until a cancel request sent for this statement has
                // arrived, so that it can never reach the next statement on the connection.
                func run(on connection: PostgresConnection) async throws -> [PostgresRow] {
                    running.withLock { $0 = connection }
                    cancel.running(on: (try? await database.backendID(of: connection)) ?? nil)
                    do {
                        let rows = try await connection.query(query, logger: Database.logger).collect()
                        await cancel.settled()
                        return rows
                    } catch {
                        await cancel.settled()
                        throw error
                    }
                }
                if let connection { return try await run(on: connection) }
                return try await client.withConnection { try await run(on: $0) }
            }
            do {
                // A transaction's connection goes back to the pool only once every statement's
                // worker (and the cancel request it waits for) has ended.
                let transaction = transaction
                transaction?.statementStarted()
                let tracked: @Sendable () async throws -> [PostgresRow] = {
                    defer { transaction?.statementEnded() }
                    return try await run()
                }
                return try await Self.answer(
                    within: limit ?? database.statementTimeout.map { $0 + .seconds(5) }, sql: sql, watch: database.statementWatch, tracked,
                    isLost: { running.withLock { $0?.isClosed ?? false } }, onCancel: cancel.request)
            } catch {
                let failure = Postgres.Error.from(error, sql: sql, isClosed: database.isClosed.withLock { $0 })
                transaction?.failed(failure)
                throw failure
            }
        }

        /// `work`'s result, or an error once `limit` has passed, the database's ``StatementWatch``
        /// has seen `isLost` say so for a while, or the task is cancelled; then `onCancel` runs
        /// (which asks the server to cancel the statement) and `work` is left to finish on its own.
        /// (`work` runs in a task of its own so that its caller can leave: postgres-nio has no
        /// cancellation or time limit of its own for a statement.)
        private static func answer<Value: Sendable>(
            within limit: Duration?, sql: String, watch: StatementWatch, _ work: @escaping @Sendable () async throws -> Value,
            isLost: @escaping @Sendable () -> Bool, onCancel: @escaping @Sendable () -> Void
        ) async throws -> Value {
            let waiting = Locked<CheckedContinuation<Value, any Swift.Error>?>(nil)
            let ticket = Locked<UInt64?>(nil)
            defer { if let watched = ticket.withLock({ $0 }) { watch.end(watched) } }
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    waiting.withLock { $0 = continuation }
                    let watched = watch.watch(limit: limit, sql: sql, isLost: isLost) { failure in
                        waiting.withLock { $0.take() }?.resume(throwing: failure)
                    }
                    ticket.withLock { $0 = watched }
                    Task {
                        do {
                            let value = try await work()
                            waiting.withLock { $0.take() }?.resume(returning: value)
                        } catch {
                            waiting.withLock { $0.take() }?.resume(throwing: error)
                        }
                    }
                }
            } onCancel: {
                if let continuation = waiting.withLock({ $0.take() }) {
                    onCancel()
                    continuation.resume(throwing: CancellationError())
                }
            }
        }

        /// The first column of every row, as an integer (`count(*)` and the like).
        func integers(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) async throws -> [Int64] {
            try await rows(sql, binds).map { row in
                do {
                    return try row.decode(Int64.self)
                } catch {
                    throw ModelError(.unexpectedResult, Database.self, "expected an integer from \(sql): \(error)")
                }
            }
        }

        /// Runs `body` as one transaction: the caller's, when the session is a transaction's, else
        /// a transaction of its own on a connection of the pool.
        ///
        /// Every write outside a caller's transaction goes through here, because a statement run
        /// on its own is reported complete before its implicit commit (postgres-nio answers at the
        /// server's CommandComplete; the commit follows at Sync), so a connection lost in between
        /// would undo a write already reported saved. An explicit COMMIT answers only once committed.
        ///
        /// A transaction the server ends to break a deadlock (`40P01`), or as a serialization
        /// failure (`40001`), has changed nothing; it is run again, up to three times in all.
        /// (Only the library's own calls are: a caller's `inTransaction` closure is never rerun.)
        func writing<Result: Sendable>(_ body: (Session) async throws -> Result) async throws -> Result {
            if connection != nil { return try await body(self) }
            var attempt = 1
            while true {
                do {
                    return try await database.transaction(body)
                } catch let error as Postgres.Error where attempt < 3 && (error.sqlState == "40P01" || error.sqlState == "40001") {
                    attempt += 1
                    // A few milliseconds apart, at random, so that the two sides do not meet again.
                    try await Task.sleep(for: .milliseconds(Int.random(in: 5...50)))
                }
            }
        }

        /// Runs `sql` with text arguments, ignoring any rows it returns.
        /// Tells every listener at commit that `table` changed (`"e": "*"`, no ids), with the end
        /// of the transaction's notifications: for changes its rows do not show (a table's
        /// creation, a share's readers).
        func announceChange(of table: String) async throws {
            try await execute("""
                SELECT pg_notify($1, json_build_object('x', txid_current()::text, 's', current_schema(), 't', $2::text, 'e', '*')::text),
                       pg_notify($1, json_build_object('x', txid_current()::text, 't', '', 'e', '.')::text)
                """, [Postgres.Database.changesChannel, table])
        }

        func execute(_ sql: String, _ arguments: [String?]) async throws {
            _ = try await rows(sql, Self.textBindings(arguments))
        }

        /// Text arguments for `$1`, `$2`…; `nil` binds `NULL`.
        static func textBindings(_ arguments: [String?]) -> PostgresBindings {
            var binds = PostgresBindings()
            for argument in arguments {
                if let argument { binds.append(argument) } else { binds.appendNull() }
            }
            return binds
        }
    }
}
extension Postgres {
    /// What the statements of one transaction share: whether one of them failed (PostgreSQL then
    /// refuses everything until ROLLBACK, and answers COMMIT by rolling back without an error, so
    /// the library must remember it), and how many are still running on the connection — a
    /// statement whose caller stopped waiting (cancelled, timed out) may not even have been sent
    /// yet, and its cancel request may still be on its way: the connection must not be rolled back
    /// or go back to the pool before they are over.
    final class TransactionState: Sendable {
        private struct State {
            var failure: Postgres.Error?
            var running = 0
            var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]
        }

        private let state = Locked(State())

        /// The first failure since the transaction (or the savepoint being rolled back to) began.
        var failure: Postgres.Error? {
            get { state.withLock { $0.failure } }
            set { state.withLock { $0.failure = newValue } }
        }

        func failed(_ error: any Swift.Error) {
            state.withLock { state in
                if state.failure == nil {
                    state.failure = error as? Postgres.Error ?? Postgres.Error(.server, message: "\(error)")
                }
            }
        }

        func statementStarted() {
            state.withLock { $0.running += 1 }
        }

        func statementEnded() {
            let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.running -= 1
                guard state.running == 0 else { return [] }
                defer { state.waiters = [:] }
                return Array(state.waiters.values)
            }
            for waiter in waiting { waiter.resume() }
        }

        /// Whether every statement ended within `limit`, or `connection` closed (nothing more
        /// can be sent on it, and the pool drops it).
        ///
        /// Waits even when the calling task is cancelled (the usual reason to get here): a
        /// cancelled statement's worker is still waiting for the server's answer and for the
        /// cancel request sent for it, and the connection must not take a next statement (the
        /// ROLLBACK, the pool's next user) before that request has arrived.
        func settled(within limit: Duration, on connection: PostgresConnection) async -> Bool {
            if state.withLock({ $0.running == 0 }) || connection.isClosed { return true }
            return await Task { await self.waitForStatements(within: limit, on: connection) }.value
        }

        private func waitForStatements(within limit: Duration, on connection: PostgresConnection) async -> Bool {
            await withTaskGroup(of: Bool.self) { group in
                group.addTask { await self.allEnded(); return true }
                group.addTask {
                    let deadline = ContinuousClock.now + limit
                    while ContinuousClock.now < deadline {
                        if connection.isClosed { return true }
                        guard (try? await Task.sleep(for: .milliseconds(50))) != nil else { return true }
                    }
                    return false
                }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
        }

        private func allEnded() async {
            let id = UUID()
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let done = state.withLock { state -> Bool in
                        if state.running == 0 || Task.isCancelled { return true }
                        state.waiters[id] = continuation
                        return false
                    }
                    if done { continuation.resume() }
                }
            } onCancel: {
                state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
            }
        }
    }
}
#endif
