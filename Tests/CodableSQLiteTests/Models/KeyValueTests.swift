import Foundation
import Testing
@testable import CodableSQLite

/// The record of the blog post "Persisting Structs in Swift".
private struct MyData: Codable, Equatable {
    let int: Int
    let double: Double
    let string: String
    let bool: Bool
    let date: Date
    let blob: Data
}

@Suite("Models: key-value storage")
struct KeyValueTests {
    @Test func storesAndReadsADouble() throws {
        let db = try ModelFixtures.memory()
        try db.store(173813.5345, forKey: "myKey")
        #expect(try db.value(Double.self, forKey: "myKey") == 173813.5345)
        #expect(try db.read("SELECT typeof(value) AS t FROM codablesqlite_values")[0]["t"] == .text("real"))
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

    @Test func asyncForms() async throws {
        let db = try ModelFixtures.memory()
        try await db.store([1.5, 2.5], forKey: "k")
        #expect(try await db.value([Double].self, forKey: "k") == [1.5, 2.5])
        #expect(try await db.removeValue(forKey: "k"))
    }
}
