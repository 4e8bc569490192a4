#if Postgres
import Foundation
import PostgresNIO

extension Postgres.Session {
    /// The model's table, created or brought up to date the first time it is used (for a save:
    /// with the columns `sample` encodes).
    func table<T: Model>(for type: T.Type, sample: T? = nil) async throws -> PostgresTable {
        let key = ObjectIdentifier(T.self)
        if let table = database.tables.withLock({ $0[key] }), table.isWritable || sample == nil { return table }
        let schema = try ModelReflection.of(T.self)
        let properties = try sample.map { try schema.storedColumns(of: $0) } ?? schema.properties
        // The targets' tables first: the foreign keys and link tables refer to them.
        var targets: [String: PostgresTable] = [:]
        for relationship in schema.relationships {
            func prepare<Target: Model>(_ target: Target.Type) async throws -> PostgresTable { try await self.table(for: Target.self) }
            targets[relationship.name] = try await prepare(relationship.target)
        }
        let table = try PostgresTable(schema: schema, properties: properties, isWritable: sample != nil, targets: targets)
        try await database.prepare(table, indexes: try table.createIndexes(for: T.self))
        database.tables.withLock { $0[key] = table }
        return table
    }
}

extension Postgres.Session {
    /// Waits for the transaction-scoped advisory lock named after `table`, which every instance
    /// takes before changing the table's schema.
    func lock(table: String) async throws {
        var binds = PostgresBindings()
        binds.append(Int64(bitPattern: SQLName.stableHash("CodablePostgres table " + table)))
        _ = try await rows("SELECT pg_advisory_xact_lock($1)", binds)
    }
}

extension Postgres.Database {
    /// Creates the table, or adds the columns a newer version of the model has, and the indexes.
    ///
    /// Runs in its own transaction on a connection of its own (never inside a caller's
    /// transaction, which a rollback would undo behind the cache, and never on the pool's, which
    /// that transaction may hold), holding an advisory lock named after the table: several app
    /// instances preparing the same table at once take turns, and the later ones find it ready.
    ///
    /// It waits at most ``schemaLockWait`` (10 seconds) for a lock: a table is prepared on a connection of its own, so
    /// it cannot see through the caller's transaction, and DDL that needs a lock that transaction
    /// holds (a foreign key to a table it wrote) would otherwise wait for it forever.
    func prepare(_ table: PostgresTable, indexes: [String]) async throws {
        let wait = Self.schemaLockWait
        do {
            try await prepareWaitingForLocks(table, indexes: indexes)
        } catch let error as Postgres.Error where error.sqlState == "55P03" {
            let model = table.schema.modelType
            throw Postgres.Error(.server, sqlState: "55P03", message: """
                preparing the table of \(model) (creating or changing it, its indexes or link tables) waited \(wait) for \
                a lock another transaction holds. Tables are prepared on a connection of their own, so this can be the \
                caller's own transaction, when it has written a table that \(model) refers to (a relationship's \
                target) before the first use of \(model): use \(model) once before such a transaction. (\(error.message))
                """, sql: error.sql)
        }
    }

    /// How long preparing a table waits for a lock before it fails with `55P03` (tests shorten it).
    @TaskLocal static var schemaLockWait = Duration.seconds(10)

    private func prepareWaitingForLocks(_ table: PostgresTable, indexes: [String]) async throws {
        try await transactionOnOwnConnection { session in
                // Instances take turns under the advisory lock (as long as another needs); the
                // limit is for the locks the DDL itself takes.
                try await session.lock(table: table.schema.table)
                let wait = Self.schemaLockWait.components
                _ = try await session.rows("SET LOCAL lock_timeout = '\(max(1, wait.seconds * 1_000 + wait.attoseconds / 1_000_000_000_000_000))ms'")
                var binds = PostgresBindings()
                binds.append(table.schema.table)
                let existing = try await session.rows("""
                    SELECT column_name::text, data_type::text, is_nullable::text = 'YES', column_default IS NOT NULL OR is_identity::text = 'YES' \
                    FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1
                    """, binds)
                if existing.isEmpty {
                    _ = try await session.rows(table.createTable)
                } else {
                    var columns: [String: (type: String, isNullable: Bool, hasDefault: Bool)] = [:]
                    for row in existing {
                        let (name, type, isNullable, hasDefault) = try row.decode((String, String, Bool, Bool).self)
                        columns[name] = (type, isNullable, hasDefault)
                    }
                    try await evolve(table, existing: columns, session: session)
                    if columns[Self.searchColumn] != nil, try SearchPlan.ifSearchable(table.schema.modelType) == nil {
                        try await removeSearch(of: table, session: session)
                    }
                }
                if let plan = try SearchPlan.ifSearchable(table.schema.modelType) {
                    try await prepareSearch(plan, of: table, session: session)
                }
                // Only what is missing: CREATE INDEX IF NOT EXISTS locks the table even when the
                // index exists, which would wait for any transaction writing the table.
                let statements = table.createLinkTables + indexes
                var names = PostgresBindings()
                names.append(statements.compactMap(Self.createdName))
                let existingNames = Set(try await session.rows("""
                    SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                    WHERE n.nspname = current_schema() AND c.relname = ANY($1::text[])
                    """, names).map { try $0.decode(String.self) })
                for statement in statements where !(Self.createdName(statement).map(existingNames.contains) ?? false) {
                    _ = try await session.rows(statement)
                }
        }
    }

    /// The name a `CREATE … IF NOT EXISTS "name" …` statement creates (unquoted).
    static func createdName(_ statement: String) -> String? {
        guard let marker = statement.range(of: "IF NOT EXISTS \"") else { return nil }
        var name = "", rest = statement[marker.upperBound...]
        while let character = rest.first {
            rest = rest.dropFirst()
            if character == "\"" {
                guard rest.first == "\"" else { return name }
                rest = rest.dropFirst()
            }
            name.append(character)
        }
        return nil
    }

    /// The same rules as on SQLite: new optional properties become columns; a new non-optional
    /// property needs an empty table; a changed type, or a column the model no longer writes that
    /// cannot be left out, needs a migration. A property made optional drops `NOT NULL`.
    private func evolve(
        _ table: PostgresTable, existing: [String: (type: String, isNullable: Bool, hasDefault: Bool)], session: Postgres.Session
    ) async throws {
        let model = table.schema.modelType
        func mismatch(_ message: String) -> ModelError {
            ModelError(.schemaMismatch, model, "the table \(table.schema.table) \(message); migrate it (see Migrator) or use a new table")
        }
        var isEmpty: Bool?
        func tableIsEmpty() async throws -> Bool {
            if let isEmpty { return isEmpty }
            let found = try await session.integers("SELECT count(*) FROM (SELECT 1 FROM \(table.quotedTable) LIMIT 1) AS x")
            isEmpty = found.first == 0
            return found.first == 0
        }
        for column in table.columns {
            guard let current = existing[column.name] else {
                if !column.isOptional, try await !tableIsEmpty() {
                    throw mismatch("has rows, and the new non-optional property \(column.name) has no value for them; make it optional")
                }
                _ = try await session.rows("ALTER TABLE \(table.quotedTable) ADD COLUMN \(table.definition(of: column))")
                continue
            }
            guard current.type == column.kind.sqlType else {
                throw mismatch("stores \(column.name) as \(current.type), but the property is now stored as \(column.kind.sqlType)")
            }
            if column.isOptional, !current.isNullable, column.name != table.id.name {
                _ = try await session.rows("ALTER TABLE \(table.quotedTable) ALTER COLUMN \(column.quoted) DROP NOT NULL")
            } else if !column.isOptional, current.isNullable {
                let nulls = try await session.integers("SELECT count(*) FROM (SELECT 1 FROM \(table.quotedTable) WHERE \(column.quoted) IS NULL LIMIT 1) AS x")
                if nulls.first != 0 {
                    throw mismatch("has rows without \(column.name), which the model now requires; make it optional again or fill it in")
                }
            }
        }
        let written = Set(table.columns.map(\.name))
        for (name, current) in existing where !written.contains(name) && !current.isNullable && !current.hasDefault {
            throw mismatch("requires a value for \(name), which the model no longer has; drop the column or give it a default")
        }
    }
}
#endif
