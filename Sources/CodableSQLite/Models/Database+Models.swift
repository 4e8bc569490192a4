import Foundation

extension SQLite.Database {
    /// Inserts `value`, or updates its row in place when a row has its id (an UPSERT: never a
    /// delete and re-insert). The table is created on first use and new properties get columns.
    ///
    /// ```swift
    /// try db.save(billy)
    /// let note = try db.save(Note(id: nil, text: "x"))   // note.id is now assigned
    /// ```
    ///
    /// - Returns: the saved value; for an optional integer id that was `nil`, with the id SQLite assigned.
    @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
    @discardableResult
    public func save<T: Model>(_ value: T) throws -> T {
        let table = try tableForWriting(T.self, sample: value)
        return try withWriter { connection in
            guard table.schema.relationships.isEmpty else {
                return try connection.inTransaction {
                    var saved = SavedValues(roots: [value])
                    return try saveGraph(value, table: table, on: connection, elementIndex: nil, saved: &saved)
                }
            }
            var explicitIDs = ExplicitIDs()
            return try saveRow(value, in: table, on: connection, elementIndex: nil, explicitIDs: &explicitIDs)
        }
    }

    /// Saves every value in one transaction: all of them or none. A value whose optional integer
    /// id is `nil` gets an id that no other value of the call (or of their related values) gives
    /// explicitly, so it never becomes an update of one of them.
    ///
    /// ```swift
    /// try db.save([alice, bob, carol])
    /// let notes = try db.save([Note(id: nil, text: "new"), Note(id: 1, text: "first")])   // empty table: notes[0].id == 2
    /// ```
    ///
    /// - Throws: the first failure, after rolling everything back; an ``SQLite/Error`` carries the
    ///   failing element's ``SQLite/Error/elementIndex``.
    @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
    @discardableResult
    public func save<T: Model>(_ values: [T]) throws -> [T] {
        try save(values, keepingExistingRelated: false)
    }

    /// ``save(_:)-([T])``; with `keepingExistingRelated`, a related value whose row exists is
    /// left as stored (created only when missing), for the sync engine: each row travels by its
    /// own change, never as a copy inside another value's graph.
    func save<T: Model>(_ values: [T], keepingExistingRelated: Bool) throws -> [T] {
        guard let first = values.first else { return [] }
        let table = try tableForWriting(T.self, sample: first)
        return try withWriter { connection in
            // An id SQLite assigns never takes one that another value of the call gives explicitly.
            guard table.schema.relationships.isEmpty else {
                var saved = SavedValues(roots: values)
                saved.keepsExistingRelated = keepingExistingRelated
                return try connection.forEachElement(values) { index, value in
                    try saveGraph(value, table: table, on: connection, elementIndex: index, saved: &saved)
                }
            }
            var explicitIDs = try ExplicitIDs(of: values, schema: table.schema)
            return try connection.forEachElement(values) { index, value in
                try saveRow(value, in: table, on: connection, elementIndex: index, explicitIDs: &explicitIDs)
            }
        }
    }

    /// Saves one row; `explicitIDs` are the ids the save call gives explicitly, which an id
    /// assigned to `value` must not take.
    func saveRow<T: Model>(
        _ value: T, in table: ModelTable, on connection: RawConnection, elementIndex: Int?, explicitIDs: inout ExplicitIDs
    ) throws -> T {
        let assignsID = table.schema.assignsID && isNilOptional(value.id)
        let assignedID = assignsID && !explicitIDs.isEmpty ? try explicitIDs.idToAssign(T.self, in: table, on: connection) : nil
        return try connection.withStatement(assignsID ? table.upsertReturning : table.upsert) { statement in
            try statement.bindRow(value, options: EncodingOptions(), elementIndex: elementIndex)
            try statement.bindAssignedID(assignedID, table: table)
            guard assignsID else {
                try statement.run()
                return value
            }
            return try savedRow(T.self, from: statement)
        }
    }

    /// The row an insert returned, with the id SQLite assigned. Apart from `saveRow`, so that
    /// saving a value with its id costs no `Optional<T>` metadata lookup.
    @inline(never)
    private func savedRow<T: Model>(_ type: T.Type, from statement: Statement) throws -> T {
        guard let saved = try statement.decodeSingleRow(T.self, options: DecodingOptions()) else {
            throw ModelError(.unexpectedResult, T.self, "the database returned no row for the inserted value")
        }
        return saved
    }

    /// Every saved value of a model type; `[]` before anything was saved.
    ///
    /// ```swift
    /// let everyone: [Person] = try db.get(Person.self)
    /// ```
    @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
    public func get<T: Model>(_ type: T.Type) throws -> [T] {
        try get(with: Filter<T>())
    }

    /// The values a filter matches, in its sort order.
    ///
    /// ```swift
    /// let adults = try db.get(with: Filter(\Person.age, is: .greater(than: 17)).sort(by: \.name))
    /// ```
    @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
    public func get<T: Model>(with filter: Filter<T>) throws -> [T] {
        let (clauses, arguments) = try filter.clauses()
        guard let table = try tableForReading(T.self) else { return [] }
        let ids = clauses.isEmpty || table.schema.relationships.isEmpty ? nil : "SELECT \(ModelReflection.quotedID) FROM \(SQLName.quoted(table.schema.table))" + clauses
        return try readModels(T.self, table: table, sql: table.select + clauses, arguments: arguments, ids: ids)
    }

    /// Calls `body` with each value a filter matches, in its order, reading `batchSize` values at
    /// a time: memory holds one batch, however many values match. The synchronous form of
    /// ``ModelStore/values(with:batchSize:)``, with the same batches; an error `body` throws
    /// stops the reading and is rethrown.
    ///
    /// ```swift
    /// var total = 0.0
    /// try db.forEach(with: Filter(#Predicate<Order> { $0.freight > 100 })) { total += $0.freight }
    /// ```
    @available(*, noasync, message: "blocks its thread; in async code iterate db.values(with:) with for try await")
    public func forEach<T: Model>(with filter: Filter<T>, batchSize: Int = 500, _ body: (T) throws -> Void) throws {
        var batches = StreamBatches(filter: filter, batchSize: batchSize)
        while let next = try batches.next() {
            let batch = try get(with: next)
            try batches.read(batch)
            for value in batch { try body(value) }
        }
    }

    /// The `WHERE`, `ORDER BY` and `LIMIT` clauses ``get(with:)`` runs for `filter`, arguments
    /// as `?` placeholders: to read what a filter or a `#Predicate` becomes. Nothing is run.
    ///
    /// ```swift
    /// print(try db.sql(for: Filter(#Predicate<Person> { $0.age > 17 })))
    /// // WHERE ("Person"."age" > ?)
    /// ```
    public func sql<T: Model>(for filter: Filter<T>) throws -> String {
        String(try filter.clauses().sql.dropFirst())
    }

    /// The value with this id, or `nil`.
    ///
    /// ```swift
    /// let billy: Person? = try db.get(Person.self, id: billyID)
    /// ```
    @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
    public func get<T: Model>(_ type: T.Type, id: T.ID) throws -> T? {
        guard let table = try tableForReading(T.self) else { return nil }
        let key = try ValueEncoder.value(for: id, at: .root, options: EncodingOptions())
        guard table.schema.relationships.isEmpty else {
            let ids = "SELECT \(ModelReflection.quotedID) FROM \(SQLName.quoted(table.schema.table)) WHERE \(ModelReflection.quotedID) = ?"
            return try readModels(T.self, table: table, sql: table.selectByID, arguments: [key], ids: ids).first
        }
        // The call apps make in loops: one bind, one row, no array, no `T?` (see `NoRow`).
        // (`value` is spelled `T`: returned directly, the closures would be inferred to return `T?`.)
        do {
            let value: T = try explainingMissingColumns(T.self, table: table) {
                try withReader { connection in
                    try connection.withStatement(table.selectByID) { statement in
                        try statement.bind(key, at: 1)
                        return try statement.decodeFirstRowOrThrow(T.self, options: DecodingOptions())
                    }
                }
            }
            return value
        } catch is NoRow {
            return nil
        }
    }

    /// How many values of a model type are saved; 0 before anything was saved.
    ///
    /// ```swift
    /// let n = try db.count(Person.self)
    /// ```
    @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
    public func count<T: Model>(_ type: T.Type) throws -> Int {
        try count(with: Filter<T>())
    }

    /// How many values a filter matches (its limit and page apply).
    ///
    /// ```swift
    /// let m = try db.count(with: Filter(\Person.age, is: .between(15, and: 35)))
    /// ```
    @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
    public func count<T: Model>(with filter: Filter<T>) throws -> Int {
        var dialect = SQLiteDialect()
        let sql = try filter.countSQL(table: SQLName.quoted(T.tableName), in: &dialect)
        guard try tableForReading(T.self) != nil else { return 0 }
        let arguments = dialect.arguments
        let rows = try withReader { connection in
            try connection.withStatement(sql) { statement in
                try statement.bind(arguments)
                return try statement.step() ? statement.int64(at: 0) : 0
            }
        }
        return Int(rows)
    }

    /// Deletes the row of `value` (found by id). Deleting a value that is not saved does nothing.
    ///
    /// ```swift
    /// try db.delete(billy)
    /// ```
    ///
    /// - Returns: whether a row was deleted.
    @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
    @discardableResult
    public func delete<T: Model>(_ value: T) throws -> Bool {
        try delete(T.self, id: value.id)
    }

    /// Deletes the row with this id, if any.
    ///
    /// ```swift
    /// try db.delete(Person.self, id: billyID)
    /// ```
    ///
    /// - Returns: whether a row was deleted.
    @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
    @discardableResult
    public func delete<T: Model>(_ type: T.Type, id: T.ID) throws -> Bool {
        guard let table = try tableForReading(T.self) else { return false }
        let key = try ValueEncoder.value(for: id, at: .root, options: EncodingOptions())
        return try withWriter { connection in
            guard table.schema.relationships.isEmpty else {
                return try connection.inTransaction { try deleteGraph(T.self, table: table, ids: [key], on: connection) } > 0
            }
            try connection.withStatement(table.deleteByID) { statement in
                try statement.bind([key])
                try Self.translatingForeignKeyFailure(T.self) { try statement.run() }
            }
            return connection.changes > 0
        }
    }

    /// Deletes the rows of several values in one transaction.
    ///
    /// ```swift
    /// try db.delete([alice, bob])
    /// ```
    ///
    /// - Returns: how many rows were deleted.
    @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
    @discardableResult
    public func delete<T: Model>(_ values: [T]) throws -> Int {
        guard let table = try tableForReading(T.self) else { return 0 }
        let keys = try values.map { try ValueEncoder.value(for: $0.id, at: .root, options: EncodingOptions()) }
        return try withWriter { connection in
            guard table.schema.relationships.isEmpty else {
                return try connection.inTransaction { try deleteGraph(T.self, table: table, ids: keys, on: connection) }
            }
            return try connection.forEachElement(keys) { _, key in
                try connection.withStatement(table.deleteByID) { statement in
                    try statement.bind([key])
                    try Self.translatingForeignKeyFailure(T.self) { try statement.run() }
                }
                return connection.changes
            }.reduce(0, +)
        }
    }

    /// Deletes the values a filter matches (its sort order and limit apply).
    ///
    /// ```swift
    /// try db.delete(with: Filter(\Person.name, is: .equal(to: "Bob")))
    /// ```
    ///
    /// - Returns: how many rows were deleted.
    @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
    @discardableResult
    public func delete<T: Model>(with filter: Filter<T>) throws -> Int {
        var dialect = SQLiteDialect()
        let name = SQLName.quoted(T.tableName), id = SQLName.quoted(try ModelReflection.of(T.self).id.name)
        let condition = try filter.deleteCondition(table: name, id: id, in: &dialect)
        guard let table = try tableForReading(T.self) else { return 0 }
        let arguments = dialect.arguments
        let sql = "DELETE FROM \(name)\(condition)"
        return try withWriter { connection in
            guard table.schema.relationships.isEmpty else {
                return try connection.inTransaction {
                    let ids = try connection.withStatement("SELECT \(id) FROM \(name)\(condition)") { statement in
                        try statement.bind(arguments)
                        return try statement.firstColumnValues()
                    }
                    return try deleteGraph(T.self, table: table, ids: ids, on: connection)
                }
            }
            try connection.withStatement(sql) { statement in
                try statement.bind(arguments)
                try Self.translatingForeignKeyFailure(T.self) { try statement.run() }
            }
            return connection.changes
        }
    }

    /// Decodes model rows, explaining a missing column as a schema change rather than a bare `keyNotFound`.
    private func readModels<T: Model>(_ type: T.Type, table: ModelTable, sql: String, arguments: [SQLite.Value], ids: String?) throws -> [T] {
        try explainingMissingColumns(T.self, table: table) {
            try withReader { connection in
                guard table.schema.relationships.isEmpty else {
                    return try connection.inReadTransaction {
                        try loadGraph(T.self, table: table, sql: sql, arguments: arguments, ids: ids, on: connection)
                    }
                }
                return try connection.withStatement(sql) { statement in
                    try statement.bind(arguments)
                    return try statement.decodeRows(T.self, options: DecodingOptions(), indexesRows: false)
                }
            }
        }
    }

    /// `read`'s result; a property without a column becomes a `ModelError` naming the schema
    /// change rather than a bare `keyNotFound`.
    func explainingMissingColumns<T: Model, R>(_ type: T.Type, table: ModelTable, _ read: () throws -> R) throws -> R {
        do {
            return try read()
        } catch DecodingError.keyNotFound(let key, _) where !table.columns.contains(where: { $0.name == key.stringValue }) {
            throw ModelError(.schemaMismatch, T.self, """
                has the property `\(key.stringValue)`, but table \(SQLName.quoted(table.schema.table)) has no such column \
                and its rows have no value for it. Make the property optional, or add the column with a value for the \
                existing rows in a migration (SQLite.Migrator).
                """)
        }
    }
}

extension SQLite.Database {
    /// The rowid of the row with this id, or `nil` (no table, no row).
    func rowID<T: Model>(of type: T.Type, id: T.ID) throws -> Int64? {
        guard let table = try tableForReading(T.self) else { return nil }
        let key = try ValueEncoder.value(for: id, at: .root, options: EncodingOptions())
        let sql = "SELECT rowid FROM \(SQLName.quoted(table.schema.table)) WHERE \(SQLName.quoted(table.schema.id.name)) = ?"
        return try withReader { connection in
            try connection.withStatement(sql) { statement in
                try statement.bind([key])
                return try statement.step() ? statement.int64(at: 0) : nil
            }
        }
    }

    /// The SQL `count(with:)` runs for `filter` (its arguments aside), or `nil` before the table exists.
    func countStatement<T: Model>(for filter: Filter<T>) throws -> String? {
        var dialect = SQLiteDialect()
        let sql = try filter.countSQL(table: SQLName.quoted(T.tableName), in: &dialect)
        return try tableForReading(T.self) == nil ? nil : sql
    }
}

extension SQLite.Error: EngineError {
    /// `ModelError.Code.uniqueViolation` for a `UNIQUE` constraint failure (a model's unique
    /// index), otherwise `nil`.
    package var modelErrorCode: ModelError.Code? {
        extendedCode == .constraintUnique ? .uniqueViolation : nil
    }
}
