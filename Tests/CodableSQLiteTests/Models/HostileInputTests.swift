import Foundation
import Testing
@testable import CodableSQLite

/// A model whose table name would break naive SQL.
#if Macros
@RowCodable
#endif
private struct Weird: Codable, Model, Equatable, Sendable {
    static var tableName: String { "we\"ird'; DROP TABLE x; --" }
    var id: String
    var note: String
}

@Suite("Models: hostile strings are data, never SQL")
struct HostileInputTests {
    static let hostile = [
        "'; DROP TABLE \"Person\"; --", "\" OR 1=1 --", "Robert'); DELETE FROM codablesqlite_values; --",
        "*", "?", "[a-z]", "%", "_", "\\", "\u{0}nul", "line\nbreak", "é🎉", "",
    ]

    @Test func filterValuesAreBound() throws {
        let db = try ModelFixtures.file()
        for name in Self.hostile { try db.save(Person(name, age: 20)) }
        for name in Self.hostile {
            #expect(try db.get(with: Filter(\Person.name, is: .equal(to: name))).map(\.name) == [name])
            #expect(try db.count(with: Filter(\Person.name, is: .hasPrefix(name))) >= 1)
            #expect(try db.get(with: Filter(\Person.name, is: .contains(name))).contains { $0.name == name })
        }
        #expect(try db.count(Person.self) == Self.hostile.count)
    }

    @Test func keyValueKeysAreBound() throws {
        let db = try ModelFixtures.file()
        try db.store("keep", forKey: "safe")
        for (index, key) in Self.hostile.enumerated() { try db.store(index, forKey: key) }
        for (index, key) in Self.hostile.enumerated() { #expect(try db.value(Int.self, forKey: key) == index) }
        #expect(try db.value(String.self, forKey: "safe") == "keep")
    }

    @Test func hostileTableNamesAreQuoted() async throws {
        let db = try ModelFixtures.file()
        try await db.execute(raw: "CREATE TABLE x (n INTEGER)")
        let value = Weird(id: "'a'", note: "\"b\"")
        try await db.save(value)
        #expect(try await db.get(Weird.self) == [value])
        #expect(try await db.get(with: Filter(\Weird.note, is: .equal(to: "\"b\""))) == [value])
        #expect(try db.tables().contains("x"))   // nothing was dropped
        #expect(try await db.delete(value))
        let batches = db.changes(in: Weird.tableName)
        try await db.save(value)
        var iterator = batches.makeAsyncIterator()
        #expect(try await iterator.next()?.inserted.count == 1)
    }

    @Test func pathsWithQuotesAndSpaces() throws {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("it's a \"folder\" with spaces \(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("my 'data'.sqlite").path
        let db = try SQLite.Database(path: path)
        try db.store(1, forKey: "k")
        #expect(try SQLite.Database(path: path).value(Int.self, forKey: "k") == 1)
        let copy = folder.appendingPathComponent("copy of 'data'.sqlite").path
        try db.backup(to: copy)
        try db.vacuum(into: copy + " vacuumed")
        #expect(try SQLite.Database(path: copy).value(Int.self, forKey: "k") == 1)
        #expect(try SQLite.Database(path: copy + " vacuumed").value(Int.self, forKey: "k") == 1)
    }
}
