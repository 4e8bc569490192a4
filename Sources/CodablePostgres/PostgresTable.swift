#if Postgres
import Foundation

/// A model's table on PostgreSQL: its columns with their types, and the statements the model API
/// runs, built once per model type and database.
struct PostgresTable: Sendable {
    struct Column: Sendable {
        let name: String
        let kind: ColumnKind
        let isOptional: Bool
        var quoted: String { SQLName.quoted(name) }
    }

    let schema: ModelReflection
    let columns: [Column]
    /// Whether the columns were learned from a saved value (else every property, for reading).
    let isWritable: Bool
    let id: Column
    let quotedTable: String

    /// `SELECT <row JSON> FROM "T"`: each row as the JSON form of the model.
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

    init(schema: ModelReflection, properties: [ModelReflection.Property], isWritable: Bool) throws {
        self.schema = schema
        self.isWritable = isWritable
        guard schema.relationships.isEmpty else {
            throw ModelError(.unsupportedModel, schema.modelType, """
                has relationships (\(schema.relationships.map(\.name).joined(separator: ", "))), which CodablePostgres \
                does not store yet; keep this model on SQLite or store the related ids as plain properties
                """)
        }
        guard schema.table.utf8.count <= 63 else {
            throw ModelError(.unsupportedModel, schema.modelType, """
                has a table name of \(schema.table.utf8.count) bytes; PostgreSQL names are at most 63 bytes. \
                Give it a shorter tableName.
                """)
        }
        columns = properties.map { Column(name: $0.name, kind: ColumnKind.of($0.type), isOptional: $0.isOptional) }
        guard let id = columns.first(where: { $0.name == schema.id.name }) else {
            throw ModelError(.unsupportedModel, schema.modelType, "has no stored `id`")
        }
        self.id = id
        quotedTable = SQLName.quoted(schema.table)
        let row = Self.rowJSON(columns)
        select = "SELECT \(row) FROM \(quotedTable)"

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
        upsert = "INSERT INTO \(quotedTable) (\(names)) SELECT \(values.joined(separator: ", ")) FROM \(source) \(onConflict)"
        if schema.assignsID {
            // Ids are decided before the insert, so that they come back in input order.
            let assigned = "COALESCE(\(id.kind.fromText("u.\(idAlias)")), ($\(columns.count + 1)::bigint[])[u.n::int], nextval(\(sequence)))"
            let inputValues = zip(columns, aliases).map { $0.name == id.name ? "input.saved_id" : $0.kind.fromText("input.\($1)") }
            upsertAssigningIDs = """
                WITH input AS MATERIALIZED (SELECT u.*, \(assigned) AS saved_id FROM \(source)), \
                saved AS (INSERT INTO \(quotedTable) (\(names)) SELECT \(inputValues.joined(separator: ", ")) FROM input \(onConflict)) \
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

    /// The JSON text of a row: `json_build_object('id', "id", …)::text`. `json_build_object` takes at
    /// most 50 members, so wider models join several `jsonb` objects.
    static func rowJSON(_ columns: [Column]) -> String {
        let members = columns.map { "\(SQLName.literal($0.name)), \($0.kind.toJSON($0.quoted))" }
        if members.count <= 50 { return "json_build_object(\(members.joined(separator: ", ")))::text" }
        let chunks = stride(from: 0, to: members.count, by: 50).map {
            "jsonb_build_object(\(members[$0..<min($0 + 50, members.count)].joined(separator: ", ")))"
        }
        return "(\(chunks.joined(separator: " || ")))::text"
    }

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
                    : "\(column.quoted) \(column.kind.sqlType) PRIMARY KEY"
            }
            return definition(of: column)
        }
        return "CREATE TABLE IF NOT EXISTS \(quotedTable) (\(definitions.joined(separator: ", ")))"
    }

    func definition(of column: Column) -> String {
        column.isOptional
            ? "\(column.quoted) \(column.kind.sqlType)"
            : "\(column.quoted) \(column.kind.sqlType) NOT NULL DEFAULT \(column.kind.zeroDefault)"
    }

    /// The index statements of ``Model/indexes``; nested properties get expression indexes on the
    /// same expression filters use.
    func createIndexes<T: Model>(for type: T.Type) throws -> [String] {
        try T.indexes.map { try $0.createSQL(table: schema.table, dialect: PostgresDialect(table: self)) }
    }
}
#endif
