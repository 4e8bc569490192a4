import Foundation
import Testing
@testable import CodableSQLite

private final class ClassModel: Codable, Model {
    var id: Int64?
    var name = ""
}

#if Macros
@RowCodable
#endif
private struct NoID: Codable, Model {
    var id: String { name }
    var name: String
}

/// A struct with a stored closure (left out of its coding keys): Swift has no key path for it.
#if Macros
@RowCodable
#endif
private struct WithClosure: Codable, Model {
    var id: Int64?
    var name = ""
    var onChange: @Sendable () -> Void = {}

    enum CodingKeys: String, CodingKey { case id, name }
}

/// An app's own `Filter`, which shadows ours: the namespaced spelling still reaches the library.
private struct Filter {}

@Suite("Models: errors carry a code; names in the SQLite namespace")
struct ModelErrorCodeTests {
    @Test func aClassIsRefusedWithAClearError() throws {
        let db = try ModelFixtures.memory()
        let error = #expect(throws: ModelError.self) { try db.save(ClassModel()) }
        #expect(error?.code == .unsupportedModel)
        #expect(error?.message.contains("is a class; models are structs") == true)
        #expect(try db.count(Note.self) == 0)   // the database is still usable
    }

    @Test func anUnreflectablePropertyIsNamedInTheError() throws {
        let db = try ModelFixtures.memory()
        let error = #expect(throws: ModelError.self) { try db.save(WithClosure()) }
        #expect(error?.code == .unsupportedModel)
        #expect(error?.message.contains("`onChange`") == true)
        #expect(error?.message.contains("is it a struct") == false)
        #expect(try db.count(Note.self) == 0)   // the database is still usable
    }

    @Test func codesMatchInCatchClauses() throws {
        let db = try ModelFixtures.memory()
        var matched: ModelError.Code?
        do {
            try db.save(NoID(name: "x"))
        } catch ModelError.Code.schemaMismatch {
            matched = .schemaMismatch
        } catch ModelError.Code.unsupportedModel {
            matched = .unsupportedModel
        } catch {}
        #expect(matched == .unsupportedModel)
        let limit = #expect(throws: ModelError.self) { try db.get(with: CodableSQLite.Filter<Person>().limit(-1)) }
        #expect(limit?.code == .invalidFilter)
        #expect(limit?.code.description == "invalidFilter")
        let page = #expect(throws: ModelError.self) { try db.get(with: CodableSQLite.Filter(\Person.age, is: .equal(to: 1)).and(CodableSQLite.Filter<Person>().limit(1, page: 0))) }
        #expect(page?.code == .invalidFilter)
    }

    @Test func moduleQualifiedSpellingsWorkWhenAnAppShadowsTheShortOnes() throws {
        let db = try ModelFixtures.memory()
        _ = Filter()   // the app's own type
        try db.save(Person("Bea", age: 40))
        let found = try db.get(with: CodableSQLite.Filter(\Person.age, is: .greater(than: 17)).sort(by: \.name))
        #expect(found.map(\.name) == ["Bea"])
        let rule: CodableSQLite.Rule<Int> = .less(than: 18)
        #expect(try db.count(with: CodableSQLite.Filter(\Person.age, is: rule)) == 0)
    }
}
