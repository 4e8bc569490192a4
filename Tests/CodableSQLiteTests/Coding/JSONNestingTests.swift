import Foundation
import Testing
@testable import CodableSQLite

#if Macros
@RowCodable
#endif
struct PostalAddress: Codable, Equatable {
    var city: String
    var zip: Int
    var since: Date
}

#if Macros
@RowCodable
#endif
struct Profile: Codable, Equatable {
    var id: Int
    var address: PostalAddress
    var tags: [String]
    var scores: [String: Double]
    var flags: Set<Int>
    var history: [PostalAddress]
    var due: Date
    var maybe: PostalAddress?
}

@Suite("Coding: nested values as JSON")
struct JSONNestingTests {
    let db: SQLite.Database
    let encoder: SQLite.Encoder
    let decoder: SQLite.Decoder
    let profile: Profile

    init() throws {
        db = try TestDatabases.memory()
        try db.execute(raw: "CREATE TABLE profiles (id, address, tags, scores, flags, history, due, maybe)")
        encoder = SQLite.Encoder(db)
        decoder = SQLite.Decoder(db)
        let due = Date(timeIntervalSince1970: 1_700_000_000.75)
        profile = Profile(
            id: 1, address: PostalAddress(city: "Paris \"Centre\"", zip: 75001, since: due),
            tags: ["a", "b,c", "é\n🎉"], scores: ["x": 1.5, "y": -2], flags: [3, 1, 2],
            history: [PostalAddress(city: "Lyon", zip: 69001, since: Date(timeIntervalSince1970: 0))], due: due, maybe: nil)
        try encoder.encode(profile, using: "INSERT INTO profiles VALUES (:id, :address, :tags, :scores, :flags, :history, :due, :maybe)")
    }

    @Test func nestedValuesRoundTrip() throws {
        #expect(try decoder.decode(Profile.self, using: "SELECT * FROM profiles") == profile)
    }

    @Test func nestedValuesAreJSONTextQueryableWithJSONExtract() throws {
        let row = try db.read("""
            SELECT typeof(address) AS type, json_valid(address) AS valid, json_extract(address, '$.city') AS city,
                   json_extract(tags, '$[2]') AS third, json_extract(scores, '$.x') AS x, json_array_length(flags) AS flags,
                   json_extract(history, '$[0].zip') AS zip
            FROM profiles
            """)[0]
        #expect(row["type"] == .text("text"))
        #expect(row["valid"] == .integer(1))
        #expect(row["city"] == .text("Paris \"Centre\""))
        #expect(row["third"] == .text("é\n🎉"))
        #expect(row["x"] == .double(1.5))
        #expect(row["flags"] == .integer(3))
        #expect(row["zip"] == .integer(69001))
    }

    @Test func datesInsideJSONAreWrittenLikeDateColumns() throws {
        let rows = try db.read("SELECT json_extract(address, '$.since') = due AS same, json_extract(address, '$.since') AS inner, due FROM profiles")
        #expect(rows[0]["same"] == .integer(1))
        #expect(rows[0]["inner"] == .text("2023-11-14 22:13:20.75"))
    }

    @Test func singleColumnJSONDecodesIntoCollections() throws {
        #expect(try decoder.decode([String].self, using: "SELECT tags FROM profiles") == [#"["a","b,c","é\n🎉"]"#])
        #expect(try decoder.decode(Array<[String]>.self, using: "SELECT tags FROM profiles") == [["a", "b,c", "é\n🎉"]])
        #expect(try decoder.decode(Set<Int>.self, using: "SELECT flags FROM profiles") == [1, 2, 3])
        #expect(try decoder.decode([String: Double].self, using: "SELECT json_extract(scores, '$.x') AS x FROM profiles") == ["x": 1.5])
        #expect(try decoder.decode([PostalAddress].self, using: "SELECT json_extract(history, '$[0].city') AS city, 1 AS zip, '1970-01-01' AS since FROM profiles")
            == [PostalAddress(city: "Lyon", zip: 1, since: Date(timeIntervalSince1970: 0))])
    }

    @Test func jsonWrittenBySQLDecodes() throws {
        struct Point: Codable, Equatable { var x: Int; var y: Int }
        struct Shape: Codable, Equatable { var points: [Point]; var meta: [String: String] }
        let shape = try decoder.decode(Shape.self, using: """
            SELECT json_array(json_object('x', 1, 'y', 2), json_object('y', 4, 'x', 3)) AS points, '{"k": "v"}' AS meta
            """)
        #expect(shape == Shape(points: [Point(x: 1, y: 2), Point(x: 3, y: 4)], meta: ["k": "v"]))
    }

    @Test func malformedJSONIsDataCorrupted() throws {
        for text in ["[1, 2", "{\"a\": }", "not json", "[\"\\ud800\"]", "[1,]"] {
            let error = #expect(throws: DecodingError.self) {
                try decoder.decode(Array<[Int]>.self, using: "SELECT ? AS list", arguments: [.text(text)])
            }
            guard case .dataCorrupted(let context)? = error else { Issue.record("expected dataCorrupted for \(text)"); continue }
            #expect(context.codingPath.count == 1)  // [Index 0]
            #expect(context.debugDescription.contains("not valid JSON"))
        }
    }

    @Test func deeplyNestedJSONIsAnErrorNotACrash() throws {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: DecodingError.self) { try decoder.decode(Array<[Int]>.self, using: "SELECT ?", arguments: [.text(deep)]) }
    }

    @Test func nonFiniteNumbersInsideJSONAreEncodingErrors() throws {
        struct Box: Codable { var values: [Double] }
        try db.execute(raw: "CREATE TABLE boxes (\"values\")")
        #expect(throws: EncodingError.self) { try encoder.encode(Box(values: [1, .infinity]), using: "INSERT INTO boxes VALUES (:values)") }
        #expect(try db.read("SELECT count(*) AS n FROM boxes")[0]["n"] == .integer(0))
    }
}

/// A class hierarchy: both levels encode into the same row.
private class Animal: Codable {
    var name: String
    init(name: String) { self.name = name }
}

private final class Dog: Animal {
    var breed: String
    enum CodingKeys: CodingKey { case breed }

    init(name: String, breed: String) {
        self.breed = breed
        super.init(name: name)
    }

    required init(from decoder: any Swift.Decoder) throws {
        breed = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .breed)
        try super.init(from: decoder)
    }

    override func encode(to encoder: any Swift.Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(breed, forKey: .breed)
        try super.encode(to: encoder)
    }
}

private struct Coordinates: Codable, Equatable {
    var latitude: Double
    var longitude: Double
    var labels: [String]

    enum CodingKeys: CodingKey { case position, labels }
    enum PositionKeys: CodingKey { case latitude, longitude }

    init(latitude: Double, longitude: Double, labels: [String]) {
        self.latitude = latitude
        self.longitude = longitude
        self.labels = labels
    }

    init(from decoder: any Swift.Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let position = try container.nestedContainer(keyedBy: PositionKeys.self, forKey: .position)
        latitude = try position.decode(Double.self, forKey: .latitude)
        longitude = try position.decode(Double.self, forKey: .longitude)
        var labels = try container.nestedUnkeyedContainer(forKey: .labels)
        var decoded: [String] = []
        while !labels.isAtEnd { decoded.append(try labels.decode(String.self)) }
        self.labels = decoded
    }

    func encode(to encoder: any Swift.Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        var position = container.nestedContainer(keyedBy: PositionKeys.self, forKey: .position)
        try position.encode(latitude, forKey: .latitude)
        try position.encode(longitude, forKey: .longitude)
        var labels = container.nestedUnkeyedContainer(forKey: .labels)
        for label in self.labels { try labels.encode(label) }
    }
}

private struct Versioned: Codable, Equatable {
    var version: Int
    var payload: String

    enum CodingKeys: CodingKey { case version }

    init(version: Int, payload: String) {
        self.version = version
        self.payload = payload
    }

    init(from decoder: any Swift.Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decode(Int.self, forKey: .version)
        payload = try container.superDecoder().singleValueContainer().decode(String.self)
    }

    func encode(to encoder: any Swift.Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        var superContainer = container.superEncoder().singleValueContainer()
        try superContainer.encode(payload)
    }
}

/// A pair decoded positionally from a row of two columns, or bound to ?1 and ?2.
private struct Pair: Codable, Equatable {
    var first: Int
    var second: String

    init(first: Int, second: String) {
        self.first = first
        self.second = second
    }

    init(from decoder: any Swift.Decoder) throws {
        var container = try decoder.unkeyedContainer()
        first = try container.decode(Int.self)
        second = try container.decode(String.self)
    }

    func encode(to encoder: any Swift.Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(first)
        try container.encode(second)
    }
}

private struct Wrapper: Codable, Equatable {
    var value: String
    init(_ value: String) { self.value = value }
    init(from decoder: any Swift.Decoder) throws { value = try decoder.singleValueContainer().decode(String.self) }
    func encode(to encoder: any Swift.Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

@Suite("Coding: every kind of container")
struct ContainerTests {
    let db: SQLite.Database
    let encoder: SQLite.Encoder
    let decoder: SQLite.Decoder

    init() throws {
        db = try TestDatabases.memory()
        encoder = SQLite.Encoder(db)
        decoder = SQLite.Decoder(db)
    }

    @Test func nestedKeyedAndUnkeyedContainersBecomeJSON() throws {
        try db.execute(raw: "CREATE TABLE places (position, labels)")
        let place = Coordinates(latitude: 48.85, longitude: 2.35, labels: ["Paris", "FR"])
        try encoder.encode(place, using: "INSERT INTO places VALUES (:position, :labels)")
        #expect(try db.read("SELECT json_extract(position, '$.latitude') AS lat FROM places") == [["lat": .double(48.85)]])
        #expect(try decoder.decode(Coordinates.self, using: "SELECT * FROM places") == place)
    }

    @Test func superEncoderAndSuperDecoderUseTheSuperColumn() throws {
        try db.execute(raw: "CREATE TABLE versions (version, super)")
        let value = Versioned(version: 2, payload: "body")
        try encoder.encode(value, using: "INSERT INTO versions VALUES (:version, :super)")
        #expect(try db.read("SELECT super FROM versions") == [["super": .text("body")]])
        #expect(try decoder.decode(Versioned.self, using: "SELECT * FROM versions") == value)
    }

    @Test func unkeyedValuesBindPositionalParametersAndReadColumnsInOrder() throws {
        try db.execute(raw: "CREATE TABLE pairs (a, b)")
        try encoder.encode(Pair(first: 1, second: "one"), using: "INSERT INTO pairs VALUES (?, ?)")
        #expect(try decoder.decode(Pair.self, using: "SELECT a, b FROM pairs") == Pair(first: 1, second: "one"))
        #expect(try decoder.decode(Pair.self, using: "SELECT a, b, 3 AS extra FROM pairs") == Pair(first: 1, second: "one"))
    }

    @Test func unkeyedContainerAtItsEndIsValueNotFound() throws {
        struct Triple: Decodable {
            init(from decoder: any Swift.Decoder) throws {
                var container = try decoder.unkeyedContainer()
                for _ in 0..<3 { _ = try container.decode(Int.self) }
            }
        }
        let error = #expect(throws: DecodingError.self) { try decoder.decode([Triple].self, using: "SELECT 1, 2") }
        guard case .valueNotFound(_, let context)? = error else { Issue.record("expected valueNotFound"); return }
        #expect(context.codingPath.map(\.intValue) == [0, 2])
    }

    @Test func tooManyValuesForThePositionalParametersIsAnEncodingError() throws {
        try db.execute(raw: "CREATE TABLE pairs (a)")
        #expect(throws: EncodingError.self) { try encoder.encode(Pair(first: 1, second: "x"), using: "INSERT INTO pairs VALUES (?)") }
        #expect(try db.read("SELECT count(*) AS n FROM pairs")[0]["n"] == .integer(0))
    }

    @Test func singleValuesBindTheFirstParameterAndReadTheOnlyColumn() throws {
        try db.execute(raw: "CREATE TABLE words (word)")
        try encoder.encode(Wrapper("hello"), using: "INSERT INTO words VALUES (?)")
        try encoder.encode("plain", using: "INSERT INTO words VALUES (?)")
        try encoder.encode(Optional<String>.none, using: "INSERT INTO words VALUES (?)")
        #expect(try db.read("SELECT word FROM words ORDER BY rowid").map { $0["word"] } == [.text("hello"), .text("plain"), .null])
        #expect(try decoder.decode([Wrapper].self, using: "SELECT word FROM words WHERE word IS NOT NULL ORDER BY rowid") == [Wrapper("hello"), Wrapper("plain")])
        #expect(try decoder.decode([String?].self, using: "SELECT word FROM words ORDER BY rowid") == ["hello", "plain", nil])
    }

    @Test func singleValueFromSeveralColumnsIsATypeMismatch() throws {
        let error = #expect(throws: DecodingError.self) { try decoder.decode(Int.self, using: "SELECT 1, 2") }
        guard case .typeMismatch(_, let context)? = error else { Issue.record("expected typeMismatch"); return }
        #expect(context.debugDescription.contains("2 columns"))
    }

    @Test func classHierarchyEncodesBothLevelsIntoOneRow() throws {
        try db.execute(raw: "CREATE TABLE dogs (name, breed)")
        try encoder.encode(Dog(name: "Rex", breed: "Collie"), using: "INSERT INTO dogs VALUES (:name, :breed)")
        #expect(try db.read("SELECT name, breed FROM dogs") == [["name": .text("Rex"), "breed": .text("Collie")]])
        let dog = try decoder.decode(Dog.self, using: "SELECT * FROM dogs")
        #expect(dog?.name == "Rex")
        #expect(dog?.breed == "Collie")
    }
}
