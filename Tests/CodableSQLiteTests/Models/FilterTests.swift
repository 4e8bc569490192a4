import Foundation
import Testing
@testable import CodableSQLite

@Suite("Models: filters")
struct FilterTests {
    let db: SQLite.Database

    init() throws {
        db = try ModelFixtures.memory()
        try db.save(ModelFixtures.people)
    }

    private func names(_ filter: Filter<Person>) throws -> [String] {
        try db.get(with: filter).map(\.name).sorted()
    }

    @Test func comparisonRules() throws {
        #expect(try names(Filter(\Person.age, is: .greater(than: 17))) == ["Billy", "Carol", "Dave"])
        #expect(try names(Filter(\Person.age, is: .greaterOrEqual(to: 35))) == ["Carol", "Dave"])
        #expect(try names(Filter(\Person.age, is: .less(than: 20))) == ["Bob"])
        #expect(try names(Filter(\Person.age, is: .lessOrEqual(to: 20))) == ["Billy", "Bob"])
        #expect(try names(Filter(\Person.age, is: .between(15, and: 35))) == ["Billy", "Bob", "Dave"])
        #expect(try db.count(with: Filter(\Person.age, is: .between(15, and: 35))) == 3)
    }

    @Test func stringEqualityIsExactNotLike() throws {
        #expect(try names(Filter(\Person.name, is: .equal(to: "Bob"))) == ["Bob"])
        #expect(try names(Filter(\Person.name, is: .equal(to: "bob"))) == [])
        #expect(try names(Filter(\Person.name, is: .equal(to: "B%"))) == [])
        #expect(try names(Filter(\Person.name, is: .notEqual(to: "Bob"))) == ["Billy", "Carol", "Dave"])
    }

    @Test func nilMeansIsNullOnOptionals() throws {
        #expect(try names(Filter(\Person.nickname, is: .equal(to: nil))) == ["Billy", "Carol"])
        #expect(try names(Filter(\Person.nickname, is: .notEqual(to: nil))) == ["Bob", "Dave"])
        // As in Swift, a nil nickname is not equal to "B".
        #expect(try names(Filter(\Person.nickname, is: .notEqual(to: "B"))) == ["Billy", "Carol", "Dave"])
    }

    @Test func membershipRules() throws {
        #expect(try names(Filter(\Person.eyeColor, is: .in([.blue, .green]))) == ["Bob", "Carol", "Dave"])
        #expect(try names(Filter(\Person.eyeColor, is: .notIn([.blue]))) == ["Billy", "Dave"])
        #expect(try names(Filter(\Person.age, is: .in([]))) == [])
        #expect(try names(Filter(\Person.age, is: .notIn([]))) == ["Billy", "Bob", "Carol", "Dave"])
        #expect(try names(Filter(\Person.nickname, is: .in(["B", nil]))) == ["Billy", "Bob", "Carol"])
        #expect(try names(Filter(\Person.nickname, is: .notIn(["B"]))) == ["Billy", "Carol", "Dave"])
    }

    @Test func textRulesAreCaseSensitiveAndEscapeWildcards() throws {
        try db.save(Person("50% *off* [sale]?", age: 99))
        #expect(try names(Filter(\Person.name, is: .hasPrefix("B"))) == ["Billy", "Bob"])
        #expect(try names(Filter(\Person.name, is: .hasPrefix("b"))) == [])
        #expect(try names(Filter(\Person.name, is: .hasSuffix("ol"))) == ["Carol"])
        #expect(try names(Filter(\Person.name, is: .contains("ll"))) == ["Billy"])
        #expect(try names(Filter(\Person.name, is: .contains("% *off* [sale]?"))) == ["50% *off* [sale]?"])
        #expect(try names(Filter(\Person.name, is: .contains("*"))) == ["50% *off* [sale]?"])
        #expect(try names(Filter(\Person.name, is: .like("b%"))) == ["Billy", "Bob"])
        #expect(try names(Filter(\Person.nickname, is: .hasPrefix("D"))) == ["Dave"])
    }

    @Test func andOrCompose() throws {
        let blueAdults = Filter(\Person.eyeColor, is: .equal(to: .blue)).and(\Person.age, is: .greater(than: 17))
        #expect(try names(blueAdults) == ["Carol"])
        let extremes = Filter(\Person.age, is: .less(than: 16)).or(Filter(\Person.age, is: .greater(than: 39)))
        #expect(try names(extremes) == ["Bob", "Carol"])
        let nested = Filter(\Person.eyeColor, is: .equal(to: .blue))
            .and(Filter(\Person.age, is: .less(than: 16)).or(\Person.nickname, is: .equal(to: nil)))
        #expect(try names(nested) == ["Bob", "Carol"])
    }

    @Test func emptyFilterMatchesEverything() throws {
        #expect(try db.get(with: Filter<Person>()).count == 4)
        #expect(try db.count(with: Filter<Person>()) == 4)
    }

    @Test func sortByTwoKeyPathsSortsWithinTheFirst() throws {
        let sorted = try db.get(with: Filter<Person>().sort(by: \.eyeColor).sort(by: \.age, ascending: false))
        #expect(sorted.map(\.name) == ["Carol", "Bob", "Billy", "Dave"])
    }

    @Test func limitTwoReturnsTheFirstTwoRows() throws {
        let filter = Filter<Person>().sort(by: \.name)
        #expect(try db.get(with: filter.limit(2)).map(\.name) == ["Billy", "Bob"])
        #expect(try db.get(with: filter.limit(2, page: 1)).map(\.name) == ["Billy", "Bob"])
        #expect(try db.get(with: filter.limit(2, page: 2)).map(\.name) == ["Carol", "Dave"])
        #expect(try db.get(with: filter.limit(2, page: 3)).map(\.name) == [])
        #expect(try db.count(with: filter.limit(3, page: 2)) == 1)
    }

    @Test func invalidPageIsAnError() throws {
        #expect(throws: ModelError.self) { try db.get(with: Filter<Person>().limit(2, page: 0)) }
        #expect(throws: ModelError.self) { try db.get(with: Filter<Person>().limit(-1)) }
    }

    @Test func deleteWithFilter() throws {
        #expect(try db.delete(with: Filter(\Person.name, is: .equal(to: "Bob"))) == 1)
        #expect(try names(Filter<Person>()) == ["Billy", "Carol", "Dave"])
        #expect(try db.delete(with: Filter<Person>().sort(by: \.age).limit(1)) == 1)
        #expect(try names(Filter<Person>()) == ["Carol", "Dave"])
    }

    @Test func filterValuesAreBoundNotSpliced() throws {
        let hostile = "x'); DROP TABLE Person; --"
        #expect(try names(Filter(\Person.name, is: .equal(to: hostile))) == [])
        #expect(try db.count(Person.self) == 4)
    }

    @Test func uuidFilterMatchesStoredUUIDs() throws {
        let bob = ModelFixtures.people[1]
        #expect(try db.get(with: Filter(\Person.id, is: .equal(to: bob.id))) == [bob])
    }

    @Test func filterOnAComputedPropertyThrowsNamingTheModel() throws {
        let error = #expect(throws: ModelError.self) {
            try db.get(with: Filter(\Person.name.count, is: .greater(than: 3)))
        }
        #expect(error?.model == "Person")
        #expect(try db.count(Person.self) == 4)
    }

    @Test func filterOnAnIndexedPropertyUsesTheIndex() throws {
        let plan = try db.read(#"EXPLAIN QUERY PLAN SELECT * FROM "Person" WHERE "age" > ?"#, arguments: [.integer(17)])
        let details = plan.compactMap { $0["detail"]?.stringValue }.joined(separator: " ")
        #expect(details.contains("USING INDEX Person(age)"))
        // The SQL a filter produces is that same shape.
        let (clauses, _) = try Filter(\Person.age, is: .greater(than: 17)).clauses()
        #expect(clauses == #" WHERE "age" > ?"#)
    }
}

@Suite("Models: filters on dates and nested values")
struct NestedFilterTests {
    @Test func keyPathsIntoNestedValuesUseJSONExtract() throws {
        let db = try ModelFixtures.memory()
        try db.save([
            Customer(id: "p", address: Address(city: "Paris", zip: 75001), joined: Date(), tags: ["vip"]),
            Customer(id: "l", address: Address(city: "Lyon", zip: 69001), joined: Date(), tags: []),
        ])
        #expect(try db.get(with: Filter(\Customer.address.city, is: .equal(to: "Paris"))).map(\.id) == ["p"])
        #expect(try db.get(with: Filter(\Customer.address.zip, is: .less(than: 70000))).map(\.id) == ["l"])
        let (clauses, _) = try Filter(\Customer.address.city, is: .equal(to: "Paris")).clauses()
        #expect(clauses == #" WHERE json_extract("address", '$."city"') = ?"#)
    }

    @Test func dateFiltersCompareWithStoredDates() throws {
        let db = try ModelFixtures.memory()
        let now = Date()
        try db.save([
            Customer(id: "old", address: Address(city: "A", zip: 1), joined: now.addingTimeInterval(-86_400), tags: []),
            Customer(id: "new", address: Address(city: "B", zip: 2), joined: now.addingTimeInterval(3600), tags: []),
            Customer(id: "exact", address: Address(city: "C", zip: 3), joined: now, tags: []),
        ])
        #expect(try db.get(with: Filter(\Customer.joined, is: .greater(than: now))).map(\.id) == ["new"])
        #expect(try db.get(with: Filter(\Customer.joined, is: .equal(to: now))).map(\.id) == ["exact"])
        #expect(try db.get(with: Filter<Customer>().sort(by: \.joined)).map(\.id) == ["old", "exact", "new"])
    }

    @Test func indexOnANestedPathIsUsedByFiltersOnIt() throws {
        struct Shop: Codable, Model {
            var id: Int
            var address: Address
            static var indexes: [ModelIndex<Shop>] { [.index(\.address.city)] }
        }
        let db = try ModelFixtures.memory()
        try db.save(Shop(id: 1, address: Address(city: "Rome", zip: 1)))
        let (clauses, arguments) = try Filter(\Shop.address.city, is: .equal(to: "Rome")).clauses()
        let plan = try db.read(#"EXPLAIN QUERY PLAN SELECT * FROM "Shop""# + clauses, arguments: arguments)
        let details = plan.compactMap { $0["detail"]?.stringValue }.joined(separator: " ")
        #expect(details.contains("USING INDEX"))
        #expect(try db.get(with: Filter(\Shop.address.city, is: .equal(to: "Rome"))).count == 1)
    }

    @Test func filtersIntoNestedValuesWhoseKeysAreRenamedThrow() throws {
        struct Place: Codable, Equatable {
            var town: String
            var zip: Int
            enum CodingKeys: String, CodingKey { case town = "city_name", zip }
        }
        struct Cents: Codable, Equatable {
            var value: Int
            init(_ value: Int) { self.value = value }
            init(from decoder: any Decoder) throws { value = try decoder.singleValueContainer().decode(Int.self) }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(value)
            }
        }
        struct Venue: Codable, Model, Equatable {
            var id: Int
            var place: Place
            var price: Cents
        }
        let db = try ModelFixtures.memory()
        let inOslo = Filter(\Venue.place.town, is: .equal(to: "Oslo"))
        // Refused from the type alone: before any Venue was saved, in any process.
        let early = #expect(throws: ModelError.self) { try db.get(with: inOslo) }
        #expect(early?.code == .invalidKeyPath)
        try db.save(Venue(id: 1, place: Place(town: "Oslo", zip: 150), price: Cents(5)))
        let renamed = #expect(throws: ModelError.self) { try db.get(with: inOslo) }
        #expect(renamed?.model == "Venue")
        #expect(renamed?.message.contains("`town`") == true)
        #expect(renamed?.message.contains("rename it or leave it out") == true)
        #expect(renamed?.message == early?.message)
        let singleValue = #expect(throws: ModelError.self) { try db.count(with: Filter(\Venue.price.value, is: .greater(than: 1))) }
        #expect(singleValue?.message.contains("not stored as a JSON object") == true)
        // A member the nested type does not rename still works, and so does the column itself.
        #expect(try db.count(with: Filter(\Venue.place.zip, is: .equal(to: 150))) == 1)
    }

    @Test func filtersIntoNestedValuesOfEveryPropertyKindWork() throws {
        struct Details: Codable, Equatable {
            var color: EyeColor
            var tag: UUID
            var since: Date
            var label: String
            var sizes: [Int]
            var note: String?
        }
        struct Item: Codable, Model, Equatable {
            var id: Int
            var details: Details
        }
        let db = try ModelFixtures.memory()
        let item = Item(id: 1, details: Details(color: .green, tag: UUID(), since: Date(timeIntervalSince1970: 0), label: "x", sizes: [1], note: nil))
        try db.save(item)
        #expect(try db.get(with: Filter(\Item.details.label, is: .equal(to: "x"))) == [item])
        #expect(try db.get(with: Filter(\Item.details.color, is: .equal(to: .green))) == [item])
        #expect(try db.count(with: Filter(\Item.details.note, is: .equal(to: nil))) == 1)
    }

    @Test func uniqueIndexRejectsDuplicates() throws {
        struct Account: Codable, Model {
            var id: Int
            var email: String
            static var indexes: [ModelIndex<Account>] { [.unique(\.email)] }
        }
        let db = try ModelFixtures.memory()
        try db.save(Account(id: 1, email: "a@example.com"))
        let error = #expect(throws: SQLite.Error.self) { try db.save(Account(id: 2, email: "a@example.com")) }
        #expect(error?.extendedCode == .constraintUnique)
        #expect(try db.count(Account.self) == 1)
    }

    @Test func indexesWhoseNamesCouldRunTogetherAreAllCreated() throws {
        struct Pair: Codable, Model {
            var id: Int
            var a_b: Int
            var a: Int
            var b: Int
            static var indexes: [ModelIndex<Pair>] { [.unique(\.a_b), .unique(\.a, \.b)] }
        }
        let db = try ModelFixtures.memory()
        try db.save(Pair(id: 1, a_b: 1, a: 1, b: 1))
        let indexes = try db.read("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'Pair' AND sql IS NOT NULL")
        #expect(Set(indexes.compactMap { $0["name"]?.stringValue }) == ["Pair(a_b) unique", "Pair(a,b) unique"])
        #expect(throws: SQLite.Error.self) { try db.save(Pair(id: 2, a_b: 2, a: 1, b: 1)) }
        #expect(throws: SQLite.Error.self) { try db.save(Pair(id: 3, a_b: 1, a: 2, b: 2)) }
        #expect(try db.count(Pair.self) == 1)
    }

    @Test func decimalsCompareAndSortByValue() throws {
        struct Product: Codable, Model, Equatable {
            var id: Int
            var price: Decimal
            var discount: Decimal?
        }
        let db = try ModelFixtures.memory()
        let products = [
            Product(id: 1, price: Decimal(string: "9.5")!, discount: nil),
            Product(id: 2, price: 10, discount: Decimal(string: "0.25")!),
            Product(id: 3, price: 100, discount: 1),
        ]
        try db.save(products)
        #expect(try db.get(with: Filter(\Product.price, is: .greater(than: 9))).map(\.id) == [1, 2, 3])
        #expect(try db.get(with: Filter(\Product.price, is: .between(Decimal(string: "9.75")!, and: 99))).map(\.id) == [2])
        #expect(try db.get(with: Filter(\Product.discount, is: .less(than: Decimal(string: "0.5")!))).map(\.id) == [2])
        #expect(try db.get(with: Filter<Product>().sort(by: \.price, ascending: false)).map(\.id) == [3, 2, 1])
        #expect(try db.get(with: Filter(\Product.price, is: .equal(to: Decimal(string: "9.5")!))) == [products[0]])
    }
}
