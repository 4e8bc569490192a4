import CSQLite
import Dispatch
import Foundation

/// One SQLite connection and its statement cache.
///
/// Not thread-safe: ``SQLite/Database`` hands a connection to one thread at a time (the writer
/// a pool of one, readers a pool of several, both ``ConnectionPool``s), which is why it opens SQLite in multi-thread
/// mode (`SQLITE_OPEN_NOMUTEX`).
final class RawConnection: @unchecked Sendable {  // used by one thread at a time, handed over by ConnectionPool
    struct Options {
        var isReadOnly = false
        /// Rejects writes with `PRAGMA query_only` (reader connections).
        var isQueryOnly = false
        var busyTimeout: TimeInterval = 5
        var foreignKeysEnabled = true
        /// `PRAGMA mmap_size` for file databases; 0 reads without a map.
        var memoryMapSize = 0
        /// Reports every statement run (``SQLite/Database/trace(_:)``).
        var trace: StatementTrace?
    }

    let handle: OpaquePointer
    let path: String
    /// Whether the connection refuses writes (`PRAGMA query_only`): the readers of a WAL database.
    let isQueryOnly: Bool
    /// The serial queue `async` work on this connection runs on: one executor per connection,
    /// never the cooperative thread pool (see ``ConnectionPool``).
    let queue: DispatchQueue
    /// How many savepoints `inTransaction(_:)` has open inside the outer transaction.
    private var savepointDepth = 0
    /// How many `inTransaction(_:)` blocks are running on this connection (0 outside them).
    private var transactionBlockDepth = 0
    /// Told when an `inTransaction(_:)` transaction commits, and after every rollback (see
    /// ``observeTransactions(committed:rolledBack:)``).
    private var commitObserver: (() -> Void)?
    private var rollbackObserver: (() -> Void)?
    let statements = StatementCache()
    /// Kept alive as long as the connection that calls it.
    private var trace: StatementTrace?
    /// Collects what transactions change while live queries observe the database (writer only).
    var tracker: ChangeTracker?
    /// Whether the commit hook refuses commits into a moved or deleted file (a file-backed writer;
    /// see ``installCommitHook()``).
    var checksFileLocation = false
    /// What the authorizer collects for the statement being prepared, when someone asks.
    var preparedRegion: PreparedRegion?
    /// The SQL functions ``defineFunction(_:argumentCount:_:)`` registered.
    var definedFunctions: Set<String> = []
    /// Pages in the write-ahead log from which the next commit restarts it (see
    /// ``installCheckpointPolicy()``).
    var nextRestartCheckpoint: Int32 = 0
    /// How long SQLite waits for a lock another connection holds (`Options.busyTimeout`).
    private(set) var busyTimeoutMilliseconds: Int32 = 0
    /// Set while `async` work runs on this connection: whether its task was cancelled. Statements
    /// check it before they start, and SQLite's progress handler checks it every few hundred
    /// virtual-machine steps while they run (an `sqlite3_interrupt` that arrives between two
    /// statements is forgotten by SQLite, so it cannot be the only way).
    private(set) var cancellationCheck: (() -> Bool)?

    /// Installs (or, with `nil`, removes) the cancellation check of the `async` work about to run.
    func setCancellationCheck(_ check: (() -> Bool)?) {
        cancellationCheck = check
        if check == nil {
            sqlite3_progress_handler(handle, 0, nil, nil)
        } else {
            sqlite3_progress_handler(handle, 256, { context in
                guard let context else { return 0 }
                let connection = Unmanaged<RawConnection>.fromOpaque(context).takeUnretainedValue()
                return connection.cancellationCheck?() == true ? 1 : 0
            }, Unmanaged.passUnretained(self).toOpaque())
        }
    }

    init(path: String, options: Options) throws {
        var flags = SQLITE_OPEN_NOMUTEX
        flags |= options.isReadOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        if path.hasPrefix("file:") { flags |= SQLITE_OPEN_URI }
        var opened: OpaquePointer?
        let resultCode = sqlite3_open_v2(path, &opened, flags, nil)
        guard resultCode == SQLITE_OK, let opened else {
            let failure = SQLite.Error(connection: opened, resultCode: resultCode, sql: nil)
            sqlite3_close_v2(opened)
            throw SQLite.Error(
                code: failure.code, extendedCode: failure.extendedCode,
                message: "\(failure.message): \(path)")
        }
        handle = opened
        self.path = path
        queue = DispatchQueue(label: "CodableSQLite.connection")
        isQueryOnly = options.isQueryOnly
        // From here on a thrown error runs deinit, which closes the handle.
        sqlite3_extended_result_codes(handle, 1)
        let milliseconds = (options.busyTimeout * 1000).rounded()  // NaN, negative: no waiting; huge: the longest
        if let trace = options.trace {
            self.trace = trace
            trace.install(on: handle)
        }
        busyTimeoutMilliseconds = milliseconds >= Double(Int32.max) ? Int32.max : milliseconds > 0 ? Int32(milliseconds) : 0
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
        do {
            // Reading the schema version reads the file header: a file that is not a database fails here.
            try execute("PRAGMA schema_version")
            try execute("PRAGMA foreign_keys = \(options.foreignKeysEnabled ? "ON" : "OFF")")
            if options.isQueryOnly { try execute("PRAGMA query_only = ON") }
            // Set even to 0: SQLite's own default may be a map (SQLITE_DEFAULT_MMAP_SIZE).
            if isFileBacked { try execute("PRAGMA mmap_size = \(options.memoryMapSize)") }
        } catch let error as SQLite.Error {
            throw SQLite.Error(
                code: error.code, extendedCode: error.extendedCode,
                message: "\(error.message): \(path)", sql: error.sql)
        }
    }

    deinit {
        sqlite3_wal_hook(handle, nil, nil)
        sqlite3_commit_hook(handle, nil, nil)
        if rollbackObserver != nil { sqlite3_rollback_hook(handle, nil, nil) }
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Whether this connection works on a file, rather than in memory or on a temporary database.
    var isFileBacked: Bool {
        guard let name = sqlite3_db_filename(handle, "main") else { return false }
        return name.pointee != 0
    }

    /// Whether no transaction is open.
    var isAutocommit: Bool { sqlite3_get_autocommit(handle) != 0 }

    /// Calls `committed` when an `inTransaction(_:)` transaction has committed, and
    /// `rolledBack` after every rollback on this connection: of a transaction, whoever ended it
    /// (SQLite's rollback hook), and of an `inTransaction(_:)` savepoint. Caches of the schema
    /// built inside a transaction use them to publish or forget what the transaction did.
    func observeTransactions(committed: @escaping () -> Void, rolledBack: @escaping () -> Void) {
        commitObserver = committed
        rollbackObserver = rolledBack
        sqlite3_rollback_hook(handle, { context in
            guard let context else { return }
            let connection = Unmanaged<RawConnection>.fromOpaque(context).takeUnretainedValue()
            connection.tracker?.transactionRolledBack()
            connection.rollbackObserver?()
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Throws when this connection runs an `inTransaction(_:)` block whose transaction has
    /// already ended, so that nothing more is written outside it (and committed at once).
    func checkBlockTransactionIsOpen() throws {
        if transactionBlockDepth > 0, isAutocommit {
            throw SQLite.Error(
                code: .misuse,
                message: "The transaction of this inTransaction block has already ended (rolled back by SQLite after an "
                    + "error such as INSERT OR ROLLBACK or a full disk, or ended by a COMMIT or ROLLBACK statement), "
                    + "so nothing more can run in it; let the block throw")
        }
    }

    // MARK: Statements

    /// Runs `body` with the cached statement for `sql` (prepared on first use), then resets it
    /// and clears its bindings.
    func withStatement<R>(_ sql: String, _ body: (Statement) throws -> R) throws -> R {
        if let cancellationCheck, cancellationCheck() { throw Self.interrupted(sql) }
        let statement: Statement
        if let cached = statements.statement(for: sql) {
            statement = cached
        } else {
            statement = try prepare(sql)
            statements.insert(statement)
        }
        if statement.isInUse {
            // A nested call runs the same SQL while the outer one steps: use a private copy.
            let copy = try prepare(sql)
            defer { copy.upperLayerCache = nil }
            return try run(copy, body)
        }
        return try run(statement, body)
    }

    /// Runs `body` with `statement`, then resets it; on a tracked writer, notes what it wrote.
    private func run<R>(_ statement: Statement, _ body: (Statement) throws -> R) throws -> R {
        statement.isInUse = true
        let tracker = self.tracker
        tracker?.beginExecution(of: statement)
        defer {
            statement.resetAndClearBindings()   // a statement reset early commits here
            statement.isInUse = false
            if statement.isDetached { statement.upperLayerCache = nil }   // no longer cached: nothing else will
            if let tracker { endExecution(on: tracker) }
        }
        return try body(statement)
    }

    /// The error of a statement stopped because its task was cancelled.
    private static func interrupted(_ sql: String) -> SQLite.Error {
        SQLite.Error(code: .interrupt, message: "interrupted: the task was cancelled", sql: sql)
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE on this connection.
    var changes: Int { Int(sqlite3_changes64(handle)) }

    /// Makes the statement running on this connection stop with `SQLITE_INTERRUPT` as soon as it
    /// can. Safe to call from any thread while another thread runs the statement.
    func interrupt() {
        sqlite3_interrupt(handle)
    }

    /// Prepares exactly one statement; several statements in `sql` are an error, not silently cut.
    private func prepare(_ sql: String) throws -> Statement {
        if tracker != nil { preparedRegion = PreparedRegion() }
        defer { preparedRegion = nil }
        var prepared: OpaquePointer?
        var extraStatement = false
        let resultCode = sql.withCString { start -> Int32 in
            var tail: UnsafePointer<CChar>?
            let resultCode = sqlite3_prepare_v3(
                handle, start, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, &tail)
            if resultCode == SQLITE_OK, let tail, tail.pointee != 0 {
                // Whitespace and comments after the statement are fine; another statement is not.
                var next: OpaquePointer?
                if sqlite3_prepare_v2(handle, tail, -1, &next, nil) != SQLITE_OK || next != nil {
                    extraStatement = true
                }
                sqlite3_finalize(next)
            }
            return resultCode
        }
        guard resultCode == SQLITE_OK else {
            throw SQLite.Error(connection: handle, resultCode: resultCode, sql: sql)
        }
        guard let prepared else {
            throw SQLite.Error(code: .misuse, message: "The SQL contains no statement", sql: sql)
        }
        if extraStatement {
            sqlite3_finalize(prepared)
            throw SQLite.Error(
                code: .misuse,
                message: "The SQL contains several statements; run them with execute(raw:), or one at a time",
                sql: sql)
        }
        let statement = Statement(handle: prepared, sql: sql)
        noteWrites(of: statement)
        return statement
    }

    /// Runs every statement of `sql` in order and returns the rows of the last one.
    @discardableResult
    func execute(_ sql: String) throws -> [SQLiteRow] {
        var lastRows: [SQLiteRow] = []
        try sql.withCString { start in
            var cursor = start
            while cursor.pointee != 0 {
                if let cancellationCheck, cancellationCheck() { throw Self.interrupted(sql) }
                var prepared: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                if tracker != nil { preparedRegion = PreparedRegion() }
                defer { preparedRegion = nil }
                let resultCode = sqlite3_prepare_v2(handle, cursor, -1, &prepared, &tail)
                guard resultCode == SQLITE_OK else {
                    let failing = String(cString: cursor).trimmingCharacters(in: .whitespacesAndNewlines)
                    throw SQLite.Error(connection: handle, resultCode: resultCode, sql: failing)
                }
                guard let tail, tail != cursor else { break }
                cursor = tail
                guard let prepared else { continue }  // only whitespace or a comment
                let statement = Statement(handle: prepared, sql: String(cString: sqlite3_sql(prepared)))
                noteWrites(of: statement)
                let tracker = self.tracker
                tracker?.beginExecution(of: statement)
                defer { if let tracker { endExecution(on: tracker) } }
                lastRows = try statement.rows()
            }
        }
        return lastRows
    }

    // MARK: Transactions

    /// Runs `block` in a transaction, or in a savepoint when one is already open.
    /// Commits (or releases) when it returns; rolls back and rethrows when it throws.
    func inTransaction<R>(_ block: () throws -> R) throws -> R {
        let scope = try beginTransactionBlock()
        let result: R
        do {
            result = try block()
        } catch {
            rollBackTransactionBlock(scope)
            throw error
        }
        try commitTransactionBlock(scope)
        return result
    }

    /// An open `inTransaction` block: the outer transaction, or a savepoint inside it.
    enum TransactionBlock: Sendable {
        case transaction
        case savepoint(String)
    }

    /// Opens an `inTransaction` block: `BEGIN IMMEDIATE`, or a savepoint when a transaction is
    /// open. End it with ``commitTransactionBlock(_:)`` or ``rollBackTransactionBlock(_:)``
    /// (the async `inTransaction` runs its body between the two, with awaits).
    func beginTransactionBlock() throws -> TransactionBlock {
        if isAutocommit {
            try execute("BEGIN IMMEDIATE")
            transactionBlockDepth += 1
            return .transaction
        }
        let name = "codablesqlite_savepoint_\(savepointDepth + 1)"
        try execute("SAVEPOINT \(name)")
        transactionBlockDepth += 1
        savepointDepth += 1
        return .savepoint(name)
    }

    /// Commits the block's transaction (or releases its savepoint). When that fails, the block
    /// is rolled back and the error thrown.
    func commitTransactionBlock(_ block: TransactionBlock) throws {
        do {
            try checkTransactionStillOpen()
            switch block {
            case .transaction: try execute("COMMIT")
            case .savepoint(let name): try execute("RELEASE \(name)")
            }
        } catch {
            rollBackTransactionBlock(block)
            throw error
        }
        leaveTransactionBlock(block)
        if case .transaction = block { commitObserver?() }
    }

    /// Rolls the block back after a failure (the whole transaction, or only its savepoint).
    func rollBackTransactionBlock(_ block: TransactionBlock) {
        leaveTransactionBlock(block)
        switch block {
        case .transaction:
            rollbackQuietly()
            rollbackObserver?()  // also when SQL ended the transaction: nothing is known committed
        case .savepoint(let name):
            if !isAutocommit {
                _ = try? execute("ROLLBACK TO \(name); RELEASE \(name)")
                rollbackObserver?()  // SQLite's hook reports whole transactions only
            }
        }
    }

    private func leaveTransactionBlock(_ block: TransactionBlock) {
        transactionBlockDepth -= 1
        if case .savepoint = block { savepointDepth -= 1 }
    }

    private func checkTransactionStillOpen() throws {
        if isAutocommit {
            throw SQLite.Error(
                code: .misuse,
                message: "The transaction was committed or rolled back by SQL inside the inTransaction block; "
                    + "let inTransaction end it (return to commit, throw to roll back)")
        }
    }

    /// Rolls back whatever transaction is open, ignoring failures (SQLite may have rolled back already).
    func rollbackQuietly() {
        if !isAutocommit {
            sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
        }
    }
}
