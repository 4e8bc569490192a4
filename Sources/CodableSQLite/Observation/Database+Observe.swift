import Dispatch

extension SQLite.Database {
    // MARK: SQL

    /// Observes the single row of `sql` decoded as `T` (`nil` while there is no row): what
    /// `SQLite.Decoder.decode(T.self, using:arguments:)` returns, now and after each commit that
    /// changes it.
    ///
    /// ```swift
    /// for try await n in db.observe(Int.self, using: "SELECT count(*) FROM tasks WHERE dueDate < :d", arguments: ["d": .text(d)]) {
    ///     print(n ?? 0, "tasks due")
    /// }
    /// ```
    ///
    /// As with the decoder, an array type means every row: `observe([Task].self, …)`.
    public func observe<T: Decodable & Sendable>(_ type: T.Type, using sql: String, arguments: SQLiteArguments = [:]) -> ObservedValues<T?> {
        observation(sql: sql, arguments: arguments) { database in
            try await SQLite.Decoder(database).decode(T.self, using: sql, arguments: arguments)
        }
    }

    /// Observes every row of `sql` decoded as `T`, now and after each commit that changes them.
    ///
    /// ```swift
    /// for try await open in db.observe([Task].self, using: "SELECT * FROM tasks WHERE isCompleted = 0 ORDER BY dueDate") {
    ///     render(open)
    /// }
    /// ```
    public func observe<T: Decodable & Sendable>(_ type: [T].Type, using sql: String, arguments: SQLiteArguments = [:]) -> ObservedValues<[T]> {
        observation(sql: sql, arguments: arguments) { database in
            try await SQLite.Decoder(database).decode([T].self, using: sql, arguments: arguments)
        }
    }

    /// Observes the rows of `sql` as dictionaries.
    ///
    /// ```swift
    /// for try await rows in db.observe(rowsOf: "SELECT title FROM tasks") { print(rows.count) }
    /// ```
    public func observe(rowsOf sql: String, arguments: SQLiteArguments = [:]) -> ObservedValues<[SQLiteRow]> {
        observation(sql: sql, arguments: arguments) { database in try await database.read(sql, arguments: arguments) }
    }

    /// An observation of `sql`, whose region the authorizer reads along with the first value,
    /// limited to the rows its `WHERE` pins by rowid when it provably does (``PinnedRows``).
    private func observation<Value: Sendable>(
        sql: String, arguments: SQLiteArguments, read: @escaping @Sendable (SQLite.Database) async throws -> Value
    ) -> ObservedValues<Value> {
        ObservedValues { [weak self] in
            LiveQuery(database: self, region: nil) { database in
                let region = try await database.performRead { raw in
                    try raw.readRegion(of: sql, pinningRowsWith: .named(arguments))
                }
                return (try await read(database), region)
            }
        }
    }

    // MARK: Models

    /// Observes the values a filter matches, in its order: now, and after each commit that
    /// changes the model's table.
    ///
    /// ```swift
    /// for try await adults in db.observe(Filter(\Person.age, is: .greater(than: 17)).sort(by: \.name)) {
    ///     print(adults.map(\.name))
    /// }
    /// ```
    public func observe<T: Model & Sendable>(_ filter: Filter<T>) -> ObservedValues<[T]> {
        modelObservation(T.self) { database in try await database.get(with: filter) }
    }

    /// Observes the value with this id (`nil` while there is none). Writes to other rows of the
    /// table do not read it again.
    ///
    /// ```swift
    /// for try await billy in db.observe(Person.self, id: billyID) { print(billy?.name ?? "gone") }
    /// ```
    public func observe<T: Model & Sendable>(_ type: T.Type, id: T.ID) -> ObservedValues<T?> where T.ID: Sendable {
        ObservedValues { [weak self] in
            LiveQuery(database: self, region: nil) { database in
                try await database.performRead { raw in
                    let value = try database.get(T.self, id: id)
                    var region = try database.modelRegion(T.self)
                    let schema = try ModelReflection.of(T.self)
                    let key = try ValueEncoder.value(for: id, at: .root, options: EncodingOptions())
                    if case .integer(let rowID) = key,
                       raw.findsRowsByRowID(column: ModelReflection.quotedID, of: SQLName.quoted(schema.table)) {
                        // The id is the rowid: only that rowid matters, and an UPDATE that sets
                        // it (which reports the new rowid only) may move the row in or out.
                        region.limit(table: schema.table, toRowIDs: [rowID], column: schema.id.name)
                    } else {
                        // The row's rowid if it exists; only an insert can bring it otherwise (the
                        // model API never changes an id: an SQL UPDATE giving another row this
                        // id is not seen until something else re-reads).
                        let rowID = try database.rowID(of: T.self, id: id)
                        region.limit(table: schema.table, toRowIDs: rowID.map { [$0] } ?? [])
                    }
                    return (value, region)
                }
            }
        }
    }

    /// Observes how many values a filter matches. Only writes to the columns the filter reads
    /// (and inserts and deletes) count it again.
    ///
    /// ```swift
    /// for try await n in db.observe(count: Filter(\Person.age, is: .less(than: 18))) { print(n, "minors") }
    /// ```
    public func observe<T: Model & Sendable>(count filter: Filter<T>) -> ObservedValues<Int> {
        modelObservation(T.self, countOf: filter) { database in try await database.count(with: filter) }
    }

    private func modelObservation<T: Model & Sendable, Value: Sendable>(
        _ type: T.Type, countOf filter: Filter<T>? = nil, read: @escaping @Sendable (SQLite.Database) async throws -> Value
    ) -> ObservedValues<Value> {
        ObservedValues { [weak self] in
            LiveQuery(database: self, region: nil) { database in
                let region = try await database.performRead { _ in
                    if let filter, let sql = try database.countStatement(for: filter) {
                        return try database.readRegion(of: sql)
                    }
                    return try database.modelRegion(T.self)
                }
                return (try await read(database), region)
            }
        }
    }

    /// Every column of a model's table, and of the tables its relationships load from (related
    /// models' tables and link tables, all the way down the graph: `ModelReflection.graphTables`).
    func modelRegion<T: Model>(_ type: T.Type) throws -> DatabaseRegion {
        var region = DatabaseRegion()
        for table in try ModelReflection.graphTables(of: T.self) { region.insert(table: table, column: nil) }
        return region
    }
}

extension SQLite.Database: ObservableModelStore {}

extension SQLite.Database {
    /// Calls `onChange` on `queue` with the rows of `sql`: first the current rows, then the new
    /// rows after each commit that changes them. The callback form of ``observe(rowsOf:arguments:)``;
    /// the observation runs until the token is cancelled or released.
    ///
    /// ```swift
    /// let token = try db.observe("SELECT * FROM tasks", queue: .main) { rows in tableView.reload(rows) }
    /// ```
    ///
    /// - Parameters:
    ///   - sql: the query to observe.
    ///   - arguments: its named arguments.
    ///   - queue: where `onChange` and `onError` are called.
    ///   - onError: called on `queue` if a read fails (the table was dropped); the observation then ends.
    ///   - onChange: called on `queue` with the rows.
    /// - Throws: ``SQLite/Error`` when the SQL cannot be prepared, before anything is observed.
    public func observe(
        _ sql: SQL, arguments: SQLiteArguments = [:], queue: DispatchQueue = .main,
        onError: (@Sendable (any Error) -> Void)? = nil,
        _ onChange: @escaping @Sendable ([SQLiteRow]) -> Void
    ) throws -> ObservationToken {
        _ = try readRegion(of: sql)   // fails now for SQL that cannot run
        return observe(rowsOf: sql, arguments: arguments).sink(queue: queue, onError: onError, onChange)
    }
}
