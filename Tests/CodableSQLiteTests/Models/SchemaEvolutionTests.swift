import Foundation
import Testing
@testable import CodableSQLite

// Versions of one model sharing a table, as an app's model changes between releases.
#if Macros
@RowCodable
#endif
private struct ItemV1: Codable, Model, Equatable { var id: Int; var title: String; static var tableName: String { "item" } }
#if Macros
@RowCodable
#endif
private struct ItemV2: Codable, Model, Equatable { var id: Int; var title: String; var note: String?; static var tableName: String { "item" } }
#if Macros
@RowCodable
#endif
private struct ItemV3: Codable, Model { var id: Int; var title: String; var priority: Int; static var tableName: String { "item" } }
#if Macros
@RowCodable
#endif
private struct ItemRemoved: Codable, Model, Equatable { var id: Int; static var tableName: String { "item" } }
#if Macros
@RowCodable
#endif
private struct ItemRetyped: Codable, Model { var id: Int; var title: Int; static var tableName: String { "item" } }
#if Macros
@RowCodable
#endif
private struct ItemOptionalTitle: Codable, Model { var id: Int; var title: String?; static var tableName: String { "item" } }

@Suite("Models: schema evolution")
struct SchemaEvolutionTests {
    @Test func addedOptionalPropertyAddsAColumnAndOldRowsReadNil() throws {
        let db = try ModelFixtures.file()
        try db.save(ItemV1(id: 1, title: "old"))
        try db.save(ItemV2(id: 2, title: "new", note: "n"))
        #expect(try db.columns(in: "item").map(\.name) == ["id", "title", "note"])
        #expect(try db.get(ItemV2.self) == [ItemV2(id: 1, title: "old", note: nil), ItemV2(id: 2, title: "new", note: "n")])
    }

    @Test func addedOptionalPropertyReadsNilBeforeAnySave() throws {
        let db = try ModelFixtures.memory()
        try db.save(ItemV1(id: 1, title: "old"))
        #expect(try db.get(ItemV2.self) == [ItemV2(id: 1, title: "old", note: nil)])
    }

    @Test func newNonOptionalPropertyOnATableWithRowsIsAClearError() throws {
        let db = try ModelFixtures.memory()
        try db.save(ItemV1(id: 1, title: "old"))
        let error = #expect(throws: ModelError.self) { try db.save(ItemV3(id: 2, title: "x", priority: 1)) }
        #expect(error?.model == "ItemV3")
        #expect(error?.message.contains("`priority`") == true)
        #expect(error?.message.contains("migration") == true)
        let readError = #expect(throws: ModelError.self) { try db.get(ItemV3.self) }
        #expect(readError?.message.contains("`priority`") == true)
        // Nothing changed, nothing lost.
        #expect(try db.get(ItemV1.self) == [ItemV1(id: 1, title: "old")])
        #expect(try db.columns(in: "item").map(\.name) == ["id", "title"])
    }

    @Test func newNonOptionalPropertyOnAnEmptyTableIsAdded() throws {
        let db = try ModelFixtures.memory()
        try db.save(ItemV1(id: 1, title: "old"))
        try db.delete(ItemV1(id: 1, title: "old"))
        try db.save(ItemV3(id: 2, title: "x", priority: 5))
        #expect(try db.get(ItemV3.self).map(\.priority) == [5])
    }

    @Test func removedPropertyLeavesItsColumnAndSavesStillWork() throws {
        let db = try ModelFixtures.memory()
        try db.save(ItemV1(id: 1, title: "old"))
        try db.save(ItemRemoved(id: 2))
        #expect(try db.get(ItemRemoved.self) == [ItemRemoved(id: 1), ItemRemoved(id: 2)])
        #expect(try db.read("SELECT title FROM item ORDER BY id").map { $0["title"] } == [.text("old"), .text("")])
    }

    @Test func changedTypeIsAClearError() throws {
        let db = try ModelFixtures.memory()
        try db.save(ItemV1(id: 1, title: "old"))
        let error = #expect(throws: ModelError.self) { try db.save(ItemRetyped(id: 2, title: 3)) }
        #expect(error?.message.contains("`title`") == true)
        #expect(try db.get(ItemV1.self) == [ItemV1(id: 1, title: "old")])
    }

    @Test func propertyMadeOptionalDropsNotNullInPlace() throws {
        let db = try ModelFixtures.memory()
        try db.save(ItemV1(id: 1, title: "old"))
        try db.save(ItemOptionalTitle(id: 2, title: nil))
        #expect(try db.get(ItemOptionalTitle.self, id: 2)?.title == nil)
        #expect(try db.get(ItemOptionalTitle.self, id: 1)?.title == "old")
        #expect(try db.columns(in: "item").first { $0.name == "title" }?.isNotNull == false)
        #expect(try db.read("PRAGMA integrity_check").first?["integrity_check"] == .text("ok"))
    }

    @Test func propertyMadeOptionalOverAHandMadeNotNullColumnIsAClearError() throws {
        let db = try ModelFixtures.memory()
        _ = try db.execute(raw: #"CREATE TABLE "item" ("id" INTEGER PRIMARY KEY, "title" TEXT NOT NULL CHECK ("title" <> ''))"#)
        _ = try db.execute(raw: #"INSERT INTO "item" VALUES (1, 'old')"#)
        let error = #expect(throws: ModelError.self) { try db.save(ItemOptionalTitle(id: 2, title: nil)) }
        #expect(error?.code == .schemaMismatch)
        #expect(error?.message.contains("NOT NULL") == true)
        #expect(try db.get(ItemV1.self) == [ItemV1(id: 1, title: "old")])
    }

    @Test func renamedCodingKeysAreAClearError() throws {
        struct Renamed: Codable, Model {
            var id: Int
            var fullName: String
            enum CodingKeys: String, CodingKey { case id, fullName = "full_name" }
        }
        let db = try ModelFixtures.memory()
        let error = #expect(throws: ModelError.self) { try db.save(Renamed(id: 1, fullName: "x")) }
        #expect(error?.message.contains("full_name") == true)
        #expect(try db.tables().isEmpty)
    }

    @Test func propertiesLeftOutOfCodingKeysGetNoColumn() throws {
        struct Cached: Codable, Model, Equatable {
            var id: Int
            var name: String
            var scratch = 0
            enum CodingKeys: String, CodingKey { case id, name }
        }
        let db = try ModelFixtures.memory()
        try db.save(Cached(id: 1, name: "a", scratch: 9))
        #expect(try db.columns(in: "Cached").map(\.name) == ["id", "name"])
        #expect(try db.get(Cached.self) == [Cached(id: 1, name: "a", scratch: 0)])
    }

    @Test func existingTableWithoutThatPrimaryKeyIsAClearError() throws {
        let db = try ModelFixtures.memory()
        try db.execute(raw: "CREATE TABLE item (id INTEGER, title TEXT)")
        let error = #expect(throws: ModelError.self) { try db.save(ItemV1(id: 1, title: "x")) }
        #expect(error?.message.contains("primary key") == true)
    }
}
