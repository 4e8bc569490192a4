import Foundation
import Testing
@testable import CodableSQLite

/// Tables created by plain SQL, in shapes the library did not design.
@Suite("Coding: existing databases")
struct ExistingDatabaseTests {
    let db: SQLite.Database
    let decoder: SQLite.Decoder

    init() throws {
        db = try TestDatabases.file("existing")
        try db.execute(raw: """
            CREATE TABLE "group" ("order" INTEGER, "select", name, payload, ratio REAL, picture BLOB, created);
            INSERT INTO "group" VALUES (1, 'x', 'Admins', json_object('level', 3, 'tags', json_array('a', 'b')), 9e999, NULL, '2024-02-29 12:00:00');
            INSERT INTO "group" VALUES (2, NULL, 'Users', '{"level": 1, "tags": []}', -9e999, x'00FF', 1709208000);
            CREATE TABLE city (id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE person (id INTEGER PRIMARY KEY, name TEXT, city INTEGER REFERENCES city(id));
            INSERT INTO city VALUES (1, 'Paris'), (2, 'Oslo');
            INSERT INTO person VALUES (1, 'Ada', 2), (2, 'Bob', 1);
            """)
        decoder = SQLite.Decoder(db)
    }

    #if Macros
    @RowCodable
    #endif
    struct Payload: Codable, Equatable { var level: Int; var tags: [String] }
    #if Macros
    @RowCodable
    #endif
    struct Group: Codable, Equatable {
        var order: Int
        var select: String?
        var name: String
        var payload: Payload
        var ratio: Double
        var picture: Data?
        var created: Date
    }

    @Test func keywordColumnsUntypedColumnsJSONInfinityAndNullBlobs() throws {
        let groups = try decoder.decode([Group].self, using: #"SELECT * FROM "group" ORDER BY "order""#)
        #expect(groups.count == 2)
        #expect(groups[0].select == "x")
        #expect(groups[1].select == nil)
        #expect(groups[0].payload == Payload(level: 3, tags: ["a", "b"]))
        #expect(groups[1].payload == Payload(level: 1, tags: []))
        #expect(groups[0].ratio == .infinity)
        #expect(groups[1].ratio == -.infinity)
        #expect(groups[0].picture == nil)
        #expect(groups[1].picture == Data([0x00, 0xFF]))
        #expect(groups[0].created == Date(timeIntervalSince1970: 1_709_208_000))
        #expect(groups[1].created == Date(timeIntervalSince1970: 1_709_208_000))
    }

    @Test func joinsWithAliases() throws {
        struct Resident: Decodable, Equatable { var personName: String; var cityName: String }
        let residents = try decoder.decode([Resident].self, using: """
            SELECT p.name AS personName, c.name AS cityName FROM person AS p JOIN city AS c ON c.id = p.city ORDER BY p.id
            """)
        #expect(residents == [Resident(personName: "Ada", cityName: "Oslo"), Resident(personName: "Bob", cityName: "Paris")])
    }

    @Test func duplicateColumnNamesInAJoinTakeTheLeftmost() throws {
        struct Named: Decodable { var name: String }
        let names = try decoder.decode([Named].self, using: "SELECT p.name, c.name FROM person AS p JOIN city AS c ON c.id = p.city ORDER BY p.id")
        #expect(names.map(\.name) == ["Ada", "Bob"])
    }

    @Test func singleColumnScalarsAndOptionals() throws {
        #expect(try decoder.decode(Int.self, using: "SELECT count(*) FROM person") == 2)
        #expect(try decoder.decode(String.self, using: "SELECT name FROM person WHERE id = 1") == "Ada")
        #expect(try decoder.decode(Date?.self, using: #"SELECT max(created) FROM "group" WHERE "order" = 99"#) == .some(nil))
        #expect(try decoder.decode([Int].self, using: "SELECT id FROM person ORDER BY id") == [1, 2])
        #expect(try decoder.decode([String].self, using: "SELECT name FROM city ORDER BY name") == ["Oslo", "Paris"])
    }

    @Test func valueNotFoundForNullAggregateSuggestsOptional() throws {
        let error = #expect(throws: DecodingError.self) { try decoder.decode(Date.self, using: "SELECT NULL") }
        guard case .valueNotFound? = error else { Issue.record("expected valueNotFound"); return }
    }
}
