import Foundation
import Testing
@testable import CodableSQLite

// SchemaChange's decision on its own, without a database: the model's properties, a catalog's
// description of the existing table, the engine's answers, and the steps or the refusal.

private struct Item: Model {
    var id: UUID
    var title: String
    var note: String?
    var count: Int
    static var tableName: String { "plan_items" }
}

private struct Counter: Model {
    var id: Int64
    var value: Int
}

/// A column as a catalog describes it.
private func column(
    _ name: String, _ type: String = "TEXT", accepts: Bool = true, notNull: Bool = false, hasDefault: Bool = false,
    primaryKey: Bool = false
) -> SchemaChange.Column {
    SchemaChange.Column(name: name, type: type, accepts: accepts, isNotNull: notNull, hasDefault: hasDefault, isPrimaryKey: primaryKey)
}

/// The table `Item` creates: each column as the model declares it.
private func itemTable() -> [String: SchemaChange.Column] {
    [
        "id": column("id", notNull: true, primaryKey: true),
        "title": column("title", notNull: true),
        "note": column("note"),
        "count": column("count", "INTEGER", notNull: true),
    ]
}

/// `existing` without the columns `names`.
private func without(_ names: String..., in existing: [String: SchemaChange.Column]) -> [String: SchemaChange.Column] {
    existing.filter { !names.contains($0.key) }
}

private func schema() throws -> ModelReflection { try ModelReflection.of(Item.self) }

/// The steps, spelled so they compare: `add note`, `dropNotNull note,title`.
private func steps(
    _ existing: [String: SchemaChange.Column], answers: SchemaChange.Answers = .init(), columns: [String]? = nil
) throws -> [String] {
    let schema = try schema()
    let written = columns.map { names in schema.properties.filter { names.contains($0.name) } } ?? schema.properties
    return try SchemaChange.steps(for: schema, columns: written, existing: existing, answers: answers, typeName: \.storage.rawValue)
        .map { step in
            switch step {
            case .addColumn(let property): "add \(property.name)"
            case .dropNotNull(let properties): "dropNotNull " + properties.map(\.name).joined(separator: ",")
            }
        }
}

/// The refusal of `steps`, which must be a schema mismatch.
private func refusal(
    _ existing: [String: SchemaChange.Column], answers: SchemaChange.Answers = .init(), columns: [String]? = nil
) throws -> String {
    let error = try #require(throws: ModelError.self) { try steps(existing, answers: answers, columns: columns) }
    #expect(error.code == .schemaMismatch)
    #expect(error.model == "Item")
    return error.message
}

@Suite("Plans: schema changes")
struct SchemaChangePlanTests {
    // MARK: Questions

    @Test("A table that matches the model asks nothing")
    func matchingTableAsksNothing() throws {
        let questions = SchemaChange.questions(for: try schema(), columns: try schema().properties, existing: itemTable())
        #expect(!questions.hasRows)
        #expect(questions.nullsIn.isEmpty)
    }

    @Test("A new non-optional property asks whether the table has rows; a new optional one does not")
    func newPropertiesAskAboutRows() throws {
        let schema = try schema()
        #expect(SchemaChange.questions(for: schema, columns: schema.properties, existing: without("count", in: itemTable())).hasRows)
        #expect(!SchemaChange.questions(for: schema, columns: schema.properties, existing: without("note", in: itemTable())).hasRows)
    }

    @Test("A non-optional property over a nullable column asks for its nulls; the id and optional properties do not")
    func nullableColumnsOfNonOptionalPropertiesAskForNulls() throws {
        let schema = try schema()
        var existing = itemTable()
        existing["id"] = column("id", primaryKey: true)          // nullable, but the id is never asked about
        existing["title"] = column("title")                      // non-optional property, nullable column
        existing["count"] = column("count", "INTEGER")           // likewise
        existing["note"] = column("note", notNull: false)        // optional property: nothing to ask
        let questions = SchemaChange.questions(for: schema, columns: schema.properties, existing: existing)
        #expect(questions.nullsIn == ["title", "count"])         // in the properties' order
        #expect(!questions.hasRows)
    }

    // MARK: Steps

    @Test("A table that matches the model needs no step")
    func matchingTableNeedsNothing() throws {
        #expect(try steps(itemTable()) == [])
        #expect(try steps(itemTable(), answers: .init(hasRows: true)) == [])
    }

    @Test("A new optional property becomes a column, rows or not")
    func newOptionalPropertyIsAdded() throws {
        #expect(try steps(without("note", in: itemTable())) == ["add note"])
        #expect(try steps(without("note", in: itemTable()), answers: .init(hasRows: true)) == ["add note"])
    }

    @Test("A new non-optional property becomes a column while the table is empty")
    func newNonOptionalPropertyOnAnEmptyTableIsAdded() throws {
        #expect(try steps(without("count", "note", in: itemTable())) == ["add note", "add count"])
    }

    @Test("A new non-optional property is refused when the table has rows, naming it, the table and the way out")
    func newNonOptionalPropertyWithRowsIsRefused() throws {
        let message = try refusal(without("count", in: itemTable()), answers: .init(hasRows: true))
        #expect(message.contains("new non-optional property `count`"))
        #expect(message.contains("table \"plan_items\" already has rows"))
        #expect(message.contains("(count: Int?)"))
        #expect(message.contains("ALTER TABLE \"plan_items\" ADD COLUMN \"count\" INTEGER NOT NULL DEFAULT <value>"))
    }

    @Test("A property whose type the column cannot hold is refused, naming the property, the column's type and the table")
    func typeTheColumnCannotHoldIsRefused() throws {
        var existing = itemTable()
        existing["count"] = column("count", "BLOB", accepts: false, notNull: true)
        let message = try refusal(existing)
        #expect(message.contains("property `count` is now Int, stored as INTEGER"))
        #expect(message.contains("column \"count\" of table \"plan_items\" is declared BLOB"))
        #expect(message.contains("Convert the column with a migration"))
    }

    @Test("A column without a declared type that cannot hold the property is said to have none")
    func untypedColumnIsNamedAsSuch() throws {
        var existing = itemTable()
        existing["title"] = column("title", "", accepts: false, notNull: true)
        #expect(try refusal(existing).contains("column \"title\" of table \"plan_items\" is declared without a type"))
    }

    @Test("Properties made optional lose NOT NULL, in one step after the new columns")
    func propertiesMadeOptionalDropNotNull() throws {
        var existing = without("count", in: itemTable())
        existing["note"] = column("note", notNull: true)
        #expect(try steps(existing) == ["add count", "dropNotNull note"])
    }

    @Test("A property made non-optional is refused while rows have no value for it, naming the count and the fix")
    func propertyMadeNonOptionalWithNullsIsRefused() throws {
        var existing = itemTable()
        existing["title"] = column("title")
        let message = try refusal(existing, answers: .init(hasRows: true, nulls: ["title": 3]))
        #expect(message.contains("property `title` is no longer optional"))
        #expect(message.contains("3 row(s) of table \"plan_items\""))
        #expect(message.contains("UPDATE \"plan_items\" SET \"title\" = … WHERE \"title\" IS NULL"))
    }

    @Test("A property made non-optional is fine when no row lacks a value (or the count was not asked)")
    func propertyMadeNonOptionalWithoutNullsIsFine() throws {
        var existing = itemTable()
        existing["title"] = column("title")
        #expect(try steps(existing, answers: .init(hasRows: true, nulls: ["title": 0])) == [])
        #expect(try steps(existing, answers: .init(hasRows: true)) == [])
    }

    @Test("A column the model no longer writes that is NOT NULL without a default is refused, with the DROP COLUMN hint")
    func droppedNotNullColumnIsRefused() throws {
        var existing = itemTable()
        existing["legacy"] = column("legacy", notNull: true)
        let message = try refusal(existing)
        #expect(message.contains("no longer stores `legacy`"))
        #expect(message.contains("column \"legacy\" of table \"plan_items\" is NOT NULL without a default"))
        #expect(message.contains("ALTER TABLE \"plan_items\" DROP COLUMN \"legacy\""))
    }

    @Test("A property the model does not encode counts as dropped")
    func propertyNotWrittenCountsAsDropped() throws {
        #expect(try refusal(itemTable(), columns: ["id", "title", "note"]).contains("no longer stores `count`"))
    }

    @Test("A dropped column that is nullable, or has a default, is left alone")
    func droppedColumnsThatNewRowsCanOmitAreFine() throws {
        var existing = itemTable()
        existing["old"] = column("old")
        existing["flag"] = column("flag", "INTEGER", notNull: true, hasDefault: true)
        #expect(try steps(existing) == [])
    }

    @Test("A table without the id as its primary key is refused before anything else")
    func tableWithoutIDPrimaryKeyIsRefused() throws {
        var existing = without("count", in: itemTable())   // also a new property, which would be added
        existing["id"] = column("id", notNull: true, primaryKey: false)
        let message = try refusal(existing, answers: .init(hasRows: true))
        #expect(message.contains("table \"plan_items\" exists but its primary key is not the column \"id\" alone"))
        #expect(message.contains("static var tableName"))
        #expect(try refusal(without("id", in: itemTable())).contains("primary key is not the column \"id\" alone"))
    }

    @Test("A primary key of another type is refused, naming the id's type, its storage and the column's type")
    func primaryKeyOfAnotherTypeIsRefused() throws {
        var existing = itemTable()
        existing["id"] = column("id", "INTEGER", accepts: false, notNull: true, primaryKey: true)
        let message = try refusal(existing)
        #expect(message.contains("has an id of type UUID, stored as TEXT"))
        #expect(message.contains("the primary key \"id\" of table \"plan_items\" is declared INTEGER"))
    }

    @Test("The default table name is the type's, quoted in messages")
    func defaultTableNameInMessages() throws {
        let schema = try ModelReflection.of(Counter.self)
        let existing = ["id": column("id", "INTEGER", notNull: true, primaryKey: true)]
        let error = try #require(throws: ModelError.self) {
            try SchemaChange.steps(
                for: schema, columns: schema.properties, existing: existing, answers: .init(hasRows: true), typeName: \.storage.rawValue)
        }
        #expect(error.code == .schemaMismatch)
        #expect(error.model == "Counter")
        #expect(error.message.contains("table \"Counter\" already has rows"))
        #expect(error.message.contains("ADD COLUMN \"value\" INTEGER NOT NULL"))
    }
}
