#if Postgres
import Foundation

/// Relationships in PostgreSQL's tables, with the same shapes as on SQLite: a to-one is a column
/// named after the property holding the target's id (a foreign key: `ON DELETE SET NULL` when
/// optional, refusing the delete when not); a to-many is a link table `"Owner.property"(owner,
/// position, target)` keeping the array's order, whose rows go with either end (`ON DELETE
/// CASCADE`). Ids keep their own types (`uuid`, `bigint`, `text`) in both.
///
/// Reading nests the related values into each row's JSON on the server (``relatedJSON(_:owner:ownerID:target:)``):
/// one statement loads a whole graph, however many rows and relationships, from one snapshot.
extension PostgresTable {
    /// The JSON of a relationship's values for the row of `owner` in scope: a to-one's target row
    /// (`null` when the column is), a to-many's target rows in link order (`[]` when none).
    static func relatedJSON(_ relationship: Relationship, owner: String, ownerID: String, target: PostgresTable) -> String {
        let targetTable = target.quotedTable
        let targetID = targetTable + "." + SQLName.quoted(ModelReflection.idName)
        if relationship.isToMany {
            // Each target by its primary key, not a join: the plan stays a few index lookups per
            // row even before the tables have statistics (a join was planned as a hash join over
            // the whole target table, per row).
            let link = SQLName.quoted(relationship.linkTable)
            let element = "(SELECT \(target.rowJSON) FROM \(targetTable) WHERE \(targetID) = \(link).\"target\")"
            return "COALESCE((SELECT json_agg(\(element) ORDER BY \(link).\"position\") FROM \(link) "
                + "WHERE \(link).\"owner\" = \(owner).\(SQLName.quoted(ownerID))), '[]'::json)"
        }
        return "(SELECT \(target.rowJSON) FROM \(targetTable) WHERE \(targetID) = \(owner).\(SQLName.quoted(relationship.name)))"
    }

    /// The link tables of the to-many relationships, and their index on `target` (deletes of
    /// targets and `contains` filters look links up by target).
    var createLinkTables: [String] {
        schema.relationships.filter(\.isToMany).compactMap { relationship -> [String]? in
            guard let target = targets[relationship.name] else { return nil }
            let link = SQLName.quoted(relationship.linkTable)
            let id = SQLName.quoted(ModelReflection.idName)
            return [
                "CREATE TABLE IF NOT EXISTS \(link) ("
                    + "\"owner\" \(self.id.kind.declaredType) NOT NULL REFERENCES \(quotedTable)(\(id)) ON DELETE CASCADE, "
                    + "\"position\" integer NOT NULL, "
                    + "\"target\" \(target.id.kind.declaredType) NOT NULL REFERENCES \(target.quotedTable)(\(id)) ON DELETE CASCADE, "
                    + "PRIMARY KEY (\"owner\", \"position\"))",
                "CREATE INDEX IF NOT EXISTS \(SQLName.quoted(relationship.linkTable + "(target)")) ON \(link) (\"target\")",
            ]
        }.flatMap { $0 }
    }

    /// The tables a value of this model is read from: its own, its link tables and, through its
    /// relationships, its targets' (each once). Observing the model observes all of them.
    var graphTables: [String] {
        var names = [schema.table]
        for relationship in schema.relationships {
            // A table read as it is leaves out a link table that does not exist (no target then).
            if relationship.isToMany, targets[relationship.name] != nil { names.append(relationship.linkTable) }
            for name in targets[relationship.name]?.graphTables ?? [] where !names.contains(name) { names.append(name) }
        }
        return names
    }

    /// The relationship whose link table is `link`.
    func relationship(linkTable link: String) -> Relationship? {
        schema.relationships.first { $0.isToMany && $0.linkTable == link }
    }

    /// PostgreSQL cuts names at 63 bytes: a link table or its index over that would collide with
    /// another cut the same way.
    static func checkNames(_ schema: ModelReflection) throws {
        for relationship in schema.relationships where relationship.isToMany {
            let index = relationship.linkTable + "(target)"
            guard index.utf8.count <= 63 else {
                throw ModelError(.unsupportedModel, schema.modelType, """
                    has the relationship `\(relationship.name)`, whose link table "\(relationship.linkTable)" (and its index \
                    "\(index)") would pass PostgreSQL's 63-byte limit on names. Give the model a shorter tableName or the \
                    property a shorter name.
                    """)
            }
        }
    }
}
#endif
