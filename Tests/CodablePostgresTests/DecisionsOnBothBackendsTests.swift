import Foundation
import Testing
import CodableSQLite
#if Postgres
@testable import CodablePostgres
#endif

/// The decisions both engines once made apart, each now with one result on both, through
/// ``ModelStore``: reads change no schema, an old JSON column under a relationship is refused
/// alike, the key-value store has one form, an id-changing update is one kind of change, and a
/// transaction body's calls on the outer handle join the transaction.
@Suite("One decision on SQLite and PostgreSQL", .serverShare, .hangLimit(minutes: 3))
struct DecisionsOnBothBackendsTests {
    struct Card: Codable, Model, Equatable, Sendable { var id: Int64?; var title: String }
    struct Tag: Codable, Model, Equatable, Sendable { var id: String; var label: String }
    struct Board: Codable, Model, Equatable, Sendable { var id: Int64?; var name: String; var tags: [Tag] }
    struct Note: Codable, SearchableModel, Equatable, Sendable {
        static var searchable: [SearchField<Self>] { [.field(\.text)] }
        var id: Int64?
        var text: String
    }

    /// Whether the table exists, from the engine's catalog.
    static func tableExists(_ name: String, in db: any ObservableModelStore) async throws -> Bool {
        if let sqlite = db as? SQLite.Database {
            return try await !sqlite.read("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?", arguments: [.text(name)]).isEmpty
        }
        #if Postgres
        if let postgres = db as? Postgres.Database {
            return try await postgres.textRows("SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = $1", [name]).count == 1
        }
        #endif
        return false
    }

    /// Runs SQL of the test's own (the same text on both engines).
    static func execute(_ sql: String, on db: any ObservableModelStore) async throws {
        if let sqlite = db as? SQLite.Database { _ = try await sqlite.write(SQL(stringLiteral: sql)) }
        #if Postgres
        if let postgres = db as? Postgres.Database { try await postgres.execute(sql) }
        #endif
    }

    @Test("reads, counts, deletes and key-value reads create no table", arguments: await Backend.available)
    func readsChangeNoSchema(_ backend: Backend) async throws {
        let db = try await backend.open()
        #expect(try await db.get(Board.self).isEmpty)
        #expect(try await db.get(with: Filter(\Board.name, is: .equal(to: "x")).sort(by: \.name).limit(3)).isEmpty)
        #expect(try await db.get(Board.self, id: 1) == nil)
        #expect(try await db.count(Board.self) == 0)
        #expect(try await db.count(with: Filter(\Card.title, is: .equal(to: "x"))) == 0)
        #expect(try await db.delete(with: Filter(\Card.title, is: .equal(to: "x"))) == 0)
        #expect(try await db.delete(Card.self, id: 1) == false)
        #expect(try await db.value(Int.self, forKey: "missing") == nil)
        #expect(try await db.removeValue(forKey: "missing") == false)
        #expect(try await db.search(Note.self, for: "anything").isEmpty)
        for table in ["Board", "Tag", "Board.tags", "Card", "Note", "codablesqlite_values"] {
            #expect(try await !Self.tableExists(table, in: db), "\(backend): a read created \(table)")
        }
        // The first save creates them, and reads see it.
        let saved = try await db.save(Board(id: nil, name: "b", tags: [Tag(id: "t", label: "T")]))
        #expect(try await db.get(Board.self) == [saved])
        #expect(try await Self.tableExists("Board.tags", in: db))
    }

    @Test("an observation of a missing table creates nothing, then follows the table once a save creates it", arguments: await Backend.available)
    func observingAMissingTable(_ backend: Backend) async throws {
        let db = try await backend.open()
        var values = db.observe(Card.self).makeAsyncIterator()
        #expect(try await values.next() == [])
        var counts = db.observe(count: Filter<Card>()).makeAsyncIterator()
        #expect(try await counts.next() == 0)
        let changes = try await db.changes(to: Card.self)
        #expect(try await !Self.tableExists("Card", in: db))
        let first = try await db.save(Card(id: nil, title: "first"))
        let firstID = first.id
        #expect(try await values.next() == [first])
        #expect(try await counts.next() == 1)
        var batches = changes.makeAsyncIterator()
        // The table's creation may come as a batch that names no ids (on PostgreSQL, which installs
        // the change triggers once it hears of the table: rows written before are in it); every
        // commit after that batch is named.
        let batch = try #require(try await batches.next())
        #expect(batch.inserted == [firstID] || !batch.isComplete, "\(batch)")
        let second = try await db.save(Card(id: nil, title: "second"))
        let secondID = second.id
        while let next = try await batches.next() {
            if next.isComplete, next.inserted.contains(secondID) { break }
            #expect(!next.isComplete || next.inserted.contains(firstID), "\(next)")
        }
        #expect(try await values.next() == [first, second])
    }

    /// The version of `Shelf` before `books` and `owner` became relationships: both were JSON.
    struct ShelfV1: Codable, Model, Sendable {
        struct BookValue: Codable, Sendable { var id: String; var title: String }
        static var tableName: String { "Shelf" }
        var id: Int64?
        var books: [BookValue]
        var owner: BookValue?
    }
    struct Book: Codable, Model, Equatable, Sendable { var id: String; var title: String }
    struct ShelfToMany: Codable, Model, Sendable {
        static var tableName: String { "Shelf" }
        var id: Int64?
        var books: [Book]
    }
    struct ShelfToOne: Codable, Model, Sendable {
        static var tableName: String { "Shelf" }
        var id: Int64?
        var owner: Book?
    }

    @Test("a column that holds a relationship as JSON is refused alike on reads and saves, nothing lost", arguments: await Backend.available)
    func oldJSONColumnUnderARelationship(_ backend: Backend) async throws {
        let db = try await backend.open()
        try await db.save(ShelfV1(id: nil, books: [.init(id: "b1", title: "Dune")], owner: .init(id: "o", title: "Ann")))
        var messages: [String] = []
        for attempt in 0..<4 {
            do {
                switch attempt {
                case 0: _ = try await db.get(ShelfToMany.self)
                case 1: try await db.save(ShelfToMany(id: nil, books: [Book(id: "b2", title: "Emma")]))
                case 2: _ = try await db.count(ShelfToOne.self)
                default: try await db.save(ShelfToOne(id: nil, owner: Book(id: "b3", title: "Ulysses")))
                }
                Issue.record("\(backend): attempt \(attempt) was not refused")
            } catch let error as ModelError {
                #expect(error.code == .schemaMismatch, "\(error)")
                #expect(error.message.contains("holds it as JSON"), "\(error)")
                #expect(error.message.contains("DROP COLUMN"), "\(error)")
                messages.append(error.message)
            }
        }
        #expect(messages.count == 4)
        #expect(messages[0].contains("`books`") && messages[2].contains("`owner`"))
        // Nothing was changed or lost: the old version still reads its row.
        let rows = try await db.get(ShelfV1.self)
        #expect(rows.count == 1)
        #expect(rows.first?.books.first?.title == "Dune")
    }

    struct Stored: Codable, Equatable, Sendable {
        var when: Date
        var amounts: [Double]
        var names: [String: String]
        var note: String?
    }

    @Test("the key-value store keeps every value as its JSON, the same form on both engines", arguments: await Backend.available)
    func keyValueForm(_ backend: Backend) async throws {
        let db = try await backend.open()
        let value = Stored(when: Date(timeIntervalSince1970: 1_700_000_000.25), amounts: [0.1, -2.5e300, 3], names: ["a": "\"quoted\""], note: nil)
        try await db.store(value, forKey: "struct")
        try await db.store(0.1 + 0.2, forKey: "double")
        try await db.store("123", forKey: "digits")
        try await db.store("\"quoted\"", forKey: "quoted")
        try await db.store(Int64.max, forKey: "big")
        try await db.store(nil as Int?, forKey: "nothing")
        #expect(try await db.value(Stored.self, forKey: "struct") == value)
        #expect(try await db.value(Double.self, forKey: "double") == 0.1 + 0.2)
        #expect(try await db.value(String.self, forKey: "digits") == "123")
        #expect(try await db.value(String.self, forKey: "quoted") == "\"quoted\"")
        #expect(try await db.value(Int64.self, forKey: "big") == Int64.max)
        #expect(try await db.value(Int?.self, forKey: "nothing") == .some(nil))
        await #expect(throws: DecodingError.self) { _ = try await db.value(Int.self, forKey: "nothing") }
        await #expect(throws: DecodingError.self) { _ = try await db.value(Int.self, forKey: "digits") }
        // The stored form: JSON text, which a plain JSON decoder reads as the same values.
        let raw: [String: String]
        if let sqlite = db as? SQLite.Database {
            raw = Dictionary(uniqueKeysWithValues: try await sqlite.read("SELECT key, value FROM codablesqlite_values").map {
                ($0["key"]?.stringValue ?? "", $0["value"]?.stringValue ?? "")
            })
        } else {
            #if Postgres
            let postgres = try #require(db as? Postgres.Database)
            raw = Dictionary(uniqueKeysWithValues: try await postgres.textRows("SELECT key, value::text FROM codablesqlite_values", []).map {
                ($0[0] ?? "", $0[1] ?? "")
            })
            #else
            raw = [:]
            #endif
        }
        #expect(try JSONDecoder().decode(String.self, from: Data(try #require(raw["digits"]).utf8)) == "123")
        #expect(try JSONDecoder().decode(Double.self, from: Data(try #require(raw["double"]).utf8)) == 0.1 + 0.2)
        #expect(try JSONDecoder().decode(Int?.self, from: Data(try #require(raw["nothing"]).utf8)) == nil)
        let object = try JSONSerialization.jsonObject(with: Data(try #require(raw["struct"]).utf8)) as? [String: Any]
        #expect((object?["names"] as? [String: String]) == ["a": "\"quoted\""])
        // Replaced, then removed.
        try await db.store("new", forKey: "digits")
        #expect(try await db.value(String.self, forKey: "digits") == "new")
        #expect(try await db.removeValue(forKey: "digits"))
        #expect(try await db.value(String.self, forKey: "digits") == nil)
    }

    @Test("an update that changes an id is the old id's delete and the new id's insert", arguments: await Backend.available)
    func idChangingUpdate(_ backend: Backend) async throws {
        let db = try await backend.open()
        try await db.save([Tag(id: "a", label: "A"), Tag(id: "b", label: "B")])
        let changes = try await db.changes(to: Tag.self)
        try await Self.execute(#"UPDATE "Tag" SET id = 'z' WHERE id = 'a'"#, on: db)
        try await Self.execute(#"UPDATE "Tag" SET label = 'bee' WHERE id = 'b'"#, on: db)
        var batches = changes.makeAsyncIterator()
        let renamed = try #require(try await batches.next())
        #expect(renamed == ChangeBatch(inserted: ["z"], updated: [], deleted: ["a"], isComplete: true))
        let edited = try #require(try await batches.next())
        #expect(edited == ChangeBatch(inserted: [], updated: ["b"], deleted: [], isComplete: true))
        #expect(Set(try await db.get(Tag.self).map(\.id)) == ["b", "z"])
    }

    struct Boom: Error {}

    @Test("inside inTransaction, calls on the outer handle join the transaction; a nested one is a savepoint", arguments: await Backend.available)
    func transactionBodyJoins(_ backend: Backend) async throws {
        let db = try await backend.open()
        try await db.save(Card(id: nil, title: "before"))
        // Rolled back together: the outer handle's save and the body's.
        await #expect(throws: Boom.self) {
            try await db.inTransaction { tx in
                try await db.save(Card(id: nil, title: "outer handle"))
                try await tx.save(Card(id: nil, title: "body"))
                #expect(try await db.count(Card.self) == 3)
                #expect(try await tx.count(Card.self) == 3)
                throw Boom()
            }
        }
        #expect(try await db.get(Card.self).map(\.title) == ["before"])
        // Committed together; the nested transaction through the outer handle rolls back alone.
        try await db.inTransaction { tx in
            try await db.save(Card(id: nil, title: "kept"))
            await #expect(throws: Boom.self) {
                try await db.inTransaction { _ in
                    try await db.save(Card(id: nil, title: "savepoint"))
                    throw Boom()
                }
            }
            // Child tasks of the body join it too.
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await db.save(Card(id: nil, title: "child")) }
                try await group.waitForAll()
            }
            #expect(try await tx.count(Card.self) == 3)
        }
        #expect(Set(try await db.get(Card.self).map(\.title)) == ["before", "kept", "child"])
        // After the body, the outer handle is on its own again.
        try await db.save(Card(id: nil, title: "after"))
        #expect(try await db.count(Card.self) == 4)
    }
}

#if Postgres
extension DecisionsOnBothBackendsTests {
    @Test("a role that may only read can read, models and keys never saved included (reads need no CREATE)", .needsPostgres)
    func aReadOnlyRoleReads() async throws {
        let url = try await TestServer.shared.freshDatabaseURL()
        let owner = try await Postgres.Database(url: url)
        let saved = try await owner.save(Card(id: nil, title: "visible"))
        let role = "reader_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
        try await owner.execute("CREATE ROLE \(role) LOGIN PASSWORD 'pw'")
        try await owner.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        try await owner.execute(#"GRANT SELECT ON "Card" TO \#(role)"#)
        let reader = try await Postgres.Database(url: url.replacingOccurrences(of: "postgres:secret@", with: "\(role):pw@"))
        #expect(try await reader.get(Card.self) == [saved])
        #expect(try await reader.count(with: Filter(\Card.title, is: .equal(to: "visible"))) == 1)
        #expect(try await reader.get(Board.self).isEmpty)
        #expect(try await reader.count(Tag.self) == 0)
        #expect(try await reader.value(Int.self, forKey: "limit") == nil)
        // A write is the server's to refuse (no privilege), and changes nothing.
        await #expect(throws: Postgres.Error.self) { try await reader.save(Card(id: nil, title: "refused")) }
        #expect(try await owner.get(Card.self) == [saved])
        await reader.close()
        try await owner.execute("DROP OWNED BY \(role)")
        try await owner.execute("DROP ROLE \(role)")
        await owner.close()
    }
}
#endif
