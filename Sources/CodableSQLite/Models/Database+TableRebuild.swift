import Foundation

extension SQLite.Database {
    /// Drops NOT NULL from the columns of properties that became optional, as PostgreSQL's
    /// `ALTER COLUMN … DROP NOT NULL` does. SQLite has no such statement, and rebuilding the
    /// table would run its foreign keys' cascades (other tables' references follow a renamed
    /// table while foreign keys are on, and dropping the old one deletes its rows first), so the
    /// table's definition is changed in place, by SQLite's own procedure for removing NOT NULL
    /// constraints (a change that does not touch how rows are stored): its `CREATE TABLE` in the
    /// schema table with those columns' definitions made optional, and the schema version
    /// raised so that every connection reads it again. Rows, indexes, triggers, foreign keys and
    /// observers stay as they are. Inside the caller's transaction (table preparation's).
    ///
    /// - Throws: ``ModelError/Code/schemaMismatch`` when the table's `CREATE TABLE` does not hold
    ///   the column as this library writes it (a table made by hand or a migration): nothing changes.
    func relaxNotNull(_ properties: [ModelReflection.Property], of schema: ModelReflection, on connection: RawConnection) throws {
        let table = schema.table
        let found = try connection.withStatement("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?") { statement -> String? in
            try statement.bind([.text(table)])
            guard try statement.step(), case .text(let sql) = statement.value(at: 0) else { return nil }
            return sql
        }
        guard var create = found else { return }
        for property in properties {
            let strict = ModelTable.columnDefinition(property, isOptional: false)
            guard create.components(separatedBy: strict).count == 2 else {
                throw ModelError(.schemaMismatch, schema.modelType, """
                    property `\(property.name)` is now optional, but column "\(property.name)" of table \(SQLName.quoted(table)) \
                    is NOT NULL and was not made by this library (its definition is not \(strict)), so it cannot be \
                    changed safely here. Rebuild the table without NOT NULL in a migration (SQLite.Migrator), or keep \
                    the property non-optional.
                    """)
            }
            create = create.replacingOccurrences(of: strict, with: ModelTable.columnDefinition(property, isOptional: true))
        }
        guard let version = try connection.execute("PRAGMA schema_version").first?["schema_version"]?.int64Value else {
            throw ModelError(.unexpectedResult, schema.modelType, "PRAGMA schema_version returned nothing")
        }
        _ = try connection.execute("PRAGMA writable_schema = ON")
        do {
            try connection.withStatement("UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?") { statement in
                try statement.bind([.text(create), .text(table)])
                try statement.run()
            }
            _ = try connection.execute("PRAGMA schema_version = \(version + 1)")
        } catch {
            _ = try? connection.execute("PRAGMA writable_schema = OFF")
            throw error
        }
        _ = try connection.execute("PRAGMA writable_schema = OFF")
    }
}
