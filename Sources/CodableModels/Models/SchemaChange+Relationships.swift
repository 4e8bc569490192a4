import Foundation

extension SchemaChange {
    /// Refuses a table written before a property became a relationship, decided once for both
    /// engines, on reads and saves alike: the property's column still holds the related value as
    /// JSON, which reading as a relationship would silently lose.
    ///
    /// A to-many relationship lives in a link table, so any column named after it is the old JSON
    /// form; a to-one lives in a column that is a foreign key to its target, so a column of that
    /// name without one is. Each engine passes what its catalog says: the table's column names and
    /// those that are foreign keys. Throws `ModelError.Code.schemaMismatch` naming the property,
    /// the column, the table and the way out.
    package static func checkRelationshipColumns(of schema: ModelReflection, columns: Set<String>, foreignKeys: Set<String>) throws {
        for relationship in schema.relationships where columns.contains(relationship.name) {
            guard relationship.isToMany || !foreignKeys.contains(relationship.name) else { continue }
            let table = SQLName.quoted(schema.table)
            let target = relationship.target
            throw ModelError(.schemaMismatch, schema.modelType, """
                has the relationship `\(relationship.name)` (\(relationship.isToMany ? "[\(target)]" : "\(target)")), but column \
                "\(relationship.name)" of table \(table) holds it as JSON, from a version that stored it inside the row. \
                Reading it as a relationship would lose that data. Migrate it: save the values decoded from the JSON as \
                \(target) values, then drop the column (ALTER TABLE \(table) DROP COLUMN "\(relationship.name)"); or give \
                the model another table with `static var tableName`.
                """)
        }
    }
}
