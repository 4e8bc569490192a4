import Foundation
import Testing
@testable import CodableSQLite

// SchemaChange.checkRelationshipColumns on its own: the columns and foreign keys a catalog lists,
// and whether a relationship's column is still the JSON a version before it wrote.

private struct Performer: Model {
    var id: String
    var name: String
}

private struct Label: Model {
    var id: UUID
    var name: String
}

private struct Album: Model {
    var id: UUID
    var title: String
    var label: Label?
    var performers: [Performer]
    static var tableName: String { "plan_albums" }
}

private struct Single: Model {
    var id: UUID
    var label: Label
}

private func check(_ type: (some Model).Type, columns: Set<String>, foreignKeys: Set<String> = []) throws {
    try SchemaChange.checkRelationshipColumns(of: try ModelReflection.of(type), columns: columns, foreignKeys: foreignKeys)
}

/// The refusal of `check`, which must be a schema mismatch of `type`.
private func refusal(_ type: (some Model).Type, columns: Set<String>, foreignKeys: Set<String> = []) throws -> String {
    let error = try #require(throws: ModelError.self) { try check(type, columns: columns, foreignKeys: foreignKeys) }
    #expect(error.code == .schemaMismatch)
    #expect(error.model == String(describing: type))
    return error.message
}

@Suite("Plans: relationship columns")
struct RelationshipColumnPlanTests {
    @Test("A to-many relationship with a column of its name is refused: the column holds it as JSON")
    func toManyWithAColumnIsRefused() throws {
        let message = try refusal(Album.self, columns: ["id", "title", "label", "performers"], foreignKeys: ["label"])
        #expect(message.contains("has the relationship `performers` ([Performer])"))
        #expect(message.contains("column \"performers\" of table \"plan_albums\" holds it as JSON"))
        #expect(message.contains("save the values decoded from the JSON as Performer values"))
        #expect(message.contains("ALTER TABLE \"plan_albums\" DROP COLUMN \"performers\""))
    }

    @Test("A to-many relationship's column is refused even when the catalog lists it as a foreign key")
    func toManyColumnIsRefusedWhateverItsConstraint() throws {
        let message = try refusal(Album.self, columns: ["id", "performers"], foreignKeys: ["performers"])
        #expect(message.contains("`performers`"))
    }

    @Test("A to-one relationship whose column is not a foreign key is refused, naming its target")
    func toOneWithoutForeignKeyIsRefused() throws {
        let message = try refusal(Album.self, columns: ["id", "title", "label"])
        #expect(message.contains("has the relationship `label` (Label)"))
        #expect(message.contains("column \"label\" of table \"plan_albums\" holds it as JSON"))
        #expect(message.contains("ALTER TABLE \"plan_albums\" DROP COLUMN \"label\""))
        // A foreign key on another column does not make this one a link.
        #expect(try refusal(Album.self, columns: ["id", "label"], foreignKeys: ["title"]).contains("`label`"))
    }

    @Test("A non-optional to-one is checked like an optional one, in the default table")
    func nonOptionalToOneIsChecked() throws {
        let message = try refusal(Single.self, columns: ["id", "label"])
        #expect(message.contains("has the relationship `label` (Label)"))
        #expect(message.contains("of table \"Single\""))
        #expect(throws: Never.self) { try check(Single.self, columns: ["id", "label"], foreignKeys: ["label"]) }
    }

    @Test("A to-one relationship whose column is a foreign key is accepted")
    func toOneWithForeignKeyIsAccepted() throws {
        #expect(throws: Never.self) { try check(Album.self, columns: ["id", "title", "label"], foreignKeys: ["label"]) }
    }

    @Test("Relationships without a column of their name are accepted")
    func noColumnIsAccepted() throws {
        #expect(throws: Never.self) { try check(Album.self, columns: ["id", "title"]) }
        #expect(throws: Never.self) { try check(Album.self, columns: []) }   // no table yet
        #expect(throws: Never.self) { try check(Performer.self, columns: ["id", "name", "performers", "label"]) }
    }
}
