import Dispatch

extension SQLite.Database {
    /// The rowids each committed transaction inserts, updates and deletes in a table, one batch
    /// per commit that changed it. Live as soon as this returns.
    ///
    /// ```swift
    /// for try await batch in db.changes(in: "tasks") {
    ///     print("inserted", batch.inserted, "deleted", batch.deleted)
    /// }
    /// ```
    ///
    /// Waits for the writer the first time something observes the database (to start between two
    /// transactions).
    public func changes(in table: String) -> ObservedValues<ChangeBatch<Int64>> {
        let name = table.lowercased()
        let feed = ChangeFeed<Int64>(database: self, table: table) { _, change in
            switch change {
            case .external:
                return ChangeBatch(inserted: [], updated: [], deleted: [], isComplete: false)
            case .local(let changes):
                guard let table = changes.tables[name] else { return nil }
                return ChangeBatch(
                    inserted: table.inserted, updated: table.updated, deleted: table.deleted,
                    isComplete: !table.hasRowsWithoutRowID)
            }
        }
        feed.start()
        return ObservedValues(running: feed)
    }

    /// The ids of the values each committed transaction inserts, updates and deletes, one batch
    /// per commit that changed the model's table. Live as soon as this returns.
    ///
    /// ```swift
    /// for try await batch in db.changes(to: Person.self) {
    ///     print(batch.inserted, batch.updated, batch.deleted)   // Set<UUID>
    /// }
    /// ```
    ///
    /// Ids come from temporary triggers on the table, installed while a sequence of this kind
    /// exists, so deletes report the ids of the rows deleted, whoever deleted them through this
    /// database object (SQL, cascades, the model API). A commit by another connection or process
    /// gives a batch with `isComplete` `false`.
    public func changes<T: Model & Sendable>(to type: T.Type) -> ObservedValues<ChangeBatch<T.ID>> where T.ID: Sendable {
        let schema: ModelReflection
        do {
            schema = try ModelReflection.of(T.self)
        } catch {
            return ObservedValues(running: ChangeFeed<T.ID>(failing: error))
        }
        let name = schema.table.lowercased()
        let feed = ChangeFeed<T.ID>(database: self, table: schema.table, translate: { database, change in
            switch change {
            case .external:
                return ChangeBatch(inserted: [], updated: [], deleted: [], isComplete: false)
            case .local(let changes):
                guard let table = changes.tables[name] else { return nil }
                if database.keyTriggers.isInstalled(schema) {
                    return try await database.performRead { raw in
                        var batch = ChangeBatch(
                            inserted: try raw.decodeKeys(table.insertedKeys, as: T.ID.self), updated: [],
                            deleted: try raw.decodeKeys(table.deletedKeys, as: T.ID.self), isComplete: !table.hasRowsWithoutRowID)
                        batch.noteUpdate(
                            old: try raw.decodeKeys(table.updatedOldKeys, as: T.ID.self), new: try raw.decodeKeys(table.updatedKeys, as: T.ID.self))
                        return batch
                    }
                }
                // The table was created after the sequence: this commit's rows are found by
                // rowid (they were just inserted), and the triggers are installed now.
                try await database.performWrite { _ in try database.keyTriggers.installIfPending(schema, on: database) }
                return try await database.performRead { raw in
                    let inserted = try raw.decodeKeys(raw.keys(of: schema, rowIDs: table.inserted), as: T.ID.self)
                    return ChangeBatch(
                        inserted: inserted, updated: try raw.decodeKeys(raw.keys(of: schema, rowIDs: table.updated), as: T.ID.self).subtracting(inserted),
                        deleted: [], isComplete: table.deleted.isEmpty && !table.hasRowsWithoutRowID)
                }
            }
        }, onEnd: { database in
            database.keyTriggers.release(schema, on: database)
        })
        do {
            try keyTriggers.retain(schema, on: self)
        } catch {
            return ObservedValues(running: ChangeFeed<T.ID>(failing: error))
        }
        feed.start()
        return ObservedValues(running: feed)
    }

    /// The temporary key triggers of model tables.
    var keyTriggers: KeyTriggers {
        attachment(KeyTriggers.self) { _ in KeyTriggers() }
    }
}

/// Temporary triggers that report the ids of a model table's changed rows, installed on the
/// writer while at least one `changes(to:)` sequence follows the table.
final class KeyTriggers: Sendable {
    private struct State {
        var counts: [String: Int] = [:]
        /// Tables followed before they existed: their triggers wait for the table.
        var pending: Set<String> = []
        /// Whether the model layer calls us when it creates a table.
        var isListening = false
    }

    private let state = Locked(State())

    func isInstalled(_ schema: ModelReflection) -> Bool {
        state.withLock { $0.counts[schema.table, default: 0] > 0 && !$0.pending.contains(schema.table) }
    }

    func retain(_ schema: ModelReflection, on database: SQLite.Database) throws {
        let first = state.withLock { state -> Bool in
            state.counts[schema.table, default: 0] += 1
            return state.counts[schema.table] == 1
        }
        guard first else { return }
        do {
            try database.withWriter { raw in try install(schema, on: raw, database: database) }
        } catch {
            state.withLock { $0.counts[schema.table, default: 1] -= 1 }
            throw error
        }
    }

    /// Installs the triggers of a table followed before it existed, once it exists.
    func installIfPending(_ schema: ModelReflection, on database: SQLite.Database) throws {
        guard state.withLock({ $0.pending.contains(schema.table) }) else { return }
        try database.withWriter { raw in try install(schema, on: raw) }
    }

    /// The same, on the writer connection the caller holds.
    func installIfPending(_ schema: ModelReflection, on connection: RawConnection) throws {
        guard state.withLock({ $0.pending.contains(schema.table) }) else { return }
        try install(schema, on: connection)
    }

    private func install(_ schema: ModelReflection, on raw: RawConnection, database: SQLite.Database? = nil) throws {
        guard !(try raw.columns(in: schema.table).isEmpty) else {
            let listen = state.withLock { state -> Bool in
                state.pending.insert(schema.table)
                defer { state.isListening = true }
                return !state.isListening
            }
            // The table gets its triggers in the transaction that creates it, before its first row.
            if listen, let database {
                database.models.onTableCreated { [weak self] schema, connection in
                    try self?.installIfPending(schema, on: connection)
                }
            }
            return
        }
        try Self.defineKeyNoteFunction(on: raw)
        try raw.execute(Self.createSQL(schema))
        state.withLock { _ = $0.pending.remove(schema.table) }
    }

    func release(_ schema: ModelReflection, on database: SQLite.Database) {
        let last = state.withLock { state -> Bool in
            state.counts[schema.table, default: 1] -= 1
            return state.counts[schema.table] == 0
        }
        guard last else { return }
        // Off the caller's thread, which may be any (an iterator going away).
        DispatchQueue.global().async { [weak database] in
            guard let database, self.state.withLock({ $0.counts[schema.table, default: 0] == 0 }) else { return }
            _ = try? database.withWriter { raw in try raw.execute(Self.dropSQL(schema)) }
            self.state.withLock { _ = $0.pending.remove(schema.table) }
        }
    }

    private static func triggerName(_ schema: ModelReflection, _ operation: String) -> String {
        SQLName.quoted("codablesqlite_changes_\(schema.table)_\(operation)")
    }

    /// The SQL function the temporary triggers call to report the keys of changed rows:
    /// `codablesqlite_note_key(table, operation, key)`, where operation is 1 for an insert, 2 for
    /// an update and 3 for a delete. It notes them into the writer's change tracker, when there is one.
    static let keyNoteFunction = "codablesqlite_note_key"

    static func defineKeyNoteFunction(on raw: RawConnection) throws {
        try raw.defineFunction(keyNoteFunction, argumentCount: 3) { [unowned raw] arguments in
            if arguments.count == 3, case .text(let table) = arguments[0], case .integer(let operation) = arguments[1] {
                raw.tracker?.noteKey(table: table, operation: Int32(truncatingIfNeeded: operation), key: arguments[2])
            }
            return .null
        }
    }

    static func createSQL(_ schema: ModelReflection) -> String {
        let table = SQLName.quoted(schema.table)
        let id = SQLName.quoted(schema.id.name)
        let literal = SQLName.literal(schema.table)
        let note = keyNoteFunction
        // An update reports the key before and after (ChangeBatch.noteUpdate tells an id change).
        return [("insert", "INSERT", "\(note)(\(literal), 1, new.\(id))"), ("delete", "DELETE", "\(note)(\(literal), 3, old.\(id))"),
                ("update", "UPDATE", "\(note)(\(literal), 2, new.\(id)), \(note)(\(literal), 4, old.\(id))")].map { name, event, calls in
            "CREATE TEMP TRIGGER IF NOT EXISTS \(triggerName(schema, name)) AFTER \(event) ON main.\(table) BEGIN SELECT \(calls); END;"
        }.joined(separator: "\n")
    }

    static func dropSQL(_ schema: ModelReflection) -> String {
        ["insert", "update", "delete"].map { "DROP TRIGGER IF EXISTS temp.\(triggerName(schema, $0));" }.joined(separator: "\n")
    }
}

extension RawConnection {
    /// The stored ids of rows, by rowid.
    func keys(of schema: ModelReflection, rowIDs: Set<Int64>) throws -> [SQLite.Value] {
        let sql = "SELECT \(SQLName.quoted(schema.id.name)) FROM \(SQLName.quoted(schema.table)) WHERE rowid = ?"
        return try withStatement(sql) { statement in
            var keys: [SQLite.Value] = []
            for rowID in rowIDs {
                try statement.bind([.integer(rowID)])
                if try statement.step() { keys.append(statement.value(at: 0)) }
                statement.reset()
            }
            return keys
        }
    }

    /// Stored keys decoded as a model's ids, the way ids are stored.
    func decodeKeys<ID: Decodable & Hashable>(_ keys: [SQLite.Value], as type: ID.Type) throws -> Set<ID> {
        guard !keys.isEmpty else { return [] }
        return try withStatement("SELECT ?") { statement in
            var ids: Set<ID> = []
            for key in keys {
                try statement.bind([key])
                guard try statement.step() else { continue }
                ids.insert(try statement.decodeColumnValue(ID.self, options: DecodingOptions()))
                statement.reset()
            }
            return ids
        }
    }
}
