import Dispatch
import Foundation

extension SQLite {
    /// Keeps a callback observation running: see `ObservationToken` (CodableModels).
    public typealias ObservationToken = CodableModels.ObservationToken
}

extension SQLite.Database {
    /// Calls `onChange` on `queue` with the rows of `sql`: first the current rows, then the new
    /// rows after each commit that changes them (see ``SQLite/ObservedValues`` for when that is).
    /// The observation runs until the token is cancelled or released.
    ///
    /// ```swift
    /// let token = try db.observe("SELECT * FROM tasks", arguments: [:], queue: .main) { (rows: [SQLiteRow]) in
    ///     tableView.reload(rows)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - sql: the query to observe.
    ///   - arguments: its named arguments.
    ///   - queue: where `onChange` and `onError` are called.
    ///   - onError: called on `queue` if a read fails (the table was dropped); the
    ///     observation then ends.
    ///   - onChange: called on `queue` with the rows: first the current ones, then after each change.
    /// - Throws: ``SQLite/Error`` when the SQL cannot be prepared, before anything is observed.
    public func observe(
        _ sql: SQL, arguments: SQLiteArguments = [:], queue: DispatchQueue = .main,
        onError: (@Sendable (any Error) -> Void)? = nil,
        _ onChange: @escaping @Sendable ([SQLiteRow]) -> Void
    ) throws -> SQLite.ObservationToken {
        _ = try readRegion(of: sql)   // fails now for SQL that cannot run
        return observe(rowsOf: sql, arguments: arguments).sink(queue: queue, onError: onError, onChange)
    }

    /// Calls `onChange` on `queue` with the rows of `sql` decoded as `T`, now and after each
    /// commit that changes them.
    ///
    /// ```swift
    /// let token = try db.observe("SELECT * FROM tasks WHERE isCompleted = 0", queue: .main) { (open: [Task]) in
    ///     render(open)
    /// }
    /// ```
    public func observe<T: Decodable & Sendable>(
        _ sql: SQL, arguments: SQLiteArguments = [:], queue: DispatchQueue = .main,
        onError: (@Sendable (any Error) -> Void)? = nil,
        _ onChange: @escaping @Sendable ([T]) -> Void
    ) throws -> SQLite.ObservationToken {
        _ = try readRegion(of: sql)
        return observe([T].self, using: sql, arguments: arguments).sink(queue: queue, onError: onError, onChange)
    }
}
