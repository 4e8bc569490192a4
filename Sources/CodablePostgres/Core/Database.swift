#if Postgres
import Foundation
import Logging
import PostgresNIO

extension Postgres {
    /// A PostgreSQL database: a pool of connections to one server, and the model API on it.
    ///
    /// ```swift
    /// let db = try await Postgres.Database(url: "postgres://app:secret@127.0.0.1:5432/app")
    /// try await db.save(person)
    /// let n = try await db.count(with: Filter(\Person.age, is: .between(15, and: 35)))
    /// await db.close()
    /// ```
    ///
    /// Opening checks the address and the credentials with a first connection, so a wrong host or
    /// password throws here (``Postgres/Error/Code/connection``,
    /// ``Postgres/Error/Code/authentication``) rather than at the first query. Connections are
    /// opened on demand up to `maximumConnections`; a dropped connection fails the statement that
    /// was using it and is replaced for the next one. Every call is `async` and suspends, never
    /// blocking a thread of Swift's cooperative pool; a cancelled call stops waiting at once and its
    /// statement is cancelled on the server (a write rolls back).
    ///
    /// Sendable: yes; share one `Database` across an app.
    public final class Database: Sendable {
        let client: PostgresClient
        private let runner: Task<Void, Never>
        /// The one watcher of the statements waiting for the server (time limits, lost connections).
        let statementWatch = StatementWatch()
        /// The channel of change notifications: the observed tables' triggers, and the creation of
        /// a model's table (so that observers of a table that did not exist start following it).
        static let changesChannel = "codablepostgres_changes"
        /// What the layers above keep per database (Models' tables, Observation's listener), by
        /// type, made on first use: see ``attachment(_:make:)``.
        private let attachments = Locked<[ObjectIdentifier: any Sendable]>([:])
        /// What ``close()`` and `deinit` run (the layers above stop what they started).
        private let closeHandlers = Locked<[@Sendable () -> Void]>([])
        /// Whether ``close()`` was called.
        let isClosed = Locked(false)
        /// How long a statement may run before the server cancels it (`nil`: no limit).
        public let statementTimeout: Duration?
        /// `host:port/database`, for messages.
        public let location: String
        /// Where the server is, for the connections that send cancel requests.
        let address: Address
        /// Each pool connection's backend process id, learned on its first statement (see
        /// ``ServerCancel``).
        let backendIDs = Locked<[PostgresConnection.ID: Int32]>([:])
        /// The session parameters every connection of the pool starts with (no JIT, the statement timeout).
        let startupParameters: [(String, String)]
        /// The id of the next connection opened outside the pool (negative: the pool's count up
        /// from 0), so that ``backendIDs`` never mixes two connections up.
        private let nextOwnConnectionID = Locked(-10)

        /// Connects to the database a `postgres://` (or `postgresql://`) URL names:
        /// `postgres://user:password@host:port/database?sslmode=disable`.
        ///
        /// `sslmode` is `disable` (plain TCP), `prefer` (the default: TLS when the server offers it)
        /// or `require`. User names and passwords are percent-decoded.
        ///
        /// The server cancels a statement that runs longer than `statementTimeout` (its
        /// `statement_timeout`); a statement that gets no answer at all a few seconds after that
        /// (a connection lost without notice) throws ``Postgres/Error/Code/connection``.
        ///
        /// ```swift
        /// let db = try await Postgres.Database(url: "postgres://app:secret@127.0.0.1:5432/app")
        /// ```
        public init(url: String, maximumConnections: Int = 20, statementTimeout: Duration? = .seconds(60)) async throws {
            let address = try Address(url: url)
            self.address = address
            self.statementTimeout = statementTimeout
            guard maximumConnections >= 2 else {
                throw Postgres.Error(.invalidArgument, message: "maximumConnections must be 2 or more (one for schema changes while a transaction holds another)")
            }
            location = "\(address.host):\(address.port)/\(address.database)"
            // One connection first, so that an unreachable server or a wrong password fails here
            // with its reason (the pool would keep retrying for a minute).
            let timeout = statementTimeout.map { "\(max(1, $0.components.seconds * 1_000 + $0.components.attoseconds / 1_000_000_000_000_000))" }
            // No JIT compilation: it pays off for long analytic queries, while the model API's
            // statements are short; a graph read of a few thousand rows spent 330 ms compiling and
            // 90 ms running. (SQL of your own can `SET LOCAL jit = on` in a transaction.)
            let parameters = [("jit", "off")] + (timeout.map { [("statement_timeout", $0)] } ?? [])
            startupParameters = parameters
            do {
                var check = try address.connectionConfiguration
                check.options.additionalStartupParameters = parameters
                let connection = try await PostgresConnection.connect(configuration: check, id: 0, logger: Self.logger)
                try await connection.close()
            } catch {
                throw Postgres.Error.from(error, sql: nil, isClosed: false)
            }
            var configuration = address.clientConfiguration
            configuration.options.maximumConnections = maximumConnections
            configuration.options.connectTimeout = .seconds(10)
            configuration.options.additionalStartupParameters = parameters
            let client = PostgresClient(configuration: configuration, backgroundLogger: Self.logger)
            self.client = client
            runner = Task { await client.run() }
        }

        deinit {
            for handler in closeHandlers.withLock({ $0 }) { handler() }
            runner.cancel()
        }

        /// Closes every connection; later calls throw ``Postgres/Error/Code/closed``.
        public func close() async {
            let handlers = closeHandlers.withLock { handlers in
                isClosed.withLock { $0 = true }
                defer { handlers = [] }
                return handlers
            }
            for handler in handlers { handler() }
            runner.cancel()
            await runner.value
        }

        /// The value of type `T` the layers above keep for this database, made by `make` on first
        /// use (the layer below keeps it without knowing it, as SQLite's Core does).
        func attachment<T: Sendable>(_ type: T.Type, make: (Database) -> T) -> T {
            let key = ObjectIdentifier(T.self)
            if let found = attachments.withLock({ $0[key] }) as? T { return found }
            let made = make(self)
            return attachments.withLock { values in
                if let found = values[key] as? T { return found }
                values[key] = made
                return made
            }
        }

        /// Runs `handler` when the database closes (or at once when it is closed).
        func onClose(_ handler: @escaping @Sendable () -> Void) {
            // Under the handlers' lock, which close() holds while it marks the database closed.
            let closed = closeHandlers.withLock { handlers in
                if isClosed.withLock({ $0 }) { return true }
                handlers.append(handler)
                return false
            }
            if closed { handler() }
        }

        static let logger = Logger(label: "CodablePostgres", factory: { _ in SwiftLogNoOpLogHandler() })

        /// Runs `body` in one transaction: committed when it returns, rolled back when it throws
        /// (or its task is cancelled). A statement that failed in it, even one whose error `body`
        /// caught, aborted the transaction on the server: then it is rolled back and this throws
        /// (SQLSTATE `25P02`). Run a statement that may fail in a savepoint
        /// (`try? await tx.inTransaction { inner in … }`) to go on after it.
        ///
        /// Every call the body's task (and its child tasks) makes on this database joins the
        /// transaction, as on `SQLite.Database`: `db.save(x)` inside the body is `tx.save(x)`, and
        /// a nested `db.inTransaction` is a savepoint. Calls on another `Database` object, and
        /// tasks created with `Task.detached`, do not join it.
        ///
        /// ```swift
        /// try await db.inTransaction { tx in
        ///     try await tx.save(a)
        ///     try await db.save(b)   // the same transaction
        /// }
        /// ```
        @discardableResult
        public func inTransaction<Result: Sendable>(_ body: (Transaction) async throws -> Result) async throws -> Result {
            if let joined = joinedTransaction { return try await Transaction(session: joined).inTransaction(body) }
            return try await transaction { session in
                let scope = TransactionScope(database: ObjectIdentifier(self), session: session)
                defer { scope.isOpen.withLock { $0 = false } }
                return try await TransactionScope.$current.withValue(scope) { try await body(Transaction(session: session)) }
            }
        }

        /// The transaction this task's `inTransaction` body runs on this database, while it runs.
        private var joinedTransaction: Session? {
            guard let scope = TransactionScope.current, scope.database == ObjectIdentifier(self), scope.isOpen.withLock({ $0 }) else {
                return nil
            }
            return scope.session
        }

        /// Runs `body` in a transaction on a connection of the pool.
        ///
        /// BEGIN, COMMIT and ROLLBACK are statements of their own, each with ``Session/rows(_:_:within:)``'s
        /// time limit, so that a connection the server ends mid-transaction fails the call with
        /// ``Postgres/Error/Code/connection`` instead of leaving it waiting. COMMIT and ROLLBACK run
        /// whatever the task's cancellation: a cancelled caller still learns whether its
        /// transaction committed, and a connection never goes back to the pool inside a
        /// transaction (one whose ROLLBACK gets no answer is closed, which ends the transaction
        /// on the server).
        func transaction<Result: Sendable>(_ body: (Session) async throws -> Result) async throws -> Result {
            if isClosed.withLock({ $0 }) { throw Postgres.Error(.closed, message: "the database is closed") }
            // The body's own errors come back in the result; what the pool throws is mapped.
            let outcome: Swift.Result<Result, any Swift.Error>
            do {
                outcome = try await client.withConnection { connection in
                    let state = TransactionState()
                    let session = Session(database: self, connection: connection, transaction: state)
                    let ended: Swift.Result<Result, any Swift.Error>
                    do {
                        try await session.execute("BEGIN", [])
                        let result = try await body(session)
                        if let failure = state.failure {
                            // PostgreSQL would answer COMMIT by rolling back, without an error.
                            throw Postgres.Error(.server, sqlState: "25P02", message: """
                                the transaction was rolled back: a statement in it failed (\(failure)), and PostgreSQL \
                                refuses the rest of a transaction after a failure. To go on after an error, make the \
                                statement that may fail a savepoint: try? await tx.inTransaction { inner in … }
                                """, sql: "COMMIT")
                        }
                        // Not cancellable: once COMMIT is sent, only its answer says what happened.
                        try await Task { _ = try await session.rows("COMMIT") }.value
                        ended = .success(result)
                    } catch {
                        // Statements whose callers stopped waiting end first (or the connection
                        // is closed, which ends the transaction on the server).
                        if await state.settled(within: .seconds(10), on: connection) {
                            await Self.rollBack(session)
                        } else {
                            try? await connection.close()
                        }
                        ended = .failure(error)
                    }
                    if await !state.settled(within: .seconds(10), on: connection) { try? await connection.close() }
                    return ended
                }
            } catch {
                throw Postgres.Error.from(error, sql: nil, isClosed: isClosed.withLock { $0 })
            }
            return try outcome.get()
        }

        /// Ends a failed transaction: ROLLBACK, or closing the connection when that gets no answer
        /// (the server rolls back a transaction whose connection ends).
        private static func rollBack(_ session: Session) async {
            guard let connection = session.connection, !connection.isClosed else { return }
            let rolledBack = await Task { (try? await session.rows("ROLLBACK", within: .seconds(10))) != nil }.value
            if !rolledBack { try? await connection.close() }
        }

        /// Runs `body` in a transaction on a connection of its own, opened for it and closed
        /// after: never one of the pool's, which callers' transactions may all hold (preparing a
        /// table for a save inside a transaction would otherwise wait for a second connection of
        /// the pool, and several such transactions at once would wait for each other forever).
        func transactionOnOwnConnection<Result: Sendable>(_ body: (Session) async throws -> Result) async throws -> Result {
            if isClosed.withLock({ $0 }) { throw Postgres.Error(.closed, message: "the database is closed") }
            let id = nextOwnConnectionID.withLock { id in
                defer { id -= 1 }
                return id
            }
            let connection: PostgresConnection
            do {
                var configuration = try address.connectionConfiguration
                configuration.options.additionalStartupParameters = startupParameters
                connection = try await PostgresConnection.connect(configuration: configuration, id: id, logger: Self.logger)
            } catch {
                throw Postgres.Error.from(error, sql: nil, isClosed: isClosed.withLock { $0 })
            }
            defer { backendIDs.withLock { _ = $0.removeValue(forKey: id) } }
            let session = Session(database: self, connection: connection)
            do {
                try await session.execute("BEGIN", [])
                let result = try await body(session)
                try await session.execute("COMMIT", [])
                try? await connection.close()
                return result
            } catch {
                // Closing the connection ends the transaction: the server rolls it back.
                try? await connection.close()
                throw error
            }
        }

        /// Statements on any connection of the pool, or in the transaction this task's
        /// ``inTransaction(_:)`` body runs.
        var session: Session { joinedTransaction ?? Session(database: self, connection: nil) }
    }

    /// The transaction an ``Database/inTransaction(_:)`` body runs: the calls its task (and the
    /// task's child tasks) make on the same database run in it, until the body returns (a task
    /// the body created that outlives it is back on the pool).
    struct TransactionScope: Sendable {
        let database: ObjectIdentifier
        let session: Session
        let isOpen = Locked(true)

        @TaskLocal static var current: TransactionScope?
    }

    /// A transaction of ``Database/inTransaction(_:)``: the model API on its one connection.
    ///
    /// Use it only inside the closure it was given to.
    ///
    /// Sendable: yes, so that it can be used from child tasks of the closure (which run one statement at a time on it).
    public struct Transaction: Sendable {
        let session: Session

        init(session: Session) {
            self.session = session
        }

        /// Runs `body` in a savepoint of this transaction: released when it returns; when it
        /// throws, only its writes are rolled back and the error is rethrown (the transaction
        /// goes on if the caller catches it).
        ///
        /// ```swift
        /// try await db.inTransaction { tx in
        ///     try await tx.save(order)
        ///     try? await tx.inTransaction { inner in try await inner.save(optionalExtra) }
        /// }
        /// ```
        @discardableResult
        public func inTransaction<Result: Sendable>(_ body: (Transaction) async throws -> Result) async throws -> Result {
            let name = "codablepostgres_savepoint_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
            try await session.execute("SAVEPOINT \(name)", [])
            let before = session.transaction?.failure
            /// Rolled back to the savepoint, the transaction goes on as it was when it began.
            func rollBack() async {
                if (try? await session.execute("ROLLBACK TO SAVEPOINT \(name)", [])) != nil { session.transaction?.failure = before }
                try? await session.execute("RELEASE SAVEPOINT \(name)", [])
            }
            let result: Result
            do {
                result = try await body(self)
            } catch {
                await rollBack()
                throw error
            }
            // A body that caught a failure of its own: PostgreSQL refuses the rest of the
            // savepoint, so it is rolled back and the failure thrown.
            if let failure = session.transaction?.failure, failure.description != before?.description {
                await rollBack()
                throw failure
            }
            try await session.execute("RELEASE SAVEPOINT \(name)", [])
            return result
        }
    }
}
#endif
