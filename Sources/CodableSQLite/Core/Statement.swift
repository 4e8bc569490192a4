import CSQLite
import Foundation

/// A prepared statement, owned by one ``RawConnection`` and used only while that connection is held.
///
/// Statements are cached by their SQL text: parameter names are resolved once per statement,
/// column names once per compilation (SQLite recompiles a statement after a schema change).
final class Statement {
    let handle: OpaquePointer
    let sql: String
    /// Whether the statement is executing; a cached statement in use is never handed out twice.
    var isInUse = false
    /// Set when the statement cache let go of the statement while it was in use: the connection
    /// empties ``upperLayerCache`` when the use ends.
    var isDetached = false

    private var parameterMap: ParameterMap?
    /// One slot for the layer above to keep what it learned about this statement (the coders'
    /// column and parameter plans, a decoder kept for the next call). Core never looks inside. What
    /// it holds may refer back to the statement: whoever lets go of a statement empties the slot
    /// first (the statement cache when it drops one, the connection after a private copy), so it
    /// lives no longer than the statement and is bounded by the statement cache.
    var upperLayerCache: AnyObject?
    /// The tables and columns the statement may write, found by the authorizer when the
    /// statement was prepared on a tracked writer (see ``ChangeTracker``); `nil` otherwise.
    var writes: [String: Set<String>?]?
    /// Whether the statement drops or alters a table (found with ``writes``).
    var changesSchema = false
    /// The tables of ``writes`` that are `WITHOUT ROWID`.
    var writesWithoutRowID: Set<String> = []
    /// What the statement does to a savepoint (found with ``writes``), and whether it did it:
    /// set when a step completes it, cleared by the connection when it tells the tracker.
    var savepoint: SavepointStatement?
    var completedSavepoint = false
    private var cachedColumnNames: [String] = []
    private var cachedColumnsCompilation: Int32 = -1

    init(handle: OpaquePointer, sql: String) {
        self.handle = handle
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// The SQL with the values bound now in place of its parameters (for diagnostics and tests).
    var expandedSQL: String? {
        guard let text = sqlite3_expanded_sql(handle) else { return nil }
        defer { sqlite3_free(text) }
        return String(cString: text)
    }

    // MARK: Errors

    /// The error for a failed call on this statement, carrying its SQL.
    func error(_ resultCode: Int32) -> SQLite.Error {
        SQLite.Error(connection: sqlite3_db_handle(handle), resultCode: resultCode, sql: sql)
    }

    /// A misuse error carrying this statement's SQL.
    func misuse(_ message: String, code: SQLite.ResultCode = .misuse) -> SQLite.Error {
        SQLite.Error(code: code, message: message, sql: sql)
    }

    // MARK: Execution

    /// Steps once: `true` when a row is available, `false` when the statement is done.
    @inline(__always)
    func step() throws -> Bool {
        let resultCode = sqlite3_step(handle)
        if resultCode == SQLITE_ROW { return true }
        if resultCode == SQLITE_DONE {
            if savepoint != nil { completedSavepoint = true }
            return false
        }
        throw error(resultCode)
    }

    /// Steps until done, discarding rows.
    func run() throws {
        while try step() {}
    }

    /// Ends the execution so the statement can run again and its read transaction ends.
    @inline(__always)
    func reset() {
        sqlite3_reset(handle)
    }

    /// Ends the execution and sets every parameter back to NULL, so a cached statement keeps no
    /// argument (a large blob, say) alive between uses.
    func resetAndClearBindings() {
        sqlite3_reset(handle)
        if sqlite3_bind_parameter_count(handle) > 0 { sqlite3_clear_bindings(handle) }
    }

    /// Whether the statement leaves the database file unchanged (SELECT, and also BEGIN/COMMIT).
    var isReadOnly: Bool { sqlite3_stmt_readonly(handle) != 0 }

    // MARK: Columns

    var columnCount: Int32 { sqlite3_column_count(handle) }

    /// How many times SQLite recompiled the statement (after schema changes): cached column
    /// information is valid for one compilation.
    var compilation: Int32 { sqlite3_stmt_status(handle, SQLITE_STMTSTATUS_REPREPARE, 0) }

    /// The result column names, recomputed only when SQLite recompiled the statement.
    var columnNames: [String] {
        let compilation = self.compilation
        if compilation != cachedColumnsCompilation {
            let count = columnCount
            cachedColumnNames = (0..<count).map { String(cString: sqlite3_column_name(handle, $0)) }
            cachedColumnsCompilation = compilation
        }
        return cachedColumnNames
    }

    /// The column's storage class in the current row.
    @inline(__always)
    func type(at column: Int32) -> StorageClass {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: .integer
        case SQLITE_FLOAT: .real
        case SQLITE_TEXT: .text
        case SQLITE_BLOB: .blob
        default: .null
        }
    }

    /// The size of the column's text or blob in bytes.
    @inline(__always)
    func byteCount(at column: Int32) -> Int { Int(sqlite3_column_bytes(handle, column)) }

    @inline(__always)
    func int64(at column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    @inline(__always)
    func double(at column: Int32) -> Double { sqlite3_column_double(handle, column) }

    /// The column's text; call only when its type is `SQLITE_TEXT` (or to convert deliberately).
    @inline(__always)
    func text(at column: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// Calls `body` with the column's UTF-8 bytes, valid only during the call.
    @inline(__always)
    func withUTF8<R>(at column: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        let bytes = sqlite3_column_text(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        return try body(UnsafeBufferPointer(start: bytes, count: bytes == nil ? 0 : count))
    }

    /// The column's bytes; a zero-length blob is an empty `Data`.
    @inline(__always)
    func data(at column: Int32) -> Data {
        guard let bytes = sqlite3_column_blob(handle, column) else { return Data() }
        let count = Int(sqlite3_column_bytes(handle, column))
        return Data(bytes: bytes, count: count)
    }

    /// The column as a ``SQLite/Value``.
    func value(at column: Int32) -> SQLite.Value {
        switch type(at: column) {
        case .integer: .integer(int64(at: column))
        case .real: .double(double(at: column))
        case .text: .text(text(at: column))
        case .blob: .data(data(at: column))
        case .null: .null
        }
    }

    /// Steps through every row, collecting the first column's values.
    func firstColumnValues() throws -> [SQLite.Value] {
        var values: [SQLite.Value] = []
        while try step() { values.append(value(at: 0)) }
        return values
    }

    /// Steps through every row, collecting them as dictionaries (the leftmost of duplicate names wins).
    func rows() throws -> [SQLiteRow] {
        var rows: [SQLiteRow] = []
        guard try step() else { return rows }
        // Column names only after the first step: a schema change recompiles the statement there.
        let names = columnNames
        repeat {
            var row = SQLiteRow(minimumCapacity: names.count)
            for (column, name) in names.enumerated() where row[name] == nil {
                row[name] = value(at: Int32(column))
            }
            rows.append(row)
        } while try step()
        return rows
    }

    // MARK: Parameters

    /// Named and positional parameters of the statement, resolved once. A class: each bind reads
    /// it, and a struct of three collections was three retains and releases a call.
    final class ParameterMap {
        /// Name without its `:`/`@`/`$` prefix → first parameter index with that name.
        let indexes: [String: Int32]
        /// The same name under several prefixes (`:id` and `@id`): the further indexes.
        let extraIndexes: [String: [Int32]]
        /// Parameters written `?` or `?NNN`.
        let positionalCount: Int
        let count: Int32
        /// Names as written in the SQL, for error messages.
        let writtenNames: [String]

        /// The parameters of `handle`, as SQLite reports them.
        init(of handle: OpaquePointer) {
            var indexes: [String: Int32] = [:]
            var extraIndexes: [String: [Int32]] = [:]
            var positionalCount = 0
            var writtenNames: [String] = []
            count = sqlite3_bind_parameter_count(handle)
            if count > 0 {
                for index in 1...count {
                    guard let cName = sqlite3_bind_parameter_name(handle, index) else {
                        positionalCount += 1
                        continue
                    }
                    let written = String(cString: cName)
                    if written.hasPrefix("?") {
                        positionalCount += 1
                        continue
                    }
                    writtenNames.append(written)
                    let name = String(written.dropFirst())
                    if indexes[name] == nil {
                        indexes[name] = index
                    } else {
                        extraIndexes[name, default: []].append(index)
                    }
                }
            }
            self.indexes = indexes
            self.extraIndexes = extraIndexes
            self.positionalCount = positionalCount
            self.writtenNames = writtenNames
        }
    }

    var parameters: ParameterMap {
        if let parameterMap { return parameterMap }
        let map = ParameterMap(of: handle)
        parameterMap = map
        return map
    }
}

/// "The statement has no row", thrown by the single-row decodes so that their callers' closures
/// return `T` rather than `T?`: code not specialized for `T` (a public generic called from another
/// module) looks up `Optional<T>`'s metadata in each function that holds a `T?`, about 325
/// instructions each, which was three lookups (6% of the instructions) of every
/// `get(_:id:)`. The public calls catch it and return `nil`;
/// `Database.run(_:on:)` knows it, so that SQL leaving a transaction open is still reported.
struct NoRow: Error {}
