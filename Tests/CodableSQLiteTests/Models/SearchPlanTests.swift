import Foundation
import Testing
@testable import CodableSQLite

// SearchPlan on its own: the index a searchable model's declaration becomes (columns, weight
// classes, language, signature), and the declarations it refuses, without building an index.

private struct Article: Model {
    var id: UUID
    var title: String
    var summary: String?
    var body: String
    var tagline: String
    static var tableName: String { "plan_articles" }
    static var searchable: [SearchField<Article>] {
        [.field(\.title, weight: 3), .field(\.summary, weight: 2), .field(\.body), .field(\.tagline, weight: 3)]
    }
    static var searchLanguage: SearchLanguage { .english }
}

private struct Memo: Model {
    var id: Int64?
    var text: String
    static var searchable: [SearchField<Memo>] { [.field(\.text)] }
}

private struct Brief: Model {
    var id: Int64?
    var text: String
    static var searchable: [SearchField<Brief>] { [.field(\.text)] }
    static var searchLanguage: SearchLanguage { SearchLanguage("german") }
}

private struct Unsearched: Model {
    var id: UUID
    var text: String
}

/// Declarations to refuse, set one at a time by the one test that uses it.
private struct Declared: Model {
    struct Place: Codable { var city: String }
    var id: UUID
    var a: String
    var b: String
    var c: String
    var d: String
    var e: String
    var rank: String
    var Declared_search: String
    var place: Place
    var shout: String { a.uppercased() }
    nonisolated(unsafe) static var fields: [SearchField<Declared>] = []
    nonisolated(unsafe) static var language = SearchLanguage.simple
    static var searchable: [SearchField<Declared>] { fields }
    static var searchLanguage: SearchLanguage { language }
}

@Suite("Plans: search indexes")
struct SearchPlanTests {
    @Test("Fields in declaration order, weight classes from the highest weight down")
    func fieldsAndWeightClasses() throws {
        let plan = try SearchPlan.of(Article.self)
        #expect(plan.model == "Article")
        #expect(plan.table == "plan_articles")
        #expect(plan.fields.map(\.name) == ["title", "summary", "body", "tagline"])
        #expect(plan.fields.map(\.weight) == [3, 2, 1, 3])
        #expect(plan.fields.map(\.weightClass) == ["A", "B", "C", "A"])
        #expect(plan.fields.map(\.isOptional) == [false, true, false, false])
    }

    @Test("The signature names the language and each field's class; PostgreSQL's weights are relative to the highest")
    func signatureAndWeights() throws {
        let plan = try SearchPlan.of(Article.self)
        #expect(plan.signature == "CodableModels search 1; language english; title A, summary B, body C, tagline A")
        #expect(plan.signature.hasPrefix(SearchPlan.signaturePrefix))
        #expect(plan.postgresWeights == "{0.0,\(1.0 / 3),\(2.0 / 3),1.0}")
        #expect(plan.indexTable == "plan_articles_search")
    }

    @Test("The language decides stemming on SQLite and matching word forms")
    func languages() throws {
        let english = try SearchPlan.of(Article.self)
        #expect(english.stemsOnSQLite && english.matchesWordForms)
        let simple = try SearchPlan.of(Memo.self)
        #expect(simple.language == .simple)
        #expect(!simple.stemsOnSQLite && !simple.matchesWordForms)
        #expect(simple.postgresWeights == "{0.0,0.0,0.0,1.0}")
        #expect(simple.indexTable == "Memo_search")
        let german = try SearchPlan.of(Brief.self)
        #expect(!german.stemsOnSQLite && german.matchesWordForms)
        #expect(german.signature == "CodableModels search 1; language german; text A")
    }

    @Test("Only models that list searchable properties have a plan")
    func ifSearchable() throws {
        #expect(try SearchPlan.ifSearchable(Unsearched.self) == nil)
        #expect(try SearchPlan.ifSearchable(String.self) == nil)
        #expect(try SearchPlan.ifSearchable(Memo.self)?.fields.map(\.name) == ["text"])
    }

    @Test("Declarations that cannot be indexed are refused, naming the property and the rule")
    func refusals() throws {
        let cases: [([SearchField<Declared>], SearchLanguage, String)] = [
            ([], .simple, "`searchable` lists no property"),
            ([.field(\.a)], SearchLanguage("en-US"), "the search language \"en-US\" is not a configuration name"),
            ([.field(\.a)], SearchLanguage("1st"), "\"1st\" is not a configuration name"),
            ([.field(\.a)], SearchLanguage(""), "\"\" is not a configuration name"),
            ([.field(\.place.city)], .simple, "place.city is inside a nested value"),
            ([.field(\.rank)], .simple, "cannot be named `rank`"),
            ([.field(\.Declared_search)], .simple, "cannot be named `Declared_search`"),
            ([.field(\.a, weight: 0)], .simple, "a has the weight 0.0; a weight is a positive number"),
            ([.field(\.a, weight: -1)], .simple, "a has the weight -1.0"),
            ([.field(\.a, weight: .infinity)], .simple, "a has the weight inf"),
            ([.field(\.a, weight: .nan)], .simple, "a has the weight nan"),
            ([.field(\.a), .field(\.b), .field(\.a, weight: 2)], .simple, "a is listed twice"),
            ([.field(\.a, weight: 1), .field(\.b, weight: 2), .field(\.c, weight: 3), .field(\.d, weight: 4), .field(\.e, weight: 5)],
             .simple, "uses 5 different weights (5.0, 4.0, 3.0, 2.0, 1.0); use at most 4"),
            ([.field(\.shout)], .simple, "is not a stored property"),
        ]
        for (fields, language, reason) in cases {
            Declared.fields = fields
            Declared.language = language
            let error = try #require(throws: ModelError.self, "\(reason)") { try SearchPlan.of(Declared.self) }
            #expect(error.code == .unsupportedModel)
            #expect(error.message.hasPrefix("cannot be searched: "))
            #expect(error.message.contains(reason), "\(error.message)")
        }
        Declared.fields = [.field(\.a, weight: 1), .field(\.b, weight: 2), .field(\.c, weight: 3), .field(\.d, weight: 4), .field(\.e, weight: 4)]
        Declared.language = SearchLanguage("_custom_2")
        let plan = try SearchPlan.of(Declared.self)
        #expect(plan.fields.map(\.weightClass) == ["D", "C", "B", "A", "A"], "four weights are allowed")
    }
}
