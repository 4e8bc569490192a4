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
        // Tables read before embed this one's shape as it was.
        database.readTables.withLock { $0.removeAll() }
        return table
    }
}

extension Postgres.Session {
    /// The model's table as it exists, for reading: `nil` when it does not exist. A read never
    /// creates or changes a table (a read-only role or a replica can read): a missing table reads
    /// as empty, a column the model has and the table lacks is left out of the read (a
    /// non-optional one fails the decoding with the schema change named), and a to-many whose
    /// link table is missing reads as empty. A table holding a relationship as JSON is refused as
    /// ``SchemaChange/checkRelationshipColumns(of:columns:foreignKeys:)`` decides.
    func readTable<T: Model>(for type: T.Type) async throws -> PostgresTable? {
        let key = ObjectIdentifier(T.self)
        if let table = database.tables.withLock({ $0[key] }) ?? database.readTables.withLock({ $0[key] }) { return table }
        let schema = try ModelReflection.of(T.self)
        var binds = PostgresBindings()
        binds.append(schema.table)
        binds.append(schema.relationships.filter(\.isToMany).map(\.linkTable))
        // The table's columns ('c'), those that are foreign keys ('f'), and the link tables that exist ('l').
        let catalog = try await rows("""
            SELECT 'c', column_name::text FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 \
            UNION ALL SELECT 'f', a.attname::text FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid \
            JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = ANY(k.conkey) \
            WHERE k.contype = 'f' AND n.nspname = current_schema() AND c.relname = $1 \
            UNION ALL SELECT 'l', c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
            WHERE n.nspname = current_schema() AND c.relname = ANY($2::text[])
            """, binds).map { try $0.decode((String, String).self) }
        let columns = Set(catalog.filter { $0.0 == "c" }.map(\.1))
        guard !columns.isEmpty else { return nil }
        try SchemaChange.checkRelationshipColumns(of: schema, columns: columns, foreignKeys: Set(catalog.filter { $0.0 == "f" }.map(\.1)))
        let linkTables = Set(catalog.filter { $0.0 == "l" }.map(\.1))
        var targets: [String: PostgresTable] = [:]
        for relationship in schema.relationships where !relationship.isToMany || linkTables.contains(relationship.linkTable) {
            func read<Target: Model>(_ target: Target.Type) async throws -> PostgresTable? { try await self.readTable(for: Target.self) }
            targets[relationship.name] = try await read(relationship.target)
        }
        let properties = schema.properties.filter { columns.contains($0.name) && ($0.references == nil || targets[$0.name] != nil) }
        let table = try PostgresTable(schema: schema, properties: properties, isWritable: false, targets: targets)
        // Kept only when the model's whole graph is there: a table that lacks a column or a link
        // is read from the catalog again (another instance's save may complete it).
        let isWhole = properties.count == schema.properties.count && schema.relationships.allSatisfy { relationship in
            let target = ObjectIdentifier(relationship.target)
            return targets[relationship.name] != nil
                && (database.tables.withLock { $0[target] } ?? database.readTables.withLock { $0[target] }) != nil
        }
        if isWhole { database.readTables.withLock { $0[key] = table } }
        return table
    }

    /// The model's table as it would be created, with no statement run: for describing SQL
    /// (``Postgres/Queryable/sql(for:)``) whether or not the table exists.
    func plannedTable<T: Model>(for type: T.Type) throws -> PostgresTable {
        let schema = try ModelReflection.of(T.self)
        var targets: [String: PostgresTable] = [:]
        for relationship in schema.relationships {
            func plan<Target: Model>(_ target: Target.Type) throws -> PostgresTable { try self.plannedTable(for: Target.self) }
            targets[relationship.name] = try plan(relationship.target)
        }
        return try PostgresTable(schema: schema, properties: schema.properties, isWritable: false, targets: targets)
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
                target) before the first save of \(model): save a value of \(model) once before such a transaction. (\(error.message))
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
                    // Announced at commit: an observer of the model, which found no table,
                    // follows it from now on.
                    try await session.announceChange(of: table.schema.table)
                } else {
                    var columns: [String: SchemaChange.Column] = [:]
                    for row in existing {
                        let (name, type, isNullable, hasDefault, isPrimaryKey) = try row.decode((String, String, Bool, Bool, Bool).self)
                        columns[name] = SchemaChange.Column(
                            name: name, type: type, accepts: table.column(named: name).map { $0.kind.sqlType == type } ?? true,
                            isNotNull: !isNullable, hasDefault: hasDefault, isPrimaryKey: isPrimaryKey)
                    }
                    if !table.schema.relationships.isEmpty {
                        let foreignKeys = try await session.rows("""
                            SELECT a.attname::text FROM pg_constraint k JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = ANY(k.conkey) \
                            WHERE k.contype = 'f' AND k.conrelid = format('%I.%I', current_schema(), $1::text)::regclass
                            """, binds).map { try $0.decode(String.self) }
                        try SchemaChange.checkRelationshipColumns(
                            of: table.schema, columns: Set(columns.keys), foreignKeys: Set(foreignKeys))
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
                // New tables are observable at once where observation is set up (an observer may
                // be waiting for them: it hears the creation, and then every row by id).
                if existing.isEmpty {
                    try await ChangeNotifications.createTriggersIfObserved(table: table.schema.table, idColumn: table.id.name, on: session)
                }
                for relationship in table.schema.relationships where relationship.isToMany && !existingNames.contains(relationship.linkTable) {
                    try await ChangeNotifications.createTriggersIfObserved(table: relationship.linkTable, idColumn: "owner", on: session)
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
