#if Macros
import Foundation
import Testing
@testable import CodableSQLite

// The generated coder (@RowCodable, the Macros trait) against plain Codable: every value, every
// stored byte and every error must be the same. (The other Codable and model suites run over
// generated types too when the trait is on: their types carry @RowCodable under `#if Macros`.)

private enum Mood: String, Codable { case calm, busy }
private struct Place: Codable, Equatable { var city: String; var zip: Int }

/// Both twins have every property kind the storage contract knows.
private struct PlainRow: Codable, Equatable {
    var id: Int64
    var title: String
    var note: String?
    var due: Date?
    var done: Bool
    var priority: Int
    var score: Double
    var ratio: Float
    var small: Int8
    var big: UInt64
    var uuid: UUID
    var tags: [String]
    var blob: Data?
    var mood: Mood
    var place: Place?
    var created: Date
}

@RowCodable
private struct GeneratedRow: Codable, Equatable {
    var id: Int64
    var title: String
    var note: String?
    var due: Date?
    var done: Bool
    var priority: Int
    var score: Double
    var ratio: Float
    var small: Int8
    var big: UInt64
    var uuid: UUID
    var tags: [String]
    var blob: Data?
    var mood: Mood
    var place: Place?
    var created: Date
}

/// Renamed keys, a property Codable skips, one without a written type, an optional spelled out.
@RowCodable
private struct Renamed: Codable, Equatable {
    var identifier: Int
    var label: String
    var cached = 0
    let version = 3
    var count = 7
    var extra: Optional<String>
    var computed: String { label.uppercased() }

    enum CodingKeys: String, CodingKey {
        case identifier = "id", label = "name", count, extra
    }
}

@RowDecodable
private struct ReadOnly: Decodable, Equatable { var id: Int; var name: String }

@RowEncodable
private struct WriteOnly: Encodable { var id: Int; var name: String? }

private struct RenamedPlain: Codable, Equatable {
    var identifier: Int
    var label: String
    var count = 7
    var extra: String?
    enum CodingKeys: String, CodingKey { case identifier = "id", label = "name", count, extra }
}

@RowCodable
private struct SnakeRow: Codable, Equatable { var userID: Int; var firstName: String; var lastSeenAt: Date? }

@RowCodable
struct GeneratedNote: Codable, Model, Equatable, Sendable {
    var id: Int64?
    var text: String
    var stars: Int
    var tags: [String]
}

@Suite("Coding: generated row coding (@RowCodable) is plain Codable's")
struct GeneratedCodingTests {
    let db: SQLite.Database
    let encoder: SQLite.Encoder
    let decoder: SQLite.Decoder

    init() throws {
        db = try TestDatabases.memory()
        encoder = SQLite.Encoder(db)
        decoder = SQLite.Decoder(db)
        try db.execute(raw: """
            CREATE TABLE rows (id INTEGER PRIMARY KEY, title, note, due, done, priority, score, ratio, small, big, uuid, tags, blob, mood, place, created)
            """)
    }

    static let insert = """
        INSERT INTO rows VALUES (:id, :title, :note, :due, :done, :priority, :score, :ratio, :small, :big, :uuid, :tags, :blob, :mood, :place, :created)
        """

    fileprivate static func plain(_ id: Int64) -> PlainRow {
        PlainRow(
            id: id, title: "row \(id)", note: id.isMultiple(of: 2) ? nil : "note", due: id.isMultiple(of: 3) ? nil : Date(timeIntervalSince1970: 1_700_000_000.25),
            done: id.isMultiple(of: 2), priority: Int(id) * -3, score: Double(id) / 7, ratio: 0.5, small: -8, big: UInt64(Int64.max),
            uuid: UUID(), tags: id.isMultiple(of: 2) ? [] : ["a", "b"], blob: id.isMultiple(of: 2) ? Data([0, 1, 2]) : nil,
            mood: id.isMultiple(of: 2) ? .calm : .busy, place: id.isMultiple(of: 2) ? nil : Place(city: "Oslo", zip: 150),
            created: Date(timeIntervalSince1970: 1_600_000_000.5))
    }

    fileprivate static func generated(_ row: PlainRow) -> GeneratedRow {
        GeneratedRow(
            id: row.id, title: row.title, note: row.note, due: row.due, done: row.done, priority: row.priority, score: row.score,
            ratio: row.ratio, small: row.small, big: row.big, uuid: row.uuid, tags: row.tags, blob: row.blob, mood: row.mood,
            place: row.place, created: row.created)
    }

    /// What `body` throws, as text (plain and generated errors must read the same).
    func failure(_ body: () throws -> Void) -> String {
        do {
            try body()
            return "no error"
        } catch {
            return "\(error)"
        }
    }

    @Test func theMacroGivesTheConformances() {
        func decodes<T>(_ type: T.Type) -> Bool { T.self is any RowDecodable.Type }
        func encodes<T>(_ type: T.Type) -> Bool { T.self is any RowEncodable.Type }
        #expect(decodes(GeneratedRow.self) && encodes(GeneratedRow.self))
        #expect(decodes(ReadOnly.self) && !encodes(ReadOnly.self))
        #expect(!decodes(WriteOnly.self) && encodes(WriteOnly.self))
        #expect(!decodes(PlainRow.self) && !encodes(PlainRow.self))
        #expect(Renamed.rowCodingKeys.map(\.stringValue) == ["id", "name", "count", "extra"])
    }

    @Test func valuesAndStoredBytesAreThoseOfPlainCodable() throws {
        let plain = (1...6).map(Self.plain)
        try encoder.encode(plain, using: Self.insert)
        let plainStored = try db.read("SELECT *, typeof(due), typeof(big), typeof(blob) FROM rows ORDER BY id")
        try db.execute(raw: "DELETE FROM rows")
        try encoder.encode(plain.map(Self.generated), using: Self.insert)
        let generatedStored = try db.read("SELECT *, typeof(due), typeof(big), typeof(blob) FROM rows ORDER BY id")
        #expect(generatedStored == plainStored)

        let all = try decoder.decode([GeneratedRow].self, using: "SELECT * FROM rows ORDER BY id")
        #expect(all == plain.map(Self.generated))
        let one = try decoder.decode(GeneratedRow.self, using: "SELECT * FROM rows WHERE id = ?", arguments: [.integer(3)])
        #expect(one == Self.generated(plain[2]))
        #expect(try decoder.decode(GeneratedRow.self, using: "SELECT * FROM rows WHERE id = 99") == nil)
        // The same statement, another type: each type its own columns.
        let partial = try decoder.decode([ReadOnly].self, using: "SELECT id, title AS name FROM rows ORDER BY id")
        #expect(partial.map(\.name) == plain.map(\.title))
    }

    @Test func decodingErrorsAreThoseOfPlainCodable() throws {
        try encoder.encode(Self.plain(1), using: Self.insert)
        let selects = [
            "SELECT id, note FROM rows",                                        // missing non-optional columns: keyNotFound
            "SELECT *, NULL AS title FROM (SELECT id, note, due, done, priority, score, ratio, small, big, uuid, tags, blob, mood, place, created FROM rows)",
            "SELECT id, 'x' AS title, note, due, 'yes' AS done, priority, score, ratio, small, big, uuid, tags, blob, mood, place, created FROM rows",
            "SELECT id, title, note, due, done, priority, score, ratio, 300 AS small, big, uuid, tags, blob, mood, place, created FROM rows",
            "SELECT id, title, note, 'not a date' AS due, done, priority, score, ratio, small, big, uuid, tags, blob, mood, place, created FROM rows",
            "SELECT id, title, note, due, done, priority, score, ratio, small, big, 'nope' AS uuid, tags, blob, mood, place, created FROM rows",
            "SELECT id, title, note, due, done, priority, score, ratio, small, big, uuid, '[1' AS tags, blob, mood, place, created FROM rows",
            "SELECT id, title, note, due, done, priority, score, ratio, small, big, uuid, tags, blob, 'angry' AS mood, place, created FROM rows",
            "SELECT id, title, note, due, done, priority, score, ratio, small, big, uuid, tags, blob, mood, '{\"city\":1}' AS place, created FROM rows",
            "SELECT id, title, note, due, done, priority, 'high' AS score, ratio, small, big, uuid, tags, blob, mood, place, created FROM rows",
            "SELECT id, title, note, due, done, priority, score, ratio, small, -1 AS big, uuid, tags, blob, mood, place, created FROM rows",
        ]
        for sql in selects {
            let plainArray = failure { _ = try decoder.decode([PlainRow].self, using: String(sql)) }
            let generatedArray = failure { _ = try decoder.decode([GeneratedRow].self, using: String(sql)) }
            #expect(plainArray != "no error", "\(sql)")
            #expect(generatedArray == plainArray, "\(sql)")
            let plainOne = failure { _ = try decoder.decode(PlainRow.self, using: String(sql)) }
            #expect(failure { _ = try decoder.decode(GeneratedRow.self, using: String(sql)) } == plainOne, "\(sql)")
        }
        // The database is still usable, and the statement decodes again once the data is right.
        #expect(try decoder.decode([GeneratedRow].self, using: "SELECT * FROM rows").count == 1)
    }

    @Test func errorsCarryTheRowIndexAndTheKeyAsPlainCodableDoes() throws {
        try encoder.encode([Self.plain(1), Self.plain(2)], using: Self.insert)
        try db.execute(raw: "UPDATE rows SET priority = 'high' WHERE id = 2")
        do {
            _ = try decoder.decode([GeneratedRow].self, using: "SELECT * FROM rows ORDER BY id")
            Issue.record("decoded a text priority")
        } catch let DecodingError.typeMismatch(type, context) {
            #expect(ObjectIdentifier(type) == ObjectIdentifier(Int.self))
            #expect(context.codingPath.map(\.stringValue) == ["Index 1", "priority"])
            #expect(context.codingPath.first?.intValue == 1)
        }
    }

    @Test func encodingErrorsAreThoseOfPlainCodable() throws {
        var nan = Self.plain(1)
        nan.score = .nan
        #expect(failure { try encoder.encode(Self.generated(nan), using: Self.insert) } == failure { try encoder.encode(nan, using: Self.insert) })
        var huge = Self.plain(2)
        huge.big = .max
        #expect(failure { try encoder.encode(Self.generated(huge), using: Self.insert) } == failure { try encoder.encode(huge, using: Self.insert) })
        let missing = "INSERT INTO rows (id, title) VALUES (:id, :title)"
        let plainMissing = failure { try encoder.encode([Self.plain(3)], using: String(missing)) }
        #expect(plainMissing.contains("no parameter :note"))
        #expect(failure { try encoder.encode([Self.generated(Self.plain(3))], using: String(missing)) } == plainMissing)
        // A nil optional with no parameter is skipped, as encodeIfPresent skips it.
        #expect(failure { try encoder.encode(WriteOnly(id: 1, name: nil), using: "INSERT INTO rows (id, title) VALUES (:id, 'x')") } == "no error")
        #expect(failure { try encoder.encode(WriteOnly(id: 2, name: "n"), using: "INSERT INTO rows (id, title) VALUES (:id, 'x')") }
            .contains("no parameter :name"))
        encoder.ignoresUnusedProperties = true
        try encoder.encode(Self.generated(Self.plain(4)), using: String(missing))
        #expect(try db.read("SELECT title FROM rows WHERE id = 4") == [["title": .text("row 4")]])
        // Only what succeeded was written (WriteOnly's 1, and 4): nothing of the failed calls.
        #expect(try db.read("SELECT id FROM rows ORDER BY id") == [["id": .integer(1)], ["id": .integer(4)]])
    }

    @Test func codingKeysRenameAndSkipAsInPlainCodable() throws {
        try db.execute(raw: "CREATE TABLE renamed (id INTEGER, name TEXT, count INTEGER, extra TEXT)")
        let value = Renamed(identifier: 1, label: "one", cached: 5, count: 9, extra: nil)
        try encoder.encode(value, using: "INSERT INTO renamed VALUES (:id, :name, :count, :extra)")
        #expect(try db.read("SELECT * FROM renamed") == [["id": .integer(1), "name": .text("one"), "count": .integer(9), "extra": .null]])
        let back = try decoder.decode(Renamed.self, using: "SELECT * FROM renamed")
        #expect(back == Renamed(identifier: 1, label: "one", cached: 0, count: 9, extra: nil))
        #expect(back?.version == 3)
        #expect(try decoder.decode(RenamedPlain.self, using: "SELECT * FROM renamed") == RenamedPlain(identifier: 1, label: "one", count: 9, extra: nil))
        // `count` has a default but is coded: a missing column is keyNotFound, as in plain Codable.
        let sql: String = "SELECT id, name FROM renamed"
        #expect(failure { _ = try decoder.decode(Renamed.self, using: sql) } == failure { _ = try decoder.decode(RenamedPlain.self, using: sql) })
    }

    @Test func keyStrategiesApplyToGeneratedKeys() throws {
        try db.execute(raw: "CREATE TABLE people (user_id INTEGER, first_name TEXT, last_seen_at TEXT)")
        encoder.keyEncodingStrategy = .convertToSnakeCase
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let row = SnakeRow(userID: 7, firstName: "Ada", lastSeenAt: Date(timeIntervalSince1970: 0))
        try encoder.encode(row, using: "INSERT INTO people VALUES (:user_id, :first_name, :last_seen_at)")
        #expect(try decoder.decode([SnakeRow].self, using: "SELECT * FROM people") == [row])
    }

    @Test func modelsSaveAndReadGeneratedTypes() throws {
        var note = try db.save(GeneratedNote(id: nil, text: "first", stars: 3, tags: ["x"]))
        let id = try #require(note.id)
        note.stars = 5
        _ = try db.save(note)
        _ = try db.save([GeneratedNote(id: nil, text: "second", stars: 1, tags: []), GeneratedNote(id: nil, text: "third", stars: 4, tags: ["y", "z"])])
        #expect(try db.get(GeneratedNote.self, id: id) == note)
        #expect(try db.get(with: Filter(\GeneratedNote.stars, is: .greater(than: 2))).map(\.text).sorted() == ["first", "third"])
        #expect(try db.get(GeneratedNote.self).count == 3)
        #expect(try db.delete(note))
        #expect(try db.count(GeneratedNote.self) == 2)
    }
}
#endif
