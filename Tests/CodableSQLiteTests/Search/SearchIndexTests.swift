import Foundation
import Testing
@testable import CodableSQLite

/// What only SQLite's index has: triggers that any writer of the file runs, raw SQL included,
/// and an FTS5 table that can be checked against the model's table.
@Suite("Search: SQLite's index")
struct SearchIndexTests {
    #if Macros
    @RowCodable
    #endif
    struct Note: SearchableModel, Equatable, Sendable {
        var id: Int?
        var title: String
        var body: String?
        static var searchable: [SearchField<Note>] { [.field(\.title, weight: 2), .field(\.body)] }
    }

    #if Macros
    @RowCodable
    #endif
    struct PlainNote: Model, Sendable {
        var id: Int?
        var title: String
        var body: String?
        static var tableName: String { "Note" }
    }

    /// Whether the index holds exactly the table's text (FTS5's own check against the rows).
    static func indexMatchesTable(_ db: SQLite.Database) throws -> Bool {
        let rows = try db.read("SELECT rowid AS r, title, body FROM \"Note\" ORDER BY rowid")
        let indexed = try db.read("SELECT rowid AS r, title, body FROM \"Note_search\" ORDER BY rowid")
        _ = try db.execute(raw: "INSERT INTO \"Note_search\" (\"Note_search\", rank) VALUES ('integrity-check', 0)")
        return rows == indexed
    }

    @Test func rawSQLWritesAreIndexedIncludingInsertOrReplace() throws {
        let db = try ModelFixtures.file()
        try db.save(Note(id: 1, title: "milk", body: nil))
        _ = try db.write("INSERT OR REPLACE INTO \"Note\" (id, title, body) VALUES (1, 'water', 'juice')")
        #expect(try db.search(Note.self, for: "milk").isEmpty, "the replaced row's words are gone")
        #expect(try db.search(Note.self, for: "juice").map(\.value.title) == ["water"])
        _ = try db.write("INSERT INTO \"Note\" (id, title) VALUES (2, 'bread')")
        _ = try db.write("UPDATE \"Note\" SET body = 'crust' WHERE id = 2")
        #expect(try db.search(Note.self, for: "crust").map(\.value.id) == [2])
        _ = try db.write("DELETE FROM \"Note\" WHERE id = 1")
        #expect(try db.search(Note.self, for: "water").isEmpty)
        _ = try db.write("REPLACE INTO \"Note\" (id, title) VALUES (2, 'toast')")
        #expect(try db.search(Note.self, for: "bread").isEmpty)
        #expect(try Self.indexMatchesTable(db))
    }

    @Test func anotherProcessWritingWithTheSQLiteToolIsIndexed() throws {
        let db = try ModelFixtures.file()
        try db.save(Note(title: "first", body: nil))
        let tool = Process()
        tool.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        tool.arguments = ["sqlite3", db.path, "INSERT OR REPLACE INTO \"Note\" (id, title, body) VALUES (1, 'second', 'from the tool')"]
        try tool.run()
        tool.waitUntilExit()
        #expect(tool.terminationStatus == 0)
        #expect(try db.search(Note.self, for: "tool").map(\.value.title) == ["second"])
        #expect(try db.search(Note.self, for: "first").isEmpty)
        #expect(try Self.indexMatchesTable(db))
    }

    @Test func rebuildFillsTheIndexFromTheRows() async throws {
        let db = try ModelFixtures.file()
        try await db.save([Note(title: "one", body: nil), Note(title: "two", body: "words")])
        // Rows written around the triggers, as after `DROP TRIGGER` by hand.
        _ = try await db.execute(raw: "DELETE FROM \"Note_search\"")
        #expect(try await db.search(Note.self, for: "two").isEmpty)
        try await db.rebuildSearchIndex(Note.self)
        #expect(try await db.search(Note.self, for: "two words").map(\.value.title) == ["two"])
        #expect(try Self.indexMatchesTable(db))
    }

    @Test func anIndexDroppedByAnotherVersionIsMadeAgain() throws {
        let db = try ModelFixtures.file()
        try db.save(Note(title: "kept", body: nil))
        #expect(try db.search(Note.self, for: "kept").count == 1)
        // Another app version, without the declaration, drops it (on its own connection).
        let other = try SQLite.Database(path: db.path)
        try other.save(PlainNote(title: "plain", body: nil))
        #expect(try other.read("SELECT name FROM sqlite_master WHERE name = 'Note_search'").isEmpty)
        #expect(Set(try db.search(Note.self, for: "kept plain").map(\.value.title)).isEmpty)
        #expect(Set(try db.search(Note.self, for: "plain").map(\.value.title)) == ["plain"])
        #expect(try Self.indexMatchesTable(db))
    }

    @Test func aSearchInsideAReadOfATableSavedBeforeTheDeclarationSaysWhatToDo() throws {
        let db = try ModelFixtures.file()
        try db.save(PlainNote(title: "old", body: nil))
        let result = Result { try db.read { _ in try db.search(Note.self, for: "old") } }
        switch result {
        case .success(let hits):
            #expect(hits.map(\.value.title) == ["old"])
        case .failure(let error):
            #expect((error as? ModelError)?.message.contains("Search once outside the read first") == true, "\(error)")
        }
        #expect(try db.search(Note.self, for: "old").map(\.value.title) == ["old"])
        #expect(try db.read { _ in try db.search(Note.self, for: "old") }.count == 1)
    }
}
