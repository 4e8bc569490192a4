import Foundation
import Testing
@testable import CodableSQLite

@Suite("Models: save, get, count, delete")
struct ModelStorageTests {
    @Test func getAndCountBeforeAnySaveAreEmptyNotErrors() throws {
        let db = try ModelFixtures.memory()
        #expect(try db.get(Person.self) == [])
        #expect(try db.count(Person.self) == 0)
        #expect(try db.get(Person.self, id: UUID()) == nil)
        #expect(try db.get(with: Filter(\Person.age, is: .greater(than: 1))) == [])
        #expect(try db.delete(with: Filter(\Person.age, is: .greater(than: 1))) == 0)
        #expect(try db.tables().isEmpty)
    }

    @Test func saveCreatesTheTableAndGetReturnsTheValue() throws {
        let db = try ModelFixtures.file()
        let billy = Person("Billy Bob", age: 20, eyeColor: .brown)
        try db.save(billy)
        #expect(try db.get(Person.self) == [billy])
        #expect(try db.get(Person.self, id: billy.id) == billy)
        #expect(try db.count(Person.self) == 1)
    }

    @Test func tableHasAColumnPerPropertyWithItsTypeAndNullability() throws {
        let db = try ModelFixtures.memory()
        try db.save(Person("A", age: 1))
        let columns = try db.columns(in: "Person")
        #expect(columns.map(\.name) == ["id", "name", "age", "nickname", "eyeColor"])
        #expect(columns.map(\.type) == ["TEXT", "TEXT", "INTEGER", "TEXT", "TEXT"])
        #expect(columns.map(\.isNotNull) == [true, true, true, false, true])
        #expect(columns.map(\.primaryKeyPosition) == [1, 0, 0, 0, 0])
    }

    @Test func enumsAreStoredAsTheirRawValue() throws {
        let db = try ModelFixtures.memory()
        try db.save(Person("A", age: 1, eyeColor: .green))
        let rows = try db.read("SELECT eyeColor FROM Person WHERE eyeColor = 'green'")
        #expect(rows.count == 1)
    }

    @Test func saveUpdatesInPlaceKeepingTheRowid() throws {
        let db = try ModelFixtures.memory()
        var person = Person("A", age: 1)
        try db.save(person)
        let rowid = try db.read("SELECT rowid FROM Person")[0]["rowid"]
        person.age = 2
        person.nickname = "Ace"
        try db.save(person)
        #expect(try db.get(Person.self) == [person])
        #expect(try db.read("SELECT rowid FROM Person")[0]["rowid"] == rowid)
    }

    @Test func saveNeverDeletesSoChildRowsWithCascadeSurvive() throws {
        let db = try ModelFixtures.memory()
        let person = Person("A", age: 1)
        try db.save(person)
        try db.execute(raw: """
            CREATE TABLE pet (name TEXT, owner TEXT REFERENCES Person(id) ON DELETE CASCADE);
            INSERT INTO pet VALUES ('Rex', '\(person.id.uuidString)');
            """)
        var older = person
        older.age = 2
        try db.save(older)
        #expect(try db.read("SELECT count(*) AS n FROM pet")[0]["n"] == .integer(1))
    }

    @Test func savingNilClearsAnEarlierValue() throws {
        let db = try ModelFixtures.memory()
        var person = Person("A", age: 1, nickname: "Ace")
        try db.save(person)
        person.nickname = nil
        try db.save(person)
        #expect(try db.get(Person.self, id: person.id)?.nickname == nil)
        #expect(try db.read("SELECT nickname FROM Person")[0]["nickname"] == .null)
    }

    @Test func integerIDsAreAssignedOnInsertAndReturned() throws {
        let db = try ModelFixtures.memory()
        let first = try db.save(Note(id: nil, text: "x"))
        let second = try db.save(Note(id: nil, text: "y"))
        #expect(first.id == 1)
        #expect(second.id == 2)
        var edited = first
        edited.text = "edited"
        let saved = try db.save(edited)
        #expect(saved == edited)
        #expect(try db.get(Note.self, id: 1) == edited)
        #expect(try db.count(Note.self) == 2)
    }

    @Test func savingAnArrayAssignsEveryID() throws {
        let db = try ModelFixtures.memory()
        let saved = try db.save([Note(id: nil, text: "a"), Note(id: nil, text: "b"), Note(id: 10, text: "c")])
        #expect(saved.map(\.id) == [1, 2, 10])
        #expect(try db.get(Note.self).map(\.text) == ["a", "b", "c"])
    }

    @Test func deleteRemovesOneValueAndReportsWhetherItExisted() throws {
        let db = try ModelFixtures.memory()
        try db.save(ModelFixtures.people)
        #expect(try db.delete(ModelFixtures.people[0]))
        #expect(try !db.delete(ModelFixtures.people[0]))
        #expect(try db.delete(Person.self, id: ModelFixtures.people[1].id))
        #expect(try db.count(Person.self) == 2)
        #expect(try db.delete([ModelFixtures.people[2], ModelFixtures.people[3]]) == 2)
        #expect(try db.count(Person.self) == 0)
    }

    @Test func savingAnArrayIsAllOrNothing() throws {
        let db = try ModelFixtures.memory()
        try db.save(Note(id: 1, text: "kept"))
        try db.execute(raw: "CREATE UNIQUE INDEX note_text ON Note(text)")
        let error = #expect(throws: SQLite.Error.self) {
            try db.save([Note(id: 2, text: "new"), Note(id: 3, text: "kept"), Note(id: 4, text: "other")])
        }
        #expect(error?.code == .constraint)
        #expect(error?.elementIndex == 1)
        #expect(try db.get(Note.self) == [Note(id: 1, text: "kept")])
    }

    @Test func failedTransactionLeavesNothingBehind() throws {
        struct Abort: Error {}
        let db = try ModelFixtures.memory()
        let kept = Person("Kept", age: 1)
        try db.save(kept)
        #expect(throws: Abort.self) {
            try db.inTransaction { _ in
                try db.save(Person("New", age: 2))
                try db.delete(kept)
                throw Abort()
            }
        }
        #expect(try db.get(Person.self) == [kept])
    }

    @Test func operationsInsideATransactionCommitTogether() throws {
        let db = try ModelFixtures.file()
        let a = Person("A", age: 1), b = Person("B", age: 2)
        try db.save(b)
        try db.inTransaction { _ in
            try db.save(a)
            try db.delete(b)
            #expect(try db.count(Person.self) == 1)
        }
        #expect(try db.get(Person.self) == [a])
    }

    @Test func modelsRoundTripEveryStoredType() throws {
        struct Everything: Codable, Model, Equatable {
            var id: String
            var flag: Bool
            var small: Int8
            var big: UInt32
            var ratio: Double
            var when: Date
            var whenMaybe: Date?
            var blob: Data
            var link: URL
            var money: Decimal
            var identifier: UUID
            var list: [Int]
            var nested: Address?
            var table: [String: Double]
        }
        let db = try ModelFixtures.memory()
        let value = Everything(
            id: "e", flag: true, small: -8, big: 4_000_000_000, ratio: -.infinity, when: Date(), whenMaybe: nil,
            blob: Data(), link: URL(string: "https://example.com/x?y=1")!, money: Decimal(string: "1234567.891")!,
            identifier: UUID(), list: [1, 2, 3], nested: Address(city: "Oslo", zip: 150), table: ["a": 0.5])
        try db.save(value)
        #expect(try db.get(Everything.self, id: "e") == value)
        #expect(try db.read("SELECT typeof(blob) AS t FROM Everything")[0]["t"] == .text("blob"))
    }
}
