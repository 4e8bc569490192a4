import CSQLite
import Foundation

/// The handler of ``SQLite/Database/trace(_:)``, shared by the database's connections.
final class StatementTrace: @unchecked Sendable {  // `handler` is only read and written under `lock`
    private let lock = NSLock()
    private var handler: (@Sendable (String) -> Void)?

    func set(_ handler: (@Sendable (String) -> Void)?) {
        lock.withLock { self.handler = handler }
    }

    /// The handler, if one is set.
    var current: (@Sendable (String) -> Void)? {
        lock.withLock { handler }
    }

    /// Installs the trace callback on a connection. Without a handler it costs one lock per
    /// statement run: the SQL's text is only read and copied into a `String` when a handler
    /// will see it (that copy was a tenth of a lookup by primary key).
    func install(on connection: OpaquePointer) {
        sqlite3_trace_v2(connection, UInt32(SQLITE_TRACE_STMT), { _, context, statement, text in
            guard let context, let statement else { return 0 }
            guard let handler = Unmanaged<StatementTrace>.fromOpaque(context).takeUnretainedValue().current else { return 0 }
            // Statements of triggers are reported as comments (`-- TRIGGER …`): only the statements run.
            if let text, text.assumingMemoryBound(to: CChar.self).pointee == UInt8(ascii: "-").asCChar { return 0 }
            guard let sql = sqlite3_sql(OpaquePointer(statement)) else { return 0 }
            handler(String(cString: sql))
            return 0
        }, Unmanaged.passUnretained(self).toOpaque())
    }
}

private extension UInt8 {
    var asCChar: CChar { CChar(bitPattern: self) }
}

extension SQLite.Database {
    /// Calls `handler` with the SQL of every statement this database runs, on any of its
    /// connections, before it runs: for logging, and to see what the model layer does. Bound
    /// values are not included. `nil` stops tracing.
    ///
    /// ```swift
    /// db.trace { sql in print("SQL:", sql) }
    /// let movies = try db.get(Movie.self)     // prints the handful of statements it runs
    /// db.trace(nil)
    /// ```
    ///
    /// The handler runs on the thread running the statement, so it must be quick and must not
    /// use the database.
    public func trace(_ handler: (@Sendable (String) -> Void)?) {
        statementTrace.set(handler)
    }
}
