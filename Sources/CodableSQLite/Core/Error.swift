import CSQLite
import Foundation

extension SQLite {
    /// A failure reported by SQLite, or a misuse CodableSQLite caught before SQLite could.
    ///
    /// It carries the primary and extended result codes, SQLite's message and the SQL that
    /// failed, and matches in `catch` clauses:
    ///
    /// ```swift
    /// do {
    ///     try db.write("INSERT INTO people (id, name) VALUES (1, NULL)")
    /// } catch let error as SQLite.Error where error.extendedCode == .constraintNotNull {
    ///     print(error.message)   // NOT NULL constraint failed: people.name
    /// }
    /// ```
    public struct Error: Swift.Error, Hashable, Sendable {
        /// The primary result code, such as ``SQLite/ResultCode/constraint`` (19).
        public let code: ResultCode
        /// The extended result code, such as ``SQLite/ResultCode/constraintUnique`` (2067).
        /// Equal to ``code`` when SQLite gave no extended code.
        public let extendedCode: ResultCode
        /// SQLite's message, such as `no such table: tasks`.
        public let message: String
        /// The SQL that failed, when a statement was involved.
        public let sql: String?
        /// For a failure while writing an array (`SQLite.Encoder.encode(_:using:)` with an
        /// array, or saving several models), the zero-based index of the element whose
        /// statement failed. The whole array was rolled back.
        public internal(set) var elementIndex: Int?

        /// An error with the given codes, message and SQL.
        ///
        /// ```swift
        /// let error = SQLite.Error(code: .misuse, message: "not allowed here")
        /// ```
        package init(code: ResultCode, extendedCode: ResultCode? = nil, message: String, sql: String? = nil) {
            self.code = code.primary
            self.extendedCode = extendedCode ?? code
            self.message = message
            self.sql = sql
        }

        /// The error SQLite reports for a failed call on `connection`, whose extended result
        /// codes are enabled so `resultCode` is the extended code.
        init(connection: OpaquePointer?, resultCode: Int32, sql: String?) {
            if let moved = Self.databaseMoved(connection: connection, resultCode: resultCode, sql: sql) {
                self = moved
                return
            }
            let message = connection.map { String(cString: sqlite3_errmsg($0)) }
                ?? String(cString: sqlite3_errstr(resultCode))
            self.init(code: ResultCode(rawValue: resultCode), message: message, sql: sql)
        }
    }
}

extension SQLite.Error: CustomStringConvertible, LocalizedError {
    /// A one-line summary: codes, message, the failing element and the SQL.
    ///
    /// `SQLite error 19 (constraint failed), extended 2067: UNIQUE constraint failed: t.id — in INSERT INTO t VALUES (1)`
    public var description: String {
        var text = "SQLite error \(code)"
        if extendedCode != code { text += ", extended \(extendedCode.rawValue)" }
        text += ": \(message)"
        if let elementIndex { text += " (array element \(elementIndex))" }
        if let sql { text += " — in \(sql)" }
        return text
    }

    /// The same text as ``description``, for `localizedDescription`.
    public var errorDescription: String? { description }
}
