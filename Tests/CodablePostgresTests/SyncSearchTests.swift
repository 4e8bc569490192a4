#if Postgres
import CodableSync
import Foundation
import Testing

/// Full-text search and sync: the index is each database's own, never synced; rows a pull
/// applies are indexed as any others.
@Suite("Sync: searchable models", .serverShare, .needsPostgres, .serialized, .hangLimit(minutes: 3))
struct SyncSearchTests {
    #if Macros
    @RowCodable
    #endif
    struct Recipe: UUIDModel, SearchableModel, Sendable, Equatable {
        let id: UUID
        var title: String
        var steps: String
        static var searchable: [SearchField<Recipe>] { [.field(\.title, weight: 2), .field(\.steps)] }
    }

    @Test("rows a pull applies, edits and deletes included, are found by the device's search; the index is not synced")
    func pulledRowsAreIndexed() async throws {
        let server = try await TestServer.shared.freshDatabase()
        func device() throws -> (SQLite.Database, SQLite.Sync) {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("sync-search-\(UUID().uuidString).sqlite").path
            let db = try SQLite.Database(path: path)
            return (db, try SQLite.Sync(local: db, server: server, models: [Recipe.self]))
        }
        let (a, syncA) = try device()
        let (b, syncB) = try device()
        var soup = Recipe(id: UUID(), title: "Pumpkin soup", steps: "Roast the pumpkin, then blend with stock")
        try await a.save([soup, Recipe(id: UUID(), title: "Crêpes", steps: "Whisk flour, eggs and milk")])
        try await syncA.sync()
        try await syncB.sync()
        #expect(try await b.search(Recipe.self, for: "pumpk").map(\.value) == [soup])
        #expect(try await b.search(Recipe.self, for: "crepes").count == 1)
        #expect(try await server.search(Recipe.self, for: "roast blend").map(\.value) == [soup], "the server's own index")

        soup.steps = "Simmer the squash"
        try await a.save(soup)
        try await a.delete(Recipe.self, id: try #require(try await a.search(Recipe.self, for: "crepes").first?.value.id))
        try await syncA.sync()
        try await syncB.sync()
        #expect(try await b.search(Recipe.self, for: "roast").isEmpty, "the pulled edit replaced the words")
        #expect(try await b.search(Recipe.self, for: "squash").map(\.value) == [soup])
        #expect(try await b.search(Recipe.self, for: "crepes").isEmpty, "the pulled delete removed them")

        // Nothing of the index travels: the server logged rows of the model's table only, and the
        // devices sync that table only; each has its own index.
        let logged = try await server.textRows("SELECT DISTINCT tbl FROM codablesync_changes", [])
        #expect(logged == [["Recipe"]], "\(logged)")
        let synced = try await b.read("SELECT tbl FROM codablesync_tables").compactMap { $0["tbl"]?.stringValue }
        #expect(synced == ["Recipe"])
        #expect(try await b.read("SELECT count(*) AS n FROM \"Recipe_search\"").first?["n"]?.int64Value == 1)
    }
}
#endif
