import Foundation

/// A model's table in one database: its stored columns and the statements the model API runs.
final class ModelTable: Sendable {
    let schema: ModelReflection
    /// The properties stored as columns, in declaration order.
    let columns: [ModelReflection.Property]
    /// Whether the table was created or brought up to date for saving (else only read).
    let isWritable: Bool
    /// The link tables of to-many relationships that exist.
    let linkTables: Set<String>

    let select: String
    let selectByID: String
    let upsert: String
    let upsertReturning: String
    let deleteByID: String

    init(schema: ModelReflection, columns: [ModelReflection.Property], isWritable: Bool, linkTables: Set<String> = []) {
        self.schema = schema
        self.columns = columns
        self.isWritable = isWritable
        self.linkTables = linkTables
        let table = SQLName.quoted(schema.table)
        let id = SQLName.quoted(schema.id.name)
        let names = columns.map { SQLName.quoted($0.name) }
        select = "SELECT \(names.joined(separator: ", ")) FROM \(table)"
        selectByID = select + " WHERE \(id) = ?"
        deleteByID = "DELETE FROM \(table) WHERE \(id) = ?"
        let updates = columns.filter { $0.name != schema.id.name }
            .map { "\(SQLName.quoted($0.name)) = excluded.\(SQLName.quoted($0.name))" }
        upsert = "INSERT INTO \(table) (\(names.joined(separator: ", "))) VALUES ("
            + columns.map { ":" + $0.name }.joined(separator: ", ") + ") ON CONFLICT (\(id)) DO "
            // With only an id, still an update, so that RETURNING returns the row.
            + "UPDATE SET " + (updates.isEmpty ? "\(id) = excluded.\(id)" : updates.joined(separator: ", "))
        upsertReturning = upsert + " RETURNING " + names.joined(separator: ", ")
    }

    /// `CREATE TABLE` for the columns: typed after the properties, `NOT NULL` (with a zero default,
    /// which only columns a later version stops writing ever use) for non-optionals, the primary key on id.
    static func createTable(_ schema: ModelReflection, columns: [ModelReflection.Property]) -> String {
        let definitions = columns.map { property -> String in
            let name = SQLName.quoted(property.name)
            if property.name == schema.id.name {
                if property.storage == .integer { return "\(name) INTEGER PRIMARY KEY" }
                return "\(name) \(property.storage.rawValue) PRIMARY KEY NOT NULL".replacingOccurrences(of: "  ", with: " ")
            }
            return columnDefinition(property)
        }
        return "CREATE TABLE \(SQLName.quoted(schema.table)) (\(definitions.joined(separator: ", ")))"
    }

    /// As if the property were optional, or not, when `isOptional` is given (the definition a
    /// table made for the property's earlier version has).
    static func columnDefinition(_ property: ModelReflection.Property, isOptional: Bool? = nil) -> String {
        let isOptional = isOptional ?? property.isOptional
        var definition = SQLName.quoted(property.name)
        if property.storage != .untyped { definition += " " + property.storage.rawValue }
        if !isOptional { definition += " NOT NULL DEFAULT " + property.storage.zeroDefault }
        if let target = property.references {
            // A deleted target empties an optional to-one; a non-optional one makes the delete fail.
            definition += " REFERENCES \(SQLName.quoted(target))(\(ModelReflection.quotedID))" + (isOptional ? " ON DELETE SET NULL" : "")
        }
        return definition
    }

    /// The link table of a to-many relationship: one row per element, `position` keeping the
    /// array's order. Deleting the owner or the target removes the link.
    static func createLinkTable(_ relationship: Relationship, owner: ModelReflection) -> [String] {
        let link = SQLName.quoted(relationship.linkTable)
        let ownerType = owner.id.storage == .untyped ? "" : " " + owner.id.storage.rawValue
        let targetType = relationship.targetIDStorage == .untyped ? "" : " " + relationship.targetIDStorage.rawValue
        return [
            "CREATE TABLE IF NOT EXISTS \(link) ("
                + "\"owner\"\(ownerType) NOT NULL REFERENCES \(SQLName.quoted(owner.table))(\(ModelReflection.quotedID)) ON DELETE CASCADE, "
                + "\"position\" INTEGER NOT NULL, "
                + "\"target\"\(targetType) NOT NULL REFERENCES \(SQLName.quoted(relationship.target.tableName))(\(ModelReflection.quotedID)) ON DELETE CASCADE, "
                + "PRIMARY KEY (\"owner\", \"position\")) WITHOUT ROWID",
            "CREATE INDEX IF NOT EXISTS \(SQLName.quoted(relationship.linkTable + "(target)")) ON \(link) (\"target\")",
        ]
    }

    static func createIndexes<T: Model>(for type: T.Type, schema: ModelReflection) throws -> [String] {
        try T.indexes.map { try $0.createSQL(table: schema.table, dialect: SQLiteDialect()) }
    }
}

/// What the model layer asks of an existing table's columns.
extension SQLite.Column {
    /// SQLite's type affinity for a declared type (https://www.sqlite.org/datatype3.html#affinity_name_examples).
    var affinity: StorageType? {
        let type = self.type.uppercased()
        if type.contains("INT") { return .integer }
        if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") { return .text }
        if type.contains("BLOB") || type.isEmpty { return .untyped }
        if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") { return .real }
        return nil  // NUMERIC
    }

    /// Whether values of `storage` keep their type in this column.
    func accepts(_ storage: StorageType) -> Bool {
        guard let affinity else { return storage == .integer || storage == .real || storage == .untyped }
        switch (storage, affinity) {
        case (.untyped, _), (_, .untyped): return true
        case (.integer, .integer), (.integer, .real), (.real, .real), (.real, .integer): return true
        case (.text, .text), (.blob, .blob): return true
        default: return false
        }
    }
}
