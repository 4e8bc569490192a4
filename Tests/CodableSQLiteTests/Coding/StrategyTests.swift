import Foundation
import Testing
@testable import CodableSQLite

#if Macros
@RowCodable
#endif
struct Reminder: Codable, Equatable {
    var reminderID: Int
    var dueDate: Date
    var imageURL: URL?
    var details: Details
}

#if Macros
@RowCodable
#endif
struct Details: Codable, Equatable {
    var firstLine: String
    var createdAt: Date
}

@Suite("Coding: key strategies and userInfo")
struct StrategyTests {
    let value = Reminder(
        reminderID: 1, dueDate: Date(timeIntervalSince1970: 100), imageURL: URL(string: "https://a.b/c.png"),
        details: Details(firstLine: "x", createdAt: Date(timeIntervalSince1970: 50)))

    @Test func snakeCaseBothWays() throws {
        let db = try TestDatabases.memory()
        try db.execute(raw: "CREATE TABLE reminders (reminder_id, due_date, image_url, details)")
        let encoder = SQLite.Encoder(db)
        encoder.keyEncodingStrategy = .convertToSnakeCase
        try encoder.encode(value, using: "INSERT INTO reminders VALUES (:reminder_id, :due_date, :image_url, :details)")
        #expect(try db.read("SELECT json_extract(details, '$.first_line') AS line FROM reminders") == [["line": .text("x")]])
        let decoder = SQLite.Decoder(db)
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try decoder.decode(Reminder.self, using: "SELECT * FROM reminders") == value)
    }

    @Test func snakeCaseConversionRules() {
        #expect(KeyConversion.toSnakeCase("dueDate") == "due_date")
        #expect(KeyConversion.toSnakeCase("imageURL") == "image_url")
        #expect(KeyConversion.toSnakeCase("myURLProperty") == "my_url_property")
        #expect(KeyConversion.toSnakeCase("item2Name") == "item2_name")
        #expect(KeyConversion.toSnakeCase("already_snake") == "already_snake")
        #expect(KeyConversion.fromSnakeCase("due_date") == "dueDate")
        #expect(KeyConversion.fromSnakeCase("_leading_and_trailing_") == "_leadingAndTrailing_")
        #expect(KeyConversion.fromSnakeCase("plain") == "plain")
    }

    @Test func customKeyStrategies() throws {
        struct Upper: Codable, Equatable { var name: String }
        let db = try TestDatabases.memory()
        try db.execute(raw: "CREATE TABLE u (NAME)")
        let encoder = SQLite.Encoder(db)
        encoder.keyEncodingStrategy = .custom { path in AnyCodingKey(stringValue: path.last!.stringValue.uppercased()) }
        try encoder.encode(Upper(name: "x"), using: "INSERT INTO u VALUES (:NAME)")
        let decoder = SQLite.Decoder(db)
        decoder.keyDecodingStrategy = .custom { path in AnyCodingKey(stringValue: path.last!.stringValue.lowercased()) }
        #expect(try decoder.decode(Upper.self, using: "SELECT NAME FROM u") == Upper(name: "x"))
    }

    @Test func userInfoReachesCodableImplementations() throws {
        let key = CodingUserInfoKey(rawValue: "prefix")!
        struct Tagged: Codable {
            var name: String
            init(name: String) { self.name = name }
            init(from decoder: any Swift.Decoder) throws {
                let prefix = decoder.userInfo[CodingUserInfoKey(rawValue: "prefix")!] as? String ?? "?"
                name = prefix + (try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .name))
            }
            func encode(to encoder: any Swift.Encoder) throws {
                let prefix = encoder.userInfo[CodingUserInfoKey(rawValue: "prefix")!] as? String ?? "?"
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(prefix + name, forKey: .name)
            }
            enum CodingKeys: CodingKey { case name }
        }
        let db = try TestDatabases.memory()
        try db.execute(raw: "CREATE TABLE t (name)")
        let encoder = SQLite.Encoder(db)
        encoder.userInfo[key] = "e:"
        try encoder.encode(Tagged(name: "x"), using: "INSERT INTO t VALUES (:name)")
        let decoder = SQLite.Decoder(db)
        decoder.userInfo[key] = "d:"
        #expect(try decoder.decode(Tagged.self, using: "SELECT name FROM t")?.name == "d:e:x")
    }

    @Test func asyncEncodeAndDecode() async throws {
        let db = try TestDatabases.file()
        try await db.execute(raw: "CREATE TABLE reminders (reminderID, dueDate, imageURL, details)")
        let encoder = SQLite.Encoder(db)
        try await encoder.encode(value, using: "INSERT INTO reminders VALUES (:reminderID, :dueDate, :imageURL, :details)")
        try await encoder.encode([Reminder](), using: "INSERT INTO reminders VALUES (:reminderID, :dueDate, :imageURL, :details)")
        let decoder = SQLite.Decoder(db)
        #expect(try await decoder.decode(Reminder.self, using: "SELECT * FROM reminders") == value)
        #expect(try await decoder.decode([Reminder].self, using: "SELECT * FROM reminders") == [value])
        #expect(try await decoder.decode(Int.self, using: "SELECT count(*) FROM reminders WHERE reminderID = ?", arguments: [.integer(1)]) == 1)
    }

    @Test func decodingInsertReturningRunsOnTheWriter() throws {
        let db = try TestDatabases.file()
        try db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
        struct Created: Decodable, Equatable { var id: Int; var name: String }
        let created = try SQLite.Decoder(db).decode(Created.self, using: "INSERT INTO t (name) VALUES (:name) RETURNING *", arguments: ["name": "n"])
        #expect(created == Created(id: 1, name: "n"))
        #expect(try db.read("SELECT count(*) AS n FROM t")[0]["n"] == .integer(1))
    }
}
