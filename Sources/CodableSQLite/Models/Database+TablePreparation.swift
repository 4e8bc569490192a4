import Foundation

extension SQLite.Database {
    /// The model's table for reading, or `nil` when it does not exist yet.
    func tableForReading<T: Model>(_ type: T.Type) throws -> ModelTable? {
        let inTransaction = hasOpenTransactions
        if let table = models.table(for: T.self, includingUncommitted: inTransaction) { return table }
        let schema = try ModelReflection.of(T.self)
        let existing = try withReader { try $0.columnsByName(in: schema.table) }
        guard !existing.isEmpty else { return nil }
        let table = ModelTable(schema: schema, columns: schema.properties.filter { existing[$0.name] != nil }, isWritable: false)
        models.set(table, committed: !inTransaction)
        return table
    }

    /// The model's table, created or brought up to date for saving values like `sample`.
    func tableForWriting<T: Model>(_ type: T.Type, sample: T) throws -> ModelTable {
        if let table = models.table(for: T.self, includingUncommitted: hasOpenTransactions), table.isWritable { return table }
        let schema = try ModelReflection.of(T.self)
        let (keys, isKeyed) = try KeyDiscovery.keys(of: sample)
        guard isKeyed else {
            throw ModelError(.unsupportedModel, T.self, "does not encode a keyed container (a property per key), so it cannot be stored as a row")
        }
        let names = Set(schema.properties.map(\.name))
        if let renamed = keys.sorted().first(where: { !names.contains($0) }) {
            throw ModelError(.unsupportedModel, T.self, """
                encodes the key "\(renamed)", which is not the name of one of its stored properties. Models store each \
                property in a column named after it, so CodingKeys must not rename properties; remove the renaming, \
                or store the type with SQLite.Encoder and your own SQL.
                """)
        }
        // Non-optional properties the value does not encode are left out of its CodingKeys: no column.
        let columns = schema.properties.filter { keys.contains($0.name) || $0.isOptional }
        guard columns.contains(where: { $0.name == schema.id.name }) else {
            throw ModelError(.unsupportedModel, T.self, "does not encode its `id`, so its rows could not be found again; add id to its CodingKeys")
        }
        NestedKeys.learn(from: sample)
        let indexes = try ModelTable.createIndexes(for: T.self, schema: schema)
        return try withWriter { connection in
            if let table = models.table(for: T.self, includingUncommitted: true), table.isWritable { return table }
            try connection.inTransaction {
                let existing = try connection.columnsByName(in: schema.table)
                if existing.isEmpty {
                    try connection.execute(ModelTable.createTable(schema, columns: columns))
                    try models.tableCreated(schema, on: connection)
                } else {
                    try evolve(schema, columns: columns, existing: existing, on: connection)
                }
                for index in indexes { try connection.execute(index) }
            }
            let table = ModelTable(schema: schema, columns: columns, isWritable: true)
            models.set(table, committed: connection.isAutocommit)
            return table
        }
    }

    /// Adds the columns of new properties, and reports changes that cannot be made safely.
    private func evolve(
        _ schema: ModelReflection, columns: [ModelReflection.Property], existing: [String: SQLite.Column], on connection: RawConnection
    ) throws {
        let table = SQLName.quoted(schema.table)
        let model = schema.modelType
        guard let idColumn = existing[schema.id.name], idColumn.primaryKeyPosition > 0 else {
            throw ModelError(.schemaMismatch, model, """
                table \(table) exists but its primary key is not the column "\(schema.id.name)", so values cannot be \
                saved by id. Rename the table with a migration, or set `static var tableName` to another name.
                """)
        }
        var hasRows: Bool?
        func tableHasRows() throws -> Bool {
            if let hasRows { return hasRows }
            let rows = try connection.execute("SELECT EXISTS (SELECT 1 FROM \(table)) AS hasRows")
            let result = rows.first?["hasRows"]?.boolValue ?? false
            hasRows = result
            return result
        }
        for property in columns where property.name != schema.id.name {
            let name = SQLName.quoted(property.name)
            guard let column = existing[property.name] else {
                if !property.isOptional, try tableHasRows() {
                    throw ModelError(.schemaMismatch, model, """
                        has the new non-optional property `\(property.name)`, but table \(table) already has rows, which \
                        have no value for it. Make it optional (\(property.name): \(property.type)?), or add a migration \
                        that adds the column with a value for existing rows: ALTER TABLE \(table) ADD COLUMN \(name) \
                        \(property.storage.rawValue) NOT NULL DEFAULT <value>
                        """)
                }
                try connection.execute("ALTER TABLE \(table) ADD COLUMN \(ModelTable.columnDefinition(property))")
                continue
            }
            if !column.accepts(property.storage) {
                throw ModelError(.schemaMismatch, model, """
                    property `\(property.name)` is now \(property.type), stored as \(property.storage.rawValue), but column \
                    \(name) of table \(table) is declared \(column.type.isEmpty ? "without a type" : column.type); \
                    its existing values would not decode. Convert the column with a migration (SQLite.Migrator).
                    """)
            }
            if property.isOptional && column.isNotNull {
                throw ModelError(.schemaMismatch, model, """
                    property `\(property.name)` is now optional, but column \(name) of table \(table) is NOT NULL, so nil \
                    cannot be saved. Rebuild the table without NOT NULL in a migration (SQLite.Migrator), or keep the \
                    property non-optional.
                    """)
            }
            if !property.isOptional && !column.isNotNull {
                let nulls = try connection.execute("SELECT count(*) AS nulls FROM \(table) WHERE \(name) IS NULL")
                if let count = nulls.first?["nulls"]?.intValue, count > 0 {
                    throw ModelError(.schemaMismatch, model, """
                        property `\(property.name)` is no longer optional, but \(count) row(s) of table \(table) have no \
                        value for it. Give them one with a migration (UPDATE \(table) SET \(name) = … WHERE \(name) IS NULL), \
                        or keep the property optional.
                        """)
                }
            }
        }
        let stored = Set(columns.map(\.name))
        for column in existing.values where !stored.contains(column.name) && column.isNotNull && column.defaultValue == nil && column.primaryKeyPosition == 0 {
            throw ModelError(.schemaMismatch, model, """
                no longer stores `\(column.name)`, but column "\(column.name)" of table \(table) is NOT NULL without a \
                default, so new rows cannot be saved. Drop it (ALTER TABLE \(table) DROP COLUMN "\(column.name)") or give \
                it a default in a migration (SQLite.Migrator).
                """)
        }
    }
}
