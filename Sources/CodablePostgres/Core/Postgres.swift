#if Postgres
@_exported import CodableModels
import PostgresNIO

/// The same `Model` types, `Filter`s and key-value store as on SQLite, on a PostgreSQL server.
///
/// A model file compiles unchanged against both: only opening the database changes.
///
/// ```swift
/// import CodablePostgres
///
/// let db = try await Postgres.Database(url: "postgres://app:secret@127.0.0.1:5432/app")
/// try await db.save(person)
/// let adults = try await db.get(with: Filter(\Person.age, is: .greater(than: 17)).sort(by: \.name).limit(20))
/// try await db.inTransaction { tx in try await tx.save(a); try await tx.save(b) }
/// try await db.copy([Person.self, Note.self], from: sqliteDatabase)
/// ```
///
/// Tables use PostgreSQL's own types, so its tools and SQL work on them: `uuid`, `bigint`,
/// `double precision`, `boolean`, `text`, `bytea`, `numeric` for `Decimal`, `timestamptz` for
/// `Date` and `jsonb` for nested values. `Date`s keep microseconds (PostgreSQL's precision; a date is
/// rounded to the nearest one, and `save` returns the value as stored); everything else round-trips exactly.
///
/// Sendable: a namespace.
public enum Postgres {}

extension Postgres {
    /// A failure reported by the PostgreSQL server or the connection to it.
    ///
    /// Match its ``code`` (and for server errors the ``sqlState``) rather than its message:
    ///
    /// ```swift
    /// do {
    ///     try await db.save(person)
    /// } catch let error as Postgres.Error where error.sqlState == "23505" {
    ///     // unique_violation
    /// } catch Postgres.Error.Code.connection {
    ///     // the server is unreachable or the connection dropped: retry later
    /// }
    /// ```
    public struct Error: Swift.Error, Sendable, CustomStringConvertible {
        /// What kind of failure this is.
        public let code: Code
        /// The server's SQLSTATE (such as `23505` for a unique violation), for server errors.
        public let sqlState: String?
        /// What went wrong, in the server's words when it answered.
        public let message: String
        /// The statement that failed, when there was one.
        public let sql: String?
        /// The server's message without its DETAIL (which may quote other rows' values, such as
        /// the key a unique violation met): what may be told to someone who cannot read them.
        package let summary: String

        init(_ code: Code, sqlState: String? = nil, message: String, sql: String? = nil, summary: String? = nil) {
            self.code = code
            self.sqlState = sqlState
            self.message = message
            self.sql = sql
            self.summary = summary ?? message
        }

        /// `server error 23505: duplicate key value … (SQL: INSERT …)`
        public var description: String {
            var text = code == .server ? "server error \(sqlState ?? "?"): \(message)" : "\(code): \(message)"
            if let sql { text += " (SQL: \(sql))" }
            return text
        }

        /// The kind of a ``Postgres/Error``, matchable in `catch` clauses.
        public struct Code: Hashable, Sendable, CustomStringConvertible {
            /// A short stable name, such as `server`.
            public let name: String
            init(_ name: String) { self.name = name }

            /// The server refused a statement; ``Postgres/Error/sqlState`` says why.
            public static let server = Code("server")
            /// The server could not be reached, or the connection to it dropped.
            public static let connection = Code("connection")
            /// The server refused the user name or password.
            public static let authentication = Code("authentication")
            /// The database was closed with ``Postgres/Database/close()``.
            public static let closed = Code("closed")
            /// The URL given to ``Postgres/Database/init(url:maximumConnections:statementTimeout:)`` cannot be used.
            public static let invalidURL = Code("invalidURL")
            /// An argument out of range, such as `maximumConnections: 1` or `batchSize: 0`.
            public static let invalidArgument = Code("invalidArgument")

            /// The ``name``.
            public var description: String { name }

            /// Whether `error` is a ``Postgres/Error`` with this code, for `catch Postgres.Error.Code.x` clauses.
            public static func ~= (code: Code, error: any Swift.Error) -> Bool {
                (error as? Postgres.Error)?.code == code
            }
        }

        /// The error to throw for a failure postgres-nio reports (never for the caller's own
        /// errors, which pass through ``Postgres/Database/inTransaction(_:)`` unchanged);
        /// `isClosed`: whether the database was closed.
        static func from(_ error: any Swift.Error, sql: String?, isClosed: Bool) -> any Swift.Error {
            if let failure = error as? PSQLError {
                if let server = failure.serverInfo {
                    let state = server[.sqlState]
                    let summary = server[.message] ?? "\(failure.code)"
                    var message = summary
                    if let detail = server[.detail] { message += " (\(detail))" }
                    // 28…: invalid password or authorization; 08…: connection exceptions; 57P0…: the
                    // server is shutting down or ended this connection (pg_terminate_backend).
                    let code: Code = switch state {
                    case let state? where state.hasPrefix("28"): .authentication
                    case let state? where state.hasPrefix("08") || state.hasPrefix("57P0"): .connection
                    default: .server
                    }
                    return Postgres.Error(code, sqlState: state, message: message, sql: sql, summary: summary)
                }
                switch failure.code {
                case .queryCancelled:
                    return CancellationError()
                case .poolClosed:
                    return Postgres.Error(.closed, message: "the database is closed", sql: sql)
                case .clientClosedConnection, .serverClosedConnection:
                    // Also what a connection the server ended (a restart, pg_terminate_backend) reports.
                    return Postgres.Error(.connection, message: "the connection to the server was closed; the next statement uses a new one", sql: sql)
                case .authMechanismRequiresPassword, .unsupportedAuthMechanism, .saslError:
                    return Postgres.Error(.authentication, message: "\(failure.code)" + (failure.underlying.map { ": \($0)" } ?? ""), sql: sql)
                default:
                    let underlying = failure.underlying.map { ": \($0)" } ?? ""
                    return Postgres.Error(.connection, message: "\(failure.code)\(underlying)", sql: sql)
                }
            }
            if error is Postgres.Error || error is CancellationError { return error }
            // What else postgres-nio's pool throws (its error type is not public API) is told by
            // the state it happens in: the caller's task cancelled while it waited for a
            // connection, the database closed, or no connection could be made.
            if Task.isCancelled { return CancellationError() }
            if isClosed { return Postgres.Error(.closed, message: "the database is closed", sql: sql) }
            return Postgres.Error(.connection, message: "no connection to the server could be made for a while; it is down or unreachable (\(error))", sql: sql)
        }
    }
}

extension Postgres.Error: EngineError {
    /// `ModelError.Code.uniqueViolation` for SQLSTATE `23505` (a model's unique index),
    /// `ModelError.Code.invalidArgument` for ``Postgres/Error/Code/invalidArgument``, otherwise
    /// `nil`: `catch ModelError.Code.invalidArgument` matches an argument refused by either engine,
    /// the model layer or sync.
    package var modelErrorCode: ModelError.Code? {
        if sqlState == "23505" { return .uniqueViolation }
        return code == .invalidArgument ? .invalidArgument : nil
    }
}
#endif
