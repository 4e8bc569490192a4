import Foundation
import Testing
@testable import CodableSQLite

// ExplicitIDs on its own: which ids a save call gives explicitly to values whose type lets the
// database assign ids, kept free only when the call also has values without one (issue 21).

private struct Tag: Model {
    var id: Int64?
    var name: String
}

private struct Post: Model {
    var id: UUID
    var tags: [Tag]
    var pinned: Tag?
}

private struct Word: Model {
    var id: String
}

private struct Glossary: Model {
    var id: UUID
    var words: [Word]
}

private func tag(_ id: Int64?) -> Tag { Tag(id: id, name: "t\(id.map(String.init) ?? "-")") }

private func explicitIDs(_ values: [Tag]) throws -> ExplicitIDs {
    try ExplicitIDs(of: values, schema: ModelReflection.of(Tag.self))
}

@Suite("Plans: explicit ids kept free")
struct ExplicitIDsPlanTests {
    @Test("With values with and without ids, the explicit ids and the largest are kept free")
    func mixedValuesKeepTheirIDs() throws {
        let ids = try explicitIDs([tag(7), tag(nil), tag(3), tag(-4), tag(nil)])
        #expect(!ids.isEmpty)
        #expect(ids.ids(of: Tag.self) == [7, 3, -4])
        let kept = try #require(ids.kept(Tag.self))
        #expect(kept.ids == [7, 3, -4])
        #expect(kept.largest == 7)
    }

    @Test("Negative ids only: the largest is the largest of them")
    func largestOfNegativeIDs() throws {
        #expect(try #require(explicitIDs([tag(-9), tag(nil), tag(-2)]).kept(Tag.self)).largest == -2)
    }

    @Test("Only explicit ids, or only id-less values: nothing to keep free")
    func oneKindOfValueKeepsNothing() throws {
        for values in [[tag(1), tag(2)], [tag(nil), tag(nil)], []] {
            let ids = try explicitIDs(values)
            #expect(ids.isEmpty)
            #expect(ids.kept(Tag.self) == nil)
            #expect(ids.ids(of: Tag.self).isEmpty)
        }
    }

    @Test("A type whose ids the database never assigns keeps nothing")
    func typeWithoutAssignedIDs() throws {
        let ids = try ExplicitIDs(of: [Word(id: "a"), Word(id: "b")], schema: ModelReflection.of(Word.self))
        #expect(ids.isEmpty)
    }

    @Test("stopKeeping frees the type")
    func stopKeeping() throws {
        var ids = try explicitIDs([tag(5), tag(nil)])
        #expect(ids.kept(Tag.self) != nil)
        ids.stopKeeping(Tag.self)
        #expect(ids.isEmpty)
        #expect(ids.kept(Tag.self) == nil)
    }

    @Test("In graphs, related values' explicit ids are kept across the call's values and relationships")
    func graphsKeepRelatedIDs() throws {
        let posts = [
            Post(id: UUID(), tags: [tag(nil), tag(7)], pinned: nil),
            Post(id: UUID(), tags: [], pinned: tag(12)),
        ]
        let ids = try ExplicitIDs(ofGraphs: posts)
        #expect(ids.ids(of: Tag.self) == [7, 12])
        #expect(try #require(ids.kept(Tag.self)).largest == 12)
        #expect(ids.kept(Post.self) == nil)
    }

    @Test("In graphs, explicit ids without id-less values of their type keep nothing")
    func graphsWithOnlyExplicitIDs() throws {
        #expect(try ExplicitIDs(ofGraphs: [Post(id: UUID(), tags: [tag(1)], pinned: tag(2))]).isEmpty)
        #expect(try ExplicitIDs(ofGraphs: [Post(id: UUID(), tags: [tag(nil)], pinned: nil)]).isEmpty)
        #expect(try ExplicitIDs(ofGraphs: [Glossary(id: UUID(), words: [Word(id: "x")])]).isEmpty)
    }
}
