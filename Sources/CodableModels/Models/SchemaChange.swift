import Foundation

/// What an existing table needs before values of a model's version can be saved, decided once for
/// both engines: each engine describes its table (its catalog), answers the questions the
/// decision asks (``questions(for:columns:existing:)``), and carries out the steps
/// (``steps(for:columns:existing:answers:typeName:)``) or throws the refusal.
///
/// The rules: a new optional property becomes a column; a new non-optional one too while the
/// table is empty, and is refused when it has rows (they have no value for it); a property whose
/// type the column cannot hold is refused; a property made optional drops `NOT NULL`; a property
/// made non-optional is refused while rows have no value for it; a column the model no longer
/// writes that is `NOT NULL` without a default is refused (new rows could not be saved); a table
/// whose primary key is not `id` alone, or is of another type, is refused. Every refusal is `ModelError.Code.schemaMismatch`,
/// naming the property, the table and the way out.
package enum SchemaChange {
    /// An existing column, as the engine's catalog describes it.
    package struct Column: Sendable {
        package let name: String
        /// Its declared type, for messages.
        package let type: String
        /// Whether values of the property written to it keep their type (the engine's rule).
        package let accepts: Bool
        package let isNotNull: Bool
        package let hasDefault: Bool
        /// Whether the column is the table's primary key, alone.
        package let isPrimaryKey: Bool

        package init(name: String, type: String, accepts: Bool, isNotNull: Bool, hasDefault: Bool, isPrimaryKey: Bool) {
            self.name = name
            self.type = type
            self.accepts = accepts
            self.isNotNull = isNotNull
            self.hasDefault = hasDefault
            self.isPrimaryKey = isPrimaryKey
        }
    }

    /// What the engine carries out, in order.
    package enum Step {
        /// `ALTER TABLE … ADD COLUMN` for the property.
        case addColumn(ModelReflection.Property)
        /// The properties' columns lose `NOT NULL`.
        case dropNotNull([ModelReflection.Property])
    }

    /// The facts about the rows the decision needs: asked only when a rule depends on them.
    package struct Questions: Sendable {
        /// Whether the table has rows (a new non-optional property).
        package var hasRows = false
        /// How many rows have no value in these columns (properties made non-optional).
        package var nullsIn: [String] = []
    }

    /// The engine's answers to ``Questions``.
    package struct Answers: Sendable {
        package var hasRows = false
        package var nulls: [String: Int] = [:]

        package init(hasRows: Bool = false, nulls: [String: Int] = [:]) {
            self.hasRows = hasRows
            self.nulls = nulls
        }
    }

    /// The questions about the rows that the decision for these columns needs answered.
    package static func questions(
        for schema: ModelReflection, columns: [ModelReflection.Property], existing: [String: Column]
    ) -> Questions {
        var questions = Questions()
        for property in columns where property.name != schema.id.name {
            guard let column = existing[property.name] else {
                if !property.isOptional { questions.hasRows = true }
                continue
            }
            if !property.isOptional && !column.isNotNull { questions.nullsIn.append(property.name) }
        }
        return questions
    }

    /// The steps that bring the table in line with `columns`, or the refusal. `typeName` is the
    /// column type the engine declares for a property (for messages).
    package static func steps(
        for schema: ModelReflection, columns: [ModelReflection.Property], existing: [String: Column], answers: Answers,
        typeName: (ModelReflection.Property) -> String
    ) throws -> [Step] {
        let table = SQLName.quoted(schema.table)
        let model = schema.modelType
        func refuse(_ message: String) -> ModelError { ModelError(.schemaMismatch, model, message) }
        guard let id = existing[schema.id.name], id.isPrimaryKey else {
            throw refuse("""
                table \(table) exists but its primary key is not the column "\(schema.id.name)" alone, so values cannot \
                be saved by id. Rename the table with a migration, or set `static var tableName` to another name.
                """)
        }
        guard id.accepts else {
            throw refuse("""
                has an id of type \(schema.id.type), stored as \(typeName(schema.id)), but the primary key "\(schema.id.name)" \
                of table \(table) is declared \(id.type); its rows could not be found by id. Migrate the table, or set \
                `static var tableName` to another name.
                """)
        }
        var steps: [Step] = []
        var madeOptional: [ModelReflection.Property] = []
        for property in columns where property.name != schema.id.name {
            let name = SQLName.quoted(property.name)
            guard let column = existing[property.name] else {
                if !property.isOptional && answers.hasRows {
                    throw refuse("""
                        has the new non-optional property `\(property.name)`, but table \(table) already has rows, which \
                        have no value for it. Make it optional (\(property.name): \(property.type)?), or add a migration \
                        that adds the column with a value for existing rows: ALTER TABLE \(table) ADD COLUMN \(name) \
                        \(typeName(property)) NOT NULL DEFAULT <value>
                        """)
                }
                steps.append(.addColumn(property))
                continue
            }
            guard column.accepts else {
                throw refuse("""
                    property `\(property.name)` is now \(property.type), stored as \(typeName(property)), but column \
                    \(name) of table \(table) is declared \(column.type.isEmpty ? "without a type" : column.type); \
                    its existing values would not decode. Convert the column with a migration.
                    """)
            }
            if property.isOptional && column.isNotNull {
                madeOptional.append(property)
            } else if !property.isOptional && !column.isNotNull, let nulls = answers.nulls[property.name], nulls > 0 {
                throw refuse("""
                    property `\(property.name)` is no longer optional, but \(nulls) row(s) of table \(table) have no \
                    value for it. Give them one with a migration (UPDATE \(table) SET \(name) = … WHERE \(name) IS NULL), \
                    or keep the property optional.
                    """)
            }
        }
        if !madeOptional.isEmpty { steps.append(.dropNotNull(madeOptional)) }
        let written = Set(columns.map(\.name))
        for column in existing.values.sorted(by: { $0.name < $1.name })
        where !written.contains(column.name) && column.isNotNull && !column.hasDefault && !column.isPrimaryKey {
            throw refuse("""
                no longer stores `\(column.name)`, but column "\(column.name)" of table \(table) is NOT NULL without a \
                default, so new rows cannot be saved. Drop it (ALTER TABLE \(table) DROP COLUMN "\(column.name)") or give \
                it a default in a migration.
                """)
        }
        return steps
    }
}
