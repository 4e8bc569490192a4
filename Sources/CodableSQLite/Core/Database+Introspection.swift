extension SQLite {
    /// A column of a table, as `PRAGMA table_info` describes it.
    ///
    /// ```swift
    /// let columns = try db.columns(in: "people")
    /// columns.map(\.name)   // ["id", "name", "age"]
    /// ```
    public struct Column: Hashable, Sendable {
        /// The column name.
        public var name: String
        /// The declared type, such as `INTEGER` or `TEXT`; empty for an untyped column.
        public var type: String
        /// Whether the column is declared `NOT NULL`.
        public var isNotNull: Bool
        /// The default value as SQL text, such as `'draft'` or `0`, if any.
        public var defaultValue: String?
        /// The column's position in the primary key, from 1; 0 when it is not part of it.
        public var primaryKeyPosition: Int

        /// A column description.
        public init(name: String, type: String, isNotNull: Bool, defaultValue: String?, primaryKeyPosition: Int) {
            self.name = name
            self.type = type
            self.isNotNull = isNotNull
            self.defaultValue = defaultValue
            self.primaryKeyPosition = primaryKeyPosition
        }
    }
}

extension SQLite.Database {
    /// The version number applications keep in the database header (`PRAGMA user_version`), 0
    /// in a new database.
    ///
    /// ```swift
    /// if try db.userVersion < 2 { … migrate … ; try db.setUserVersion(2) }
    /// ```
    public var userVersion: Int {
        get throws {
            try withReader { connection in
                try connection.execute("PRAGMA user_version").first?["user_version"]?.intValue ?? 0
            }
        }
    }

    /// Sets ``userVersion``. (A throwing method, because Swift properties cannot throw on set.)
    ///
    /// ```swift
    /// try db.setUserVersion(3)
    /// ```
    public func setUserVersion(_ version: Int) throws {
        guard let version = Int32(exactly: version) else {
            throw SQLite.Error(code: .range, message: "user_version must fit in 32 bits, got \(version)")
        }
        try withWriter { connection in
            _ = try connection.execute("PRAGMA user_version = \(version)")
        }
    }

    /// The names of the tables in the main database, sorted, without SQLite's internal tables.
    ///
    /// ```swift
    /// try db.tables()   // ["people", "tasks"]
    /// ```
    public func tables() throws -> [String] {
        let rows = try read("""
            SELECT name FROM sqlite_schema
            WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
            ORDER BY name
            """)
        return rows.compactMap { $0["name"]?.stringValue }
    }

    /// The columns of a table or view, in order.
    ///
    /// ```swift
    /// try db.columns(in: "t").map(\.name)   // ["id", "name"]
    /// ```
    ///
    /// - Throws: ``SQLite/Error`` when there is no such table.
    public func columns(in table: String) throws -> [SQLite.Column] {
        let columns = try withReader { try $0.columns(in: table) }
        if columns.isEmpty {
            throw SQLite.Error(code: .error, message: "no such table: \(table)")
        }
        return columns
    }
}

extension RawConnection {
    /// The columns of a table or view, in order; empty when there is no such table.
    func columns(in table: String) throws -> [SQLite.Column] {
        try withStatement("SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?)") { statement in
            try statement.bind([.text(table)])
            var columns: [SQLite.Column] = []
            while try statement.step() {
                columns.append(SQLite.Column(
                    name: statement.text(at: 0), type: statement.text(at: 1), isNotNull: statement.int64(at: 2) != 0,
                    defaultValue: statement.type(at: 3) == .null ? nil : statement.text(at: 3),
                    primaryKeyPosition: Int(statement.int64(at: 4))))
            }
            return columns
        }
    }

    /// ``columns(in:)`` by name.
    func columnsByName(in table: String) throws -> [String: SQLite.Column] {
        Dictionary(try columns(in: table).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }
}
