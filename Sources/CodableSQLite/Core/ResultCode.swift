import CSQLite

extension SQLite {
    /// An SQLite result code, primary (`constraint`) or extended (`constraintUnique`).
    ///
    /// Use it to match errors in `catch` clauses. A primary code matches every extended code
    /// of its family; an extended code matches only itself:
    ///
    /// ```swift
    /// do {
    ///     try db.write("INSERT INTO t VALUES (1)")
    /// } catch SQLite.ResultCode.constraintUnique {
    ///     // a UNIQUE or PRIMARY KEY duplicate only
    /// } catch SQLite.ResultCode.constraint {
    ///     // any other constraint (NOT NULL, CHECK, FOREIGN KEY…)
    /// }
    /// ```
    ///
    /// See <https://www.sqlite.org/rescode.html> for every code.
    public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The numeric code, as SQLite's C API returns it.
        public let rawValue: Int32

        /// A code from its numeric value.
        ///
        /// ```swift
        /// SQLite.ResultCode(rawValue: 19) == .constraint   // true
        /// ```
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// The primary code of the family: the low 8 bits.
        ///
        /// ```swift
        /// SQLite.ResultCode.constraintUnique.primary == .constraint   // true
        /// ```
        var primary: ResultCode { ResultCode(rawValue: rawValue & 0xFF) }

        /// Whether this is an extended code rather than a primary one.
        var isExtended: Bool { rawValue > 0xFF }

        /// SQLite's English description of the code, such as "constraint failed".
        public var description: String {
            let text = String(cString: sqlite3_errstr(rawValue))
            return "\(rawValue) (\(text))"
        }

        /// Whether `error` is an ``SQLite/Error`` whose code matches `code`: any code of the
        /// family for a primary code, exactly for an extended one.
        public static func ~= (code: ResultCode, error: any Swift.Error) -> Bool {
            guard let error = error as? SQLite.Error else { return false }
            return code.isExtended ? error.extendedCode == code : error.code == code.primary
        }

        // Primary result codes.
        /// `SQLITE_ERROR` (1): a generic error, such as an SQL syntax error or a missing table.
        public static let error = ResultCode(rawValue: SQLITE_ERROR)
        /// `SQLITE_INTERNAL` (2).
        public static let `internal` = ResultCode(rawValue: SQLITE_INTERNAL)
        /// `SQLITE_PERM` (3): the requested access mode could not be provided.
        public static let permission = ResultCode(rawValue: SQLITE_PERM)
        /// `SQLITE_ABORT` (4): an operation was aborted, for example by a rollback.
        public static let abort = ResultCode(rawValue: SQLITE_ABORT)
        /// `SQLITE_BUSY` (5): another connection holds a conflicting lock for longer than the busy timeout.
        public static let busy = ResultCode(rawValue: SQLITE_BUSY)
        /// `SQLITE_LOCKED` (6): a conflict inside the same connection.
        public static let locked = ResultCode(rawValue: SQLITE_LOCKED)
        /// `SQLITE_NOMEM` (7).
        public static let noMemory = ResultCode(rawValue: SQLITE_NOMEM)
        /// `SQLITE_READONLY` (8): an attempt to write a read-only database.
        public static let readOnly = ResultCode(rawValue: SQLITE_READONLY)
        /// `SQLITE_INTERRUPT` (9).
        public static let interrupt = ResultCode(rawValue: SQLITE_INTERRUPT)
        /// `SQLITE_IOERR` (10): the operating system reported an I/O error.
        public static let ioError = ResultCode(rawValue: SQLITE_IOERR)
        /// `SQLITE_CORRUPT` (11): the database file is malformed.
        public static let corrupt = ResultCode(rawValue: SQLITE_CORRUPT)
        /// `SQLITE_FULL` (13): the disk is full.
        public static let full = ResultCode(rawValue: SQLITE_FULL)
        /// `SQLITE_CANTOPEN` (14): the file could not be opened or created.
        public static let cannotOpen = ResultCode(rawValue: SQLITE_CANTOPEN)
        /// `SQLITE_PROTOCOL` (15).
        public static let lockProtocol = ResultCode(rawValue: SQLITE_PROTOCOL)
        /// `SQLITE_SCHEMA` (17).
        public static let schema = ResultCode(rawValue: SQLITE_SCHEMA)
        /// `SQLITE_TOOBIG` (18): a string or blob exceeds SQLite's size limit.
        public static let tooBig = ResultCode(rawValue: SQLITE_TOOBIG)
        /// `SQLITE_CONSTRAINT` (19): a UNIQUE, NOT NULL, CHECK or FOREIGN KEY constraint failed.
        public static let constraint = ResultCode(rawValue: SQLITE_CONSTRAINT)
        /// `SQLITE_MISMATCH` (20): a data type mismatch, such as a non-integer rowid.
        public static let mismatch = ResultCode(rawValue: SQLITE_MISMATCH)
        /// `SQLITE_MISUSE` (21): the API was used incorrectly (CodableSQLite also uses it for
        /// a transaction left open outside `inTransaction(_:)`).
        public static let misuse = ResultCode(rawValue: SQLITE_MISUSE)
        /// `SQLITE_RANGE` (25): a statement argument does not match any parameter.
        public static let range = ResultCode(rawValue: SQLITE_RANGE)
        /// `SQLITE_NOTADB` (26): the file is not an SQLite database.
        public static let notADatabase = ResultCode(rawValue: SQLITE_NOTADB)

        // Extended result codes users commonly match.
        /// `SQLITE_CONSTRAINT_CHECK` (275).
        public static let constraintCheck = ResultCode(rawValue: 275)
        /// `SQLITE_CONSTRAINT_FOREIGNKEY` (787).
        public static let constraintForeignKey = ResultCode(rawValue: 787)
        /// `SQLITE_CONSTRAINT_NOTNULL` (1299).
        public static let constraintNotNull = ResultCode(rawValue: 1299)
        /// `SQLITE_CONSTRAINT_PRIMARYKEY` (1555).
        public static let constraintPrimaryKey = ResultCode(rawValue: 1555)
        /// `SQLITE_CONSTRAINT_UNIQUE` (2067).
        public static let constraintUnique = ResultCode(rawValue: 2067)
        /// `SQLITE_READONLY_DBMOVED` (1032): the database file was moved or deleted while open.
        /// Every later commit is refused with it, in WAL mode too (where SQLite itself does not
        /// notice), and its message names the path:
        ///
        /// ```swift
        /// do {
        ///     try db.save(task)
        /// } catch SQLite.ResultCode.readOnlyDatabaseMoved {
        ///     // the file or its folder was deleted, renamed or replaced: reopen the database
        /// }
        /// ```
        public static let readOnlyDatabaseMoved = ResultCode(rawValue: 1032)
    }
}
