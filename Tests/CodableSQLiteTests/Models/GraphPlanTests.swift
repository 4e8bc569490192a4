import Foundation
import Testing
@testable import CodableSQLite

// GraphSave's and DeleteRules' decisions on their own: the steps of a save in order, which of the
// values given one id is stored, which relationships a delete looks into, and what it does with
// the related values an engine found.

private struct Chapter: Model {
    var id: Int
    var title: String
}

private struct Publisher: Model {
    var id: String
}

private struct Book: Model {
    var id: UUID
    var title: String
    var publisher: Publisher?
    var chapters: [Chapter]
    var editor: Publisher?
    var appendices: [Chapter]
    var translator: Publisher?
    static var deleteRules: [PartialKeyPath<Book>: DeleteRule] {
        [\Book.publisher: .deny, \Book.chapters: .cascade, \Book.appendices: .cascade, \Book.translator: .noAction]
    }
}

private struct Plain: Model {
    var id: Int64
    var text: String
}

/// A step, spelled so it compares: `related publisher`, `values`, `links chapters`.
private func spelled(_ step: GraphSave.Step) -> String {
    switch step {
    case .related(let relationship): "related \(relationship.name)"
    case .values: "values"
    case .links(let relationship): "links \(relationship.name)"
    }
}

private func book() throws -> ModelReflection { try ModelReflection.of(Book.self) }

private func relationship(_ name: String) throws -> Relationship {
    try #require(try book().relationships.first { $0.name == name })
}

/// What `decide` returns, spelled so it compares: `chapters [3, 1]`.
private func decided(_ found: [(Relationship, [Int])]) throws -> [String] {
    try DeleteRules.decide(for: book(), found: found).map { "\($0.0.name) \($0.1)" }
}

@Suite("Plans: saving graphs")
struct GraphSavePlanTests {
    @Test("A model without relationships saves its values only")
    func noRelationshipsSavesValues() throws {
        #expect(GraphSave.steps(for: try ModelReflection.of(Plain.self)).map(spelled) == ["values"])
    }

    @Test("Related values first in declaration order, then the values, then each to-many's links")
    func stepsInOrder() throws {
        #expect(GraphSave.steps(for: try book()).map(spelled) == [
            "related publisher", "related chapters", "related editor", "related appendices", "related translator",
            "values",
            "links chapters", "links appendices",
        ])
    }

    @Test("Of the values given one id, only the last is stored")
    func lastOfAnIDIsStored() {
        #expect(GraphSave.storedPositions(ids: [1, 2, 1, 3, 1]) == [false, true, false, true, true])
        #expect(GraphSave.storedPositions(ids: ["a", "b", "b"]) == [true, false, true])
    }

    @Test("The tables a model is read from, and observed through: its own, link tables, targets, each once")
    func graphTables() throws {
        let book = Book.tableName, publisher = Publisher.tableName, chapter = Chapter.tableName
        #expect(try ModelReflection.graphTables(of: Book.self) == [book, publisher, "\(book).chapters", chapter, "\(book).appendices"])
        #expect(try ModelReflection.graphTables(of: Plain.self) == [Plain.tableName])
    }

    @Test("Distinct ids, and values whose id the database assigns, are all stored")
    func distinctAndAssignedIDsAreStored() {
        #expect(GraphSave.storedPositions(ids: [3, 2, 1]) == [true, true, true])
        #expect(GraphSave.storedPositions(ids: [nil, 5, nil, 5, nil] as [Int?]) == [true, false, true, true, true])
        #expect(GraphSave.storedPositions(ids: [Int?]()) == [])
    }
}

@Suite("Plans: delete rules")
struct DeleteRulePlanTests {
    @Test("The relationships a delete looks into are the .deny and .cascade ones, in declaration order")
    func checkedRelationships() throws {
        #expect(DeleteRules.checked(in: try book()).map(\.name) == ["publisher", "chapters", "appendices"])
        #expect(DeleteRules.checked(in: try ModelReflection.of(Plain.self)).isEmpty)
    }

    @Test("Relationships without a rule nullify")
    func defaultRuleIsNullify() throws {
        #expect(try relationship("editor").rule == .nullify)
        #expect(try relationship("translator").rule == .noAction)
    }

    @Test("Nothing found: nothing to refuse, nothing to cascade")
    func nothingFound() throws {
        #expect(try decided([]) == [])
        #expect(try decided([(relationship("publisher"), []), (relationship("chapters"), [])]) == [])
    }

    @Test(".deny refuses while values are linked, naming the relationship, the count and the target")
    func denyRefuses() throws {
        let error = try #require(throws: ModelError.self) {
            try decided([(relationship("chapters"), [7]), (relationship("publisher"), [1, 2, 1])])
        }
        #expect(error.code == .deleteDenied)
        #expect(error.model == "Book")
        #expect(error.message.contains("its relationship `publisher` has the delete rule .deny"))
        #expect(error.message.contains("still links 2 Publisher value(s)"))   // distinct values
    }

    @Test(".cascade deletes the related values once each, in the order found, chunks merged")
    func cascadeMergesAndDeduplicates() throws {
        let chapters = try relationship("chapters")
        #expect(try decided([(chapters, [3, 1]), (chapters, [1, 2, 3])]) == ["chapters [3, 1, 2]"])
    }

    @Test("Each cascading relationship is one entry, in the order the engine found them")
    func cascadesInOrderFound() throws {
        let found = [
            (try relationship("appendices"), [9]), (try relationship("chapters"), [4]), (try relationship("appendices"), [8, 9]),
        ]
        #expect(try decided(found) == ["appendices [9, 8]", "chapters [4]"])
    }

    @Test("A cascade that found nothing is left out")
    func emptyCascadeIsLeftOut() throws {
        #expect(try decided([(relationship("chapters"), []), (relationship("appendices"), [5])]) == ["appendices [5]"])
    }

    @Test("A delete a foreign key stopped is refused with one message, naming the model and the engine's words")
    func stillReferenced() {
        let error = DeleteRules.stillReferenced(Publisher.self, detail: "FOREIGN KEY constraint failed")
        #expect(error.code == .deleteDenied)
        #expect(error.model == "Publisher")
        #expect(error.message.contains("through a non-optional relationship (a property of type Publisher, not Publisher?)"))
        #expect(error.message.contains("(FOREIGN KEY constraint failed)"))
    }

    @Test(".nullify and .noAction leave related values to the foreign keys and link tables")
    func nullifyAndNoActionDoNothing() throws {
        #expect(try decided([(relationship("editor"), [1]), (relationship("translator"), [2])]) == [])
    }
}
