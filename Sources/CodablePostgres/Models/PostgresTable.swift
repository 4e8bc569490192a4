#if Postgres
import Foundation

/// A model's table on PostgreSQL: its columns with their types, and the statements the model API
/// runs, built once per model type and database.
struct PostgresTable: Sendable {
    struct Column: Sendable {
        let name: String
        let kind: ColumnKind
        let isOptional: Bool
        /// For a to-one relationship: the target's table, whose id the column holds.
        var references: String? = nil
        var quoted: String { SQLName.quoted(name) }
    }

    let schema: ModelReflection
    let columns: [Column]
    /// The tables of the relationships' targets, by relationship name (see `PostgresTable+Relationships.swift`).
    let targets: [String: PostgresTable]
    /// Whether the columns were learned from a saved value (else every property, for reading).
    let isWritable: Bool
    let id: Column
    let quotedTable: String

    /// The result columns of a read and how they decode (``RowReading``).
    let reading: RowReading
    /// `SELECT <members> FROM "T"`: one result column per member of the model's JSON form,
    /// related values as JSON (one statement for a whole graph).
    let select: String
    /// The upsert of the values in ``ColumnArrays`` (`$1`…`$n`, one `text[]` per column, in column
    /// order), returning nothing.
    let upsert: String
    /// For a table whose ids PostgreSQL assigns: the same upsert, returning the ids assigned to the
    /// values without one, in input order. `$n+1` is a `bigint[]` of ids reserved for them, by
    /// position (`{}` when the sequence assigns them as the rows are inserted; see ``reserveIDs``).
    let upsertAssigningIDs: String?
    /// `$1` ids drawn from the id sequence, for the id-less values of a save that also gives ids
    /// explicitly: those that are not explicit ids of the save are given out, so that an assigned
    /// id never takes one (the sequence cannot skip them by itself).
    let reserveIDs: String?
    /// After saving values with explicit ids into a table whose ids PostgreSQL assigns: moves the
    /// id sequence past them, so that later assigned ids never collide.
    let advanceIDSequence: String?

    init(schema: ModelReflection, properties: [ModelReflection.Property], isWritable: Bool, targets: [String: PostgresTable] = [:]) throws {
        self.schema = schema
        self.isWritable = isWritable
        self.targets = targets
        guard schema.table.utf8.count <= 63 else {
            throw ModelError(.unsupportedModel, schema.modelType, """
                has a table name of \(schema.table.utf8.count) bytes; PostgreSQL names are at most 63 bytes. \
                Give it a shorter tableName.
                """)
        }
        columns = try properties.map { property in
            guard property.references != nil else { return Column(name: property.name, kind: ColumnKind.of(property.type), isOptional: property.isOptional) }
            guard let target = targets[property.name] else {
                throw ModelError(.unexpectedResult, schema.modelType, "the table of the relationship \(property.name)'s target was not prepared")
            }
            return Column(name: property.name, kind: target.id.kind, isOptional: property.isOptional, references: target.quotedTable)
        }
        try Self.checkNames(schema)
        guard let id = columns.first(where: { $0.name == schema.id.name }) else {
            throw ModelError(.unsupportedModel, schema.modelType, "has no stored `id`")
        }
        self.id = id
        quotedTable = SQLName.quoted(schema.table)
        reading = RowReading(schema: schema, columns: columns, targets: targets)
        select = "SELECT \(reading.selectList) FROM \(quotedTable)"

        let names = columns.map(\.quoted).joined(separator: ", ")
        let sequence = "pg_get_serial_sequence(\(SQLName.literal(quotedTable)), \(SQLName.literal(id.name)))"
        let parameters = columns.indices.map { "$\($0 + 1)::text[]" }.joined(separator: ", ")
        let aliases = columns.indices.map { "c\($0 + 1)" }
        let source = "unnest(\(parameters)) WITH ORDINALITY AS u(\(aliases.joined(separator: ", ")), n)"
        let idAlias = aliases[columns.firstIndex { $0.name == id.name } ?? 0]
        let updates = columns.filter { $0.name != id.name }.map { "\($0.quoted) = EXCLUDED.\($0.quoted)" }
        let onConflict = "ON CONFLICT (\(id.quoted)) DO UPDATE SET " +
            (updates.isEmpty ? "\(id.quoted) = EXCLUDED.\(id.quoted)" : updates.joined(separator: ", "))
        let values = zip(columns, aliases).map { $0.kind.fromText("u.\($1)") }
        // Rows in id order (the typed id, as the assigning upsert below orders them): concurrent
        // saves that share rows lock them in one order.
        upsert = "INSERT INTO \(quotedTable) (\(names)) SELECT \(values.joined(separator: ", ")) FROM \(source) ORDER BY \(id.kind.fromText("u.\(idAlias)")) \(onConflict)"
        if schema.assignsID {
            // Ids are decided before the insert, so that they come back in input order.
            let assigned = "COALESCE(\(id.kind.fromText("u.\(idAlias)")), ($\(columns.count + 1)::bigint[])[u.n::int], nextval(\(sequence)))"
            let inputValues = zip(columns, aliases).map { $0.name == id.name ? "input.saved_id" : $0.kind.fromText("input.\($1)") }
            upsertAssigningIDs = """
                WITH input AS MATERIALIZED (SELECT u.*, \(assigned) AS saved_id FROM \(source)), \
                saved AS (INSERT INTO \(quotedTable) (\(names)) SELECT \(inputValues.joined(separator: ", ")) FROM input ORDER BY input.saved_id \(onConflict)) \
                SELECT input.saved_id FROM input WHERE input.\(idAlias) IS NULL ORDER BY input.n
                """
        } else {
            upsertAssigningIDs = nil
        }
        reserveIDs = schema.assignsID ? "SELECT nextval(\(sequence)) FROM generate_series(1, $1::int)" : nil
        advanceIDSequence = schema.assignsID
            ? "SELECT setval(\(sequence), GREATEST((SELECT max(\(id.quoted)) FROM \(quotedTable)), pg_sequence_last_value(\(sequence)::regclass), 1))"
            : nil
    }

    /// The JSON of a row of the table, as a related value is read: `json_build_object('id', "T"."id", …)`,
    /// with each relationship's values nested (``relatedJSON(_:owner:ownerID:target:)``). `json_build_object` takes at most 50
    /// members, so wider models join several `jsonb` objects.
    static func rowJSON(schema: ModelReflection, columns: [Column], targets: [String: PostgresTable]) -> String {
        let table = SQLName.quoted(schema.table)
        var members: [String] = []
        for column in columns where column.references == nil {
            members.append("\(SQLName.literal(column.name)), \(column.kind.toJSON(table + "." + column.quoted))")
        }
        for relationship in schema.relationships {
            guard let target = targets[relationship.name] else {
                // A table read as it is, without its link table: no links yet.
                if relationship.isToMany { members.append("\(SQLName.literal(relationship.name)), '[]'::json") }
                continue
            }
            members.append("\(SQLName.literal(relationship.name)), \(relatedJSON(relationship, owner: table, ownerID: schema.id.name, target: target))")
        }
        if members.count <= 50 { return "json_build_object(\(members.joined(separator: ", ")))" }
        let chunks = stride(from: 0, to: members.count, by: 50).map {
            "jsonb_build_object(\(members[$0..<min($0 + 50, members.count)].joined(separator: ", ")))"
        }
        return "(\(chunks.joined(separator: " || ")))"
    }

    /// This table's row as JSON, nested values included.
    var rowJSON: String { Self.rowJSON(schema: schema, columns: columns, targets: targets) }

    func column(named name: String) -> Column? {
        columns.first { $0.name == name }
    }

    /// `CREATE TABLE` with PostgreSQL's types, `NOT NULL` (with a zero default) for non-optionals,
    /// and for an optional integer id, an identity column.
    var createTable: String {
        let definitions = columns.map { column -> String in
            if column.name == id.name {
                return schema.assignsID
                    ? "\(column.quoted) bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"
                    : "\(column.quoted) \(column.kind.declaredType) PRIMARY KEY"
            }
            return definition(of: column)
        }
        return "CREATE TABLE IF NOT EXISTS \(quotedTable) (\(definitions.joined(separator: ", ")))"
    }

    func definition(of column: Column) -> String {
        if let target = column.references {
            // A deleted target empties an optional to-one; a non-optional one makes the delete fail
            // (`ModelError.Code.deleteDenied`). No zero default: it would refer to no row.
            return "\(column.quoted) \(column.kind.declaredType)" + (column.isOptional ? "" : " NOT NULL")
                + " REFERENCES \(target)(\(SQLName.quoted(ModelReflection.idName)))" + (column.isOptional ? " ON DELETE SET NULL" : "")
        }
        return column.isOptional
            ? "\(column.quoted) \(column.kind.declaredType)"
            : "\(column.quoted) \(column.kind.declaredType) NOT NULL DEFAULT \(column.kind.zeroDefault)"
    }

    /// The index statements of `Model.indexes`; nested properties get expression indexes on the
    /// same expression filters use.
    func createIndexes<T: Model>(for type: T.Type) throws -> [String] {
        try T.indexes.map { try $0.createSQL(table: schema.table, dialect: PostgresDialect(table: self)) }
    }
}
#endif
