import Dispatch
import Foundation

extension SQLite {
    /// A connection to an SQLite database, safe to use from any thread or task at once.
    ///
    /// ```swift
    /// let db = try SQLite.Database(path: ":memory:")
    /// try db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
    /// try db.write("INSERT INTO t VALUES (:id, :name)", arguments: ["id": .integer(1), "name": .text("a")])
    /// let rows = try db.read("SELECT * FROM t WHERE id = :id", arguments: ["id": .integer(1)])
    /// rows[0]["name"] == .text("a")   // true
    /// ```
    ///
    /// A file database runs in WAL mode with one writer connection and up to
    /// ``Configuration/maximumReaderCount`` reader connections: writes are serialized, reads run
    /// in parallel, never wait for a write in progress, and see the last committed state.
    /// An in-memory database uses a single connection for everything.
    ///
    /// Calls made on the database from inside `inTransaction(_:)` run on that transaction and
    /// see its uncommitted writes. Every statement is prepared once and cached.
    public final class Database: @unchecked Sendable {  // connections are only touched under their pool; attachments under attachmentsLock
        /// The path or URI the database was opened with.
        package let path: String
        /// The configuration the database was opened with.
        public let configuration: Configuration

        let writer: RawConnection
        /// The writer, handed to one caller at a time.
        let writerPool: ConnectionPool
        /// Reader connections of a WAL file; `nil` when reads use the writer (in-memory databases).
        let readerPool: ConnectionPool?
        /// State the layers above keep per database (see ``attachment(_:make:)``): a short list,
        /// read and written under `attachmentsLock` (the model layer finds its registry here on
        /// every call).
        private let attachments = UncheckedState<[Attachment]>([])
        private struct Attachment {
            let type: ObjectIdentifier
            let state: any AnyObject & Sendable
        }
        /// Recursive: a layer's `make` may ask for another layer's attachment.
        private let attachmentsLock = NSRecursiveLock()
        /// Told about the writer's transactions (see ``addTransactionObserver(_:)``).
        let transactionObservers = Locked<[any TransactionObserver]>([])
        /// The handler of `trace(_:)`, shared by every connection.
        let statementTrace = StatementTrace()

        /// Opens (or creates) the database at `path`: a file path, `":memory:"` for a private
        /// in-memory database, or a `file:` URI.
        ///
        /// ```swift
        /// let db = try SQLite.Database(path: "/tmp/app.sqlite")
        /// ```
        ///
        /// - Throws: ``SQLite/Error`` with ``SQLite/ResultCode/cannotOpen`` when the file cannot be
        ///   opened or created (a missing folder, a read-only location), or
        ///   ``SQLite/ResultCode/notADatabase`` when the file is not an SQLite database.
        public convenience init(path: String) throws {
            try self.init(Configuration(path: path))
        }

        /// Opens (or creates) the database a configuration describes; by default the file
        /// `database.sqlite` in the platform's data folder for this program
        /// (see ``Configuration/defaultDirectory``).
        ///
        /// ```swift
        /// let db = try SQLite.Database()
        /// let custom = try SQLite.Database(SQLite.Database.Configuration(directory: url, filename: "MyAppData"))
        /// ```
        public init(_ configuration: Configuration = Configuration()) throws {
            if let directory = configuration.directoryToCreate {
                do {
                    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                } catch {
                    throw SQLite.Error(
                        code: .cannotOpen,
                        message: "Cannot create the database folder \(directory.path): \(error.localizedDescription)")
                }
            }
            self.configuration = configuration
            path = configuration.path
            var options = RawConnection.Options()
            options.isReadOnly = configuration.isReadOnly
            options.busyTimeout = configuration.busyTimeout
            options.foreignKeysEnabled = configuration.foreignKeysEnabled
            options.memoryMapSize = max(0, configuration.memoryMapSize)
            options.trace = statementTrace
            writer = try RawConnection(path: path, options: options)
            writer.installCommitHook()

            var usesReaders = false
            if writer.isFileBacked {
                if configuration.isReadOnly {
                    usesReaders = true
                } else {
                    let mode = try writer.execute("PRAGMA journal_mode = WAL").first?["journal_mode"]?.stringValue
                    if mode?.lowercased() == "wal" {
                        try writer.execute("PRAGMA synchronous = \(configuration.durability.pragmaValue)")
                        writer.installCheckpointPolicy()
                        usesReaders = true
                    }
                }
            }
            if usesReaders {
                let readerPath = path
                options.isQueryOnly = true
                readerPool = ConnectionPool(maximumCount: configuration.maximumReaderCount) {
                    try RawConnection(path: readerPath, options: options)
                }
            } else {
                readerPool = nil
            }
            let writer = self.writer
            writerPool = ConnectionPool(maximumCount: 1, initial: [writer]) { writer }
            writer.observeTransactions(
                committed: { [transactionObservers] in transactionObservers.notify { $0.transactionDidCommit() } },
                rolledBack: { [transactionObservers] in transactionObservers.notify { $0.transactionDidRollBack() } })
        }

        // MARK: Hooks for the layers above

        /// The state of type `State` that a layer above Core keeps for this database, made by
        /// `make` on first use. Core knows nothing of what is kept (the model layer keeps its
        /// table registry here).
        func attachment<State: AnyObject & Sendable>(_ type: State.Type, make: (Database) -> State) -> State {
            attachmentsLock.lock()
            defer { attachmentsLock.unlock() }
            if let existing = existingAttachment(State.self) { return existing }
            let state = make(self)
            // `make` may have asked for this very attachment meanwhile: the first one made stays.
            if let existing = existingAttachment(State.self) { return existing }
            attachments.pointee.append(Attachment(type: ObjectIdentifier(State.self), state: state))
            return state
        }

        /// The attachment of type `State`, if made; the caller holds `attachmentsLock`.
        @inline(__always)
        private func existingAttachment<State: AnyObject & Sendable>(_ type: State.Type) -> State? {
            let key = ObjectIdentifier(State.self)
            for attachment in attachments.pointee where attachment.type == key {
                // Stored under `State`'s own identifier: no checked cast needed.
                return unsafeDowncast(attachment.state, to: State.self)
            }
            return nil
        }

        /// Registers `observer` for every commit and rollback of the writer, for the life of the
        /// database. The callbacks run on the thread that ended the transaction, with the writer held.
        func addTransactionObserver(_ observer: any TransactionObserver) {
            transactionObservers.withLock { $0.append(observer) }
        }

        // MARK: Connections

        /// Runs `body` on the writer connection: inline when this thread already holds it, else
        /// after waiting for it. A transaction left open by the SQL is rolled back and reported.
        func withWriter<R>(_ body: (RawConnection) throws -> R) throws -> R {
            let held = HeldConnections.current
            let identifier = ObjectIdentifier(self)
            if let connection = held.connection(of: identifier), connection === writer {
                try connection.checkBlockTransactionIsOpen()
                return try body(connection)
            }
            if let scope = AsyncTransactionScope.current, scope.database == identifier {
                // The writer is held by an async inTransaction body of this task: waiting for it
                // here would wait for ever.
                throw SQLite.Error(
                    code: .misuse,
                    message: "A synchronous write inside the body of an async inTransaction { tx in … } would wait for the "
                        + "writer that body holds; call the async form (try await tx.…) instead")
            }
            return try withConnection(from: writerPool, held: held, body)
        }

        /// Runs `body` on a connection that sees the last committed state, or, when this thread is
        /// inside a transaction or already reading, on that same connection.
        func withReader<R>(_ body: (RawConnection) throws -> R) throws -> R {
            let held = HeldConnections.current
            if let connection = held.connection(of: ObjectIdentifier(self)) {
                return try body(connection)
            }
            return try withConnection(from: readerPool ?? writerPool, held: held, body)
        }

        private func withConnection<R>(from pool: ConnectionPool, held: HeldConnections, _ body: (RawConnection) throws -> R) throws -> R {
            let connection = try pool.acquire()
            held.push(connection, of: ObjectIdentifier(self))
            defer {
                held.pop()
                pool.release(connection)
            }
            return try Self.run(body, on: connection)
        }

        /// Runs `body` as a top-level use of `connection`, which must end with no transaction open.
        static func run<R>(_ body: (RawConnection) throws -> R, on connection: RawConnection) throws -> R {
            let result: R
            do {
                result = try body(connection)
            } catch is NoRow where !connection.isAutocommit {
                // `BEGIN` is a single-row decode's SQL without a row: still the caller's mistake.
                connection.rollbackQuietly()
                throw transactionLeftOpen()
            } catch {
                connection.rollbackQuietly()
                throw error
            }
            if !connection.isAutocommit {
                connection.rollbackQuietly()
                throw transactionLeftOpen()
            }
            return result
        }

        private static func transactionLeftOpen() -> SQLite.Error {
            SQLite.Error(
                code: .misuse,
                message: "The SQL left a transaction open (BEGIN without COMMIT), so it was rolled back; "
                    + "use inTransaction { tx in … } to group statements")
        }

        // MARK: Statements

        /// Runs every statement in `sql`, in order, on the writer, and returns the rows of the last one.
        ///
        /// ```swift
        /// try db.execute(raw: """
        ///     CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT);
        ///     CREATE INDEX t_name ON t(name);
        ///     """)
        /// ```
        ///
        /// A failing statement stops the run; earlier statements stay applied unless the call
        /// is inside `inTransaction(_:)`.
        @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
        @discardableResult
        public func execute(raw sql: String) throws -> [SQLiteRow] {
            try withWriter { try $0.execute(sql) }
        }

        /// Runs one statement that may write, with named arguments, and returns its rows
        /// (for `RETURNING` clauses).
        ///
        /// ```swift
        /// try db.write("INSERT INTO t VALUES (:id, :name)", arguments: ["id": .integer(1), "name": .text("a")])
        /// ```
        @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
        @discardableResult
        public func write(_ sql: String, arguments: SQLiteArguments = [:]) throws -> [SQLiteRow] {
            try withWriter { try $0.rows(sql, arguments: arguments, readOnly: false) }
        }

        /// Runs one statement that may write, with positional (`?`) arguments.
        ///
        /// ```swift
        /// try db.write("INSERT INTO t VALUES (?, ?)", arguments: [.integer(2), .text("b")])
        /// ```
        @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
        @discardableResult
        package func write(_ sql: String, arguments: [SQLite.Value]) throws -> [SQLiteRow] {
            try withWriter { try $0.rows(sql, arguments: arguments, readOnly: false) }
        }

        /// Runs one read-only statement with named arguments and returns its rows.
        ///
        /// ```swift
        /// let rows: [SQLiteRow] = try db.read("SELECT * FROM t WHERE id = :id", arguments: ["id": .integer(1)])
        /// ```
        ///
        /// - Throws: ``SQLite/Error`` with ``SQLite/ResultCode/misuse`` for a statement that writes.
        @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
        public func read(_ sql: String, arguments: SQLiteArguments = [:]) throws -> [SQLiteRow] {
            try withReader { try $0.rows(sql, arguments: arguments, readOnly: true) }
        }

        /// Runs one read-only statement with positional (`?`) arguments and returns its rows.
        ///
        /// ```swift
        /// let rows = try db.read("SELECT ? + ?", arguments: [.integer(1), .integer(2)])
        /// ```
        @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
        package func read(_ sql: String, arguments: [SQLite.Value]) throws -> [SQLiteRow] {
            try withReader { try $0.rows(sql, arguments: arguments, readOnly: true) }
        }
    }
}

extension RawConnection {
    /// Runs one statement with named arguments and returns its rows; `readOnly` refuses
    /// statements that write, so reads behave the same on every kind of database.
    func rows(_ sql: String, arguments: SQLiteArguments, readOnly: Bool) throws -> [SQLiteRow] {
        try withStatement(sql) { statement in
            if readOnly { try statement.requireReadOnly() }
            try statement.bind(arguments)
            return try statement.rows()
        }
    }

    /// Runs one statement with positional arguments and returns its rows.
    func rows(_ sql: String, arguments: [SQLite.Value], readOnly: Bool) throws -> [SQLiteRow] {
        try withStatement(sql) { statement in
            if readOnly { try statement.requireReadOnly() }
            try statement.bind(arguments)
            return try statement.rows()
        }
    }
}

extension Statement {
    /// Rejects statements that write, so `read` behaves the same on every kind of database.
    /// A pragma that only reports a setting (`PRAGMA journal_mode`, no `=`) is a read.
    func requireReadOnly() throws {
        if !isReadOnly && !isPragmaQuery {
            throw misuse("read(_:) only runs statements that do not write; use write(_:) or execute(raw:)")
        }
    }
}

extension Statement {
    /// Pragmas that take an argument in parentheses and only report: `PRAGMA table_info(t)`.
    private static let queryPragmasWithArgument: Set<String> = [
        "table_info", "table_xinfo", "table_list", "index_info", "index_xinfo", "index_list",
        "foreign_key_list", "foreign_key_check", "integrity_check", "quick_check",
    ]
    /// Pragmas without an argument that still change the database.
    private static let writingPragmas: Set<String> = ["optimize", "incremental_vacuum", "wal_checkpoint"]

    /// Whether this is a pragma that reads a setting or reports on the schema, even when SQLite
    /// cannot say so: `PRAGMA journal_mode`, `PRAGMA main.user_version`, `PRAGMA table_info(t)`;
    /// not `PRAGMA user_version = 3` nor `PRAGMA user_version(3)`.
    var isPragmaQuery: Bool {
        let text = sql.drop(while: { $0.isWhitespace })
        guard text.prefix(6).uppercased() == "PRAGMA", !text.contains("=") else { return false }
        let body = text.dropFirst(6).drop(while: { $0.isWhitespace })
        let qualifiedName = body.prefix(while: { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." })
        let name = (qualifiedName.split(separator: ".").last).map { $0.lowercased() } ?? ""
        let rest = body.dropFirst(qualifiedName.count).drop(while: { $0.isWhitespace })
        if rest.first == "(" { return Self.queryPragmasWithArgument.contains(name) }
        return !Self.writingPragmas.contains(name)
    }
}
