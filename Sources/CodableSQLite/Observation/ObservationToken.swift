import Dispatch
import Foundation

extension SQLite {
    /// Keeps a callback observation running: ``cancel()`` stops it, and so does releasing the token.
    ///
    /// ```swift
    /// let token = try db.observe("SELECT * FROM tasks", arguments: [:], queue: .main) { (rows: [SQLiteRow]) in
    ///     print(rows.count, "tasks")
    /// }
    /// token.cancel()
    /// ```
    ///
    /// Sendable: cancelling from any thread is safe.
    public final class ObservationToken: Sendable {
        private let isCancelled = Locked(false)
        private let task = Locked<Task<Void, Never>?>(nil)

        /// A token whose observation is the task `start` makes; `start` is given a check that
        /// says whether the token was cancelled meanwhile, to ask before each callback.
        init(start: (@escaping @Sendable () -> Bool) -> Task<Void, Never>) {
            let isCancelled = self.isCancelled
            let task = start { isCancelled.withLock { $0 } }
            self.task.withLock { $0 = task }
        }

        /// Stops the observation; the callback is not called again, even for a value already
        /// on its way to the queue.
        public func cancel() {
            isCancelled.withLock { $0 = true }
            task.withLock { $0?.cancel() }
        }

        deinit {
            cancel()
        }
    }
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
        return token(for: observe(rowsOf: sql, arguments: arguments), queue: queue, onError: onError, onChange)
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
        return token(for: observe([T].self, using: sql, arguments: arguments), queue: queue, onError: onError, onChange)
    }

    private func token<Value: Sendable>(
        for observation: SQLite.ObservedValues<Value>, queue: DispatchQueue,
        onError: (@Sendable (any Error) -> Void)?, _ onChange: @escaping @Sendable (Value) -> Void
    ) -> SQLite.ObservationToken {
        SQLite.ObservationToken { isCancelled in
            Task {
                do {
                    for try await value in observation {
                        queue.async { if !isCancelled() { onChange(value) } }
                    }
                } catch {
                    if let onError { queue.async { if !isCancelled() { onError(error) } } }
                }
            }
        }
    }
}
