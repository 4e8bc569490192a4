import Foundation
import Testing
@testable import CodableSQLite

/// The record of the blog post "Persisting Structs in Swift".
#if Macros
@RowCodable
#endif
private struct MyData: Codable, Equatable {
    let int: Int
    let double: Double
    let string: String
    let bool: Bool
    let date: Date
    let blob: Data
}

private enum Priority: Int, Codable, Sendable { case low = 1, high = 2 }

private enum Shape: Codable, Equatable, Sendable {
    case circle(radius: Double)
    case square(side: Int)
}

#if Macros
@RowCodable
#endif
private struct Settings: Codable, Equatable, Sendable {
    var name: String
    var address: Address
    var previous: [Address]
    var priority: Priority
    var nickname: String?
    var lastSeen: Date?
    var price: Decimal
    var tags: Set<String>
}

/// One kind of value `store` accepts, stored and read back under its own key.
struct KeyValueRoundTrip: Sendable, CustomTestStringConvertible {
    let testDescription: String
    let check: @Sendable (SQLite.Database) throws -> Void

    init<T: Codable & Equatable & Sendable>(_ name: String, _ value: T) {
        testDescription = name
        check = { db in
            try db.store(value, forKey: name)
            // `.some(value)`: for an optional T, a stored nil must read back as a stored nil.
            #expect(try db.value(T.self, forKey: name) == .some(value), "\(name)")
        }
    }

    static let all: [KeyValueRoundTrip] = [
        .init("Bool", true),
        .init("Int", -42),
        .init("Int64", Int64.min),
        .init("UInt8", UInt8.max),
        .init("Double", 173813.5345),
        .init("Float", Float(1.5)),
        .init("String", "Oslo é"),
        .init("empty String", ""),
        .init("Date", Date(timeIntervalSince1970: 1_700_000_000.123)),
        .init("UUID", UUID()),
        .init("URL", URL(string: "https://example.com/a?b=c")!),
        .init("Decimal", Decimal(string: "19.99")!),
        .init("Data", Data([0, 1, 0xFF])),
        .init("struct", Address(city: "Oslo", zip: 150)),
        .init("struct with nested structs", Settings(
            name: "home", address: Address(city: "Oslo", zip: 150), previous: [Address(city: "Bergen", zip: 5003)],
            priority: .high, nickname: nil, lastSeen: Date(timeIntervalSince1970: 86400.5),
            price: Decimal(string: "0.1")!, tags: ["a", "b"])),
        .init("model with a nested struct", Customer(
            id: "c1", address: Address(city: "Oslo", zip: 150), joined: Date(timeIntervalSince1970: 0), tags: ["x"])),
        .init("[String: Int]", ["a": 1, "b": 2]),
        .init("[Int: String]", [1: "one", 2: "two"]),
        .init("[String: [Int]]", ["a": [1, 2], "b": []]),
        .init("[String: Date]", ["start": Date(timeIntervalSince1970: 0), "end": Date(timeIntervalSince1970: 1_700_000_000.5)]),
        .init("empty [String: Int]", [String: Int]()),
        .init("[Int]", [1, 2, 3]),
        .init("[String]", ["a", "é"]),
        .init("[[Int]]", [[1], [], [2, 3]]),
        .init("[Address]", [Address(city: "Oslo", zip: 150)]),
        .init("Set<String>", Set(["a", "b"])),
        .init("Int? nil", Int?.none),
        .init("Int? non-nil", Int?.some(7)),
        .init("Address? nil", Address?.none),
        .init("Address? non-nil", Address?.some(Address(city: "Oslo", zip: 150))),
        .init("Date? non-nil", Date?.some(Date(timeIntervalSince1970: 12.25))),
        .init("String enum", EyeColor.green),
        .init("Int enum", Priority.high),
        .init("enum with associated values", Shape.circle(radius: 2.5)),
    ]
}

@Suite("Models: key-value storage")
struct KeyValueTests {
    @Test func storesAndReadsADouble() throws {
        let db = try ModelFixtures.memory()
        try db.store(173813.5345, forKey: "myKey")
        #expect(try db.value(Double.self, forKey: "myKey") == 173813.5345)
        // Its JSON text, as PostgreSQL stores it (jsonb).
        #expect(try db.read("SELECT value FROM codablesqlite_values")[0]["value"] == .text("173813.5345"))
    }

    @Test func valuesStoredBeforeTheJSONFormStillRead() throws {
        let db = try ModelFixtures.memory()
        // The table as earlier versions made it: single values as SQLite stores them.
        try db.execute(raw: "CREATE TABLE codablesqlite_values (key TEXT PRIMARY KEY NOT NULL, value) WITHOUT ROWID")
        try db.write("INSERT INTO codablesqlite_values VALUES ('real', 1.5), ('int', 7), ('text', 'plain words'), ('digits', '123'), "
            + "('home', '{\"city\":\"Oslo\",\"zip\":150}'), ('none', NULL)")
        #expect(try db.value(Double.self, forKey: "real") == 1.5)
        #expect(try db.value(Int.self, forKey: "int") == 7)
        #expect(try db.value(String.self, forKey: "text") == "plain words")
        #expect(try db.value(String.self, forKey: "digits") == "123")
        #expect(try db.value(Address.self, forKey: "home") == Address(city: "Oslo", zip: 150))
        #expect(try db.value(Int?.self, forKey: "none") == .some(nil))
        // Written again, a value takes the JSON form.
        try db.store(2.5, forKey: "real")
        #expect(try db.read("SELECT value FROM codablesqlite_values WHERE key = 'real'")[0]["value"] == .text("2.5"))
        #expect(try db.value(Double.self, forKey: "real") == 2.5)
    }

    @Test func missingKeyIsNil() throws {
        let db = try ModelFixtures.memory()
        #expect(try db.value(Int.self, forKey: "nothing") == nil)
        try db.store(1, forKey: "other")
        #expect(try db.value(Int.self, forKey: "nothing") == nil)
    }

    @Test func arraysOfStructsRoundTripExactly() throws {
        let db = try ModelFixtures.file()
        let records = [
            MyData(int: 1, double: 1.0, string: "One", bool: true, date: Date(), blob: Data([1, 2, 3, 4, 5, 6, 7, 8])),
            MyData(int: 2, double: 2.0, string: "Two", bool: false, date: Date(timeIntervalSince1970: 0.1), blob: Data()),
        ]
        try db.store(records, forKey: "MyData")
        #expect(try db.value([MyData].self, forKey: "MyData") == records)
        // Arrays of each basic type too.
        try db.store([1, 2, 3], forKey: "ints")
        try db.store([true, false], forKey: "bools")
        try db.store(["a", "é"], forKey: "strings")
        try db.store([Date.distantPast, Date.distantFuture], forKey: "dates")
        try db.store([Data([0xFF]), Data()], forKey: "blobs")
        #expect(try db.value([Int].self, forKey: "ints") == [1, 2, 3])
        #expect(try db.value([Bool].self, forKey: "bools") == [true, false])
        #expect(try db.value([String].self, forKey: "strings") == ["a", "é"])
        #expect(try db.value([Date].self, forKey: "dates") == [Date.distantPast, Date.distantFuture])
        #expect(try db.value([Data].self, forKey: "blobs") == [Data([0xFF]), Data()])
    }

    @Test func storingAgainReplacesAndRemoveDeletes() throws {
        let db = try ModelFixtures.memory()
        try db.store("first", forKey: "k")
        try db.store("second", forKey: "k")
        #expect(try db.value(String.self, forKey: "k") == "second")
        #expect(try db.removeValue(forKey: "k"))
        #expect(try !db.removeValue(forKey: "k"))
        #expect(try db.value(String.self, forKey: "k") == nil)
    }

    @Test func removingFromAnEmptyStoreIsNotAnError() throws {
        let db = try ModelFixtures.memory()
        #expect(try !db.removeValue(forKey: "k"))
    }

    @Test func readingAsTheWrongTypeIsADecodingError() throws {
        let db = try ModelFixtures.memory()
        try db.store("text", forKey: "k")
        #expect(throws: DecodingError.self) { try db.value(Int.self, forKey: "k") }
        #expect(try db.value(String.self, forKey: "k") == "text")
    }

    @Test(arguments: KeyValueRoundTrip.all)
    func everyKindOfValueRoundTrips(_ kind: KeyValueRoundTrip) throws {
        try kind.check(try ModelFixtures.memory())
        try kind.check(try ModelFixtures.file())
    }

    @Test func aStructIsReadFromItsJSONNotAsColumns() throws {
        let db = try ModelFixtures.memory()
        try db.store(Address(city: "Oslo", zip: 150), forKey: "home")
        #expect(try db.value(Address.self, forKey: "home") == Address(city: "Oslo", zip: 150))
        #expect(try db.read("SELECT json_extract(value, '$.city') AS city FROM codablesqlite_values")[0]["city"] == .text("Oslo"))
    }

    @Test func aStoredNilIsSomeNilAndAMissingKeyIsNil() throws {
        let db = try ModelFixtures.memory()
        try db.store(nil as Int?, forKey: "limit")
        #expect(try db.read("SELECT value FROM codablesqlite_values")[0]["value"] == .text("null"))
        let stored = try db.value(Int?.self, forKey: "limit")
        #expect(stored == .some(nil))
        #expect(try db.value(Int?.self, forKey: "missing") == nil)
        #expect(throws: DecodingError.self) { try db.value(Int.self, forKey: "limit") }
        try db.store(3 as Int?, forKey: "limit")
        #expect(try db.value(Int?.self, forKey: "limit") == .some(3))
        #expect(try db.value(Int.self, forKey: "limit") == 3)
    }

    @Test func asyncForms() async throws {
        let db = try ModelFixtures.memory()
        try await db.store([1.5, 2.5], forKey: "k")
        #expect(try await db.value([Double].self, forKey: "k") == [1.5, 2.5])
        #expect(try await db.removeValue(forKey: "k"))
        try await db.store(["a": Address(city: "Oslo", zip: 150)], forKey: "k")
        #expect(try await db.value([String: Address].self, forKey: "k") == ["a": Address(city: "Oslo", zip: 150)])
    }
}
