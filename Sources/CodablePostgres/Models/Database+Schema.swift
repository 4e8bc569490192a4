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
            let search = try SearchPlan.ifSearchable(table.schema.modelType)
            try await prepareWaitingForLocks(table, indexes: indexes, search: search)
            searchSignatures.withLock { $0[table.schema.table] = search?.signature }
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

    private func prepareWaitingForLocks(_ table: PostgresTable, indexes: [String], search: SearchPlan?) async throws {
        try await transactionOnOwnConnection { session in
                // Instances take turns under the advisory lock (as long as another needs); the
                // limit is for the locks the DDL itself takes.
                try await session.lock(table: table.schema.table)
                let wait = Self.schemaLockWait.components
                _ = try await session.rows("SET LOCAL lock_timeout = '\(max(1, wait.seconds * 1_000 + wait.attoseconds / 1_000_000_000_000_000))ms'")
                var binds = PostgresBindings()
                binds.append(table.schema.table)
                let existing = try await session.rows("""
                    SELECT col.column_name::text, col.data_type::text, col.is_nullable::text = 'YES', \
                    col.column_default IS NOT NULL OR col.is_identity::text = 'YES' OR col.is_generated::text = 'ALWAYS', \
                    EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) \
                    WHERE i.indrelid = format('%I.%I', col.table_schema, col.table_name)::regclass AND i.indisprimary \
                    AND i.indnkeyatts = 1 AND a.attname = col.column_name) \
                    FROM information_schema.columns col WHERE col.table_schema = current_schema() AND col.table_name = $1
                    """, binds)
                if existing.isEmpty {
                    _ = try await session.rows(table.createTable)
                } else {
                    var columns: [String: SchemaChange.Column] = [:]
                    for row in existing {
                        let (name, type, isNullable, hasDefault, isPrimaryKey) = try row.decode((String, String, Bool, Bool, Bool).self)
                        columns[name] = SchemaChange.Column(
                            name: name, type: type, accepts: table.column(named: name).map { $0.kind.sqlType == type } ?? true,
                            isNotNull: !isNullable, hasDefault: hasDefault, isPrimaryKey: isPrimaryKey)
                    }
                    try await evolve(table, existing: columns, session: session)
                    if columns[Self.searchColumn] != nil, search == nil {
                        try await removeSearch(of: table, session: session)
                    }
                }
                if let search {
                    try await prepareSearch(search, of: table, session: session)
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

    /// Brings the table in line with the model, as `SchemaChange` decides (the rules both engines
    /// share): the rows asked about only when a rule needs them.
    private func evolve(_ table: PostgresTable, existing: [String: SchemaChange.Column], session: Postgres.Session) async throws {
        let schema = table.schema
        let properties = schema.properties.filter { table.column(named: $0.name) != nil }
        let questions = SchemaChange.questions(for: schema, columns: properties, existing: existing)
        var answers = SchemaChange.Answers()
        if questions.hasRows {
            answers.hasRows = try await session.integers("SELECT count(*) FROM (SELECT 1 FROM \(table.quotedTable) LIMIT 1) AS x").first == 1
        }
        for name in questions.nullsIn {
            answers.nulls[name] = Int(try await session.integers(
                "SELECT count(*) FROM \(table.quotedTable) WHERE \(SQLName.quoted(name)) IS NULL").first ?? 0)
        }
        let steps = try SchemaChange.steps(for: schema, columns: properties, existing: existing, answers: answers) { property in
            table.column(named: property.name)?.kind.sqlType ?? "jsonb"
        }
        for step in steps {
            switch step {
            case .addColumn(let property):
                guard let column = table.column(named: property.name) else { continue }
                _ = try await session.rows("ALTER TABLE \(table.quotedTable) ADD COLUMN \(table.definition(of: column))")
            case .dropNotNull(let properties):
                for property in properties {
                    _ = try await session.rows("ALTER TABLE \(table.quotedTable) ALTER COLUMN \(SQLName.quoted(property.name)) DROP NOT NULL")
                }
            }
        }
    }
}
#endif
