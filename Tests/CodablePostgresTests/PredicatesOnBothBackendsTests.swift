import CodableSQLite
import Foundation
import Testing

/// Foundation's `#Predicate` and `SortDescriptor` as filters on both engines, with Foundation's
/// own evaluation as the oracle: every query returns what `values.filter(predicate)` and
/// `sorted(using:)` return over the same values.
@Suite("Queries: #Predicate and SortDescriptor on SQLite and PostgreSQL")
struct PredicatesOnBothBackendsTests {
    enum Genre: String, Codable, Sendable, CaseIterable { case drama, comedy, horror }
    enum Priority: Int, Codable, Sendable, CaseIterable { case low = 1, middle, high }
    enum Mood: String, Codable, Sendable { case calm, loud }
    struct Address: Codable, Hashable, Sendable { var city: String; var zip: Int }
    struct Studio: Codable, Model, Hashable, Sendable { var id: Int64?; var name: String; var founded: Int }
    struct Person: Codable, Model, Hashable, Sendable { var id: String; var name: String; var age: Int }
    struct Film: Codable, UUIDModel, Hashable, Sendable {
        var id: UUID
        var title: String
        var year: Int
        var rating: Double?
        var genre: Genre
        var priority: Priority?
        var mood: Mood
        var seen: Bool
        var released: Date
        var note: String?
        var tags: [String]
        var scores: [Int]
        var address: Address
        var studio: Studio?
        var cast: [Person]
    }

    static let titles = ["Alien", "alien", "Élan", "Elan", "50% off", "a_b", "axb", "Zed", "", "Amélie", "Ab", "B", "b", "10", "9"]
    static let words = ["x", "y", "z", "é", "%", "_"]

    /// Values with random fields (from a fixed seed), related values shared among them.
    static func sample(seed: UInt64, count: Int) -> [Film] {
        var random = SeededRandom(seed: seed)
        let studios = (0..<3).map { Studio(id: Int64($0 + 1), name: ["A24", "Neon", "a24"][$0], founded: 2000 + $0 * 7) }
        let people = (0..<5).map { Person(id: "p\($0)", name: ["Ann", "Bob", "ann", "Zoë", "Al"][$0], age: 20 + $0 * 9) }
        return (0..<count).map { index in
            Film(
                id: UUID(), title: titles[random.next(titles.count)] + (random.next(3) == 0 ? " \(index % 4)" : ""),
                year: 1990 + random.next(40), rating: random.next(4) == 0 ? nil : Double(random.next(100)) / 10,
                genre: [Genre.drama, .comedy, .horror][random.next(3)],
                priority: random.next(4) == 0 ? nil : Priority.allCases[random.next(3)], mood: random.next(2) == 0 ? .calm : .loud,
                seen: random.next(2) == 0,
                released: Date(timeIntervalSince1970: Double(random.next(2_000_000_000)) + Double(random.next(1000)) / 1000),
                note: random.next(3) == 0 ? nil : words[random.next(words.count)],
                tags: (0..<random.next(4)).map { _ in words[random.next(words.count)] },
                scores: (0..<random.next(4)).map { _ in random.next(10) - 3 },
                address: Address(city: ["Paris", "Oslo", "paris"][random.next(3)], zip: random.next(100)),
                studio: random.next(4) == 0 ? nil : studios[random.next(studios.count)],
                cast: (0..<random.next(4)).map { _ in people[random.next(people.count)] }.reduce(into: [Person]()) { list, person in
                    if !list.contains(person) { list.append(person) }
                })
        }
    }

    /// The predicates of the oracle test, with captured values drawn from `random`.
    static func predicates(_ random: inout SeededRandom) -> [(String, Predicate<Film>)] {
        let year = 1990 + random.next(40), other = 1990 + random.next(40)
        let rating = Double(random.next(100)) / 10
        let title = titles[random.next(titles.count)]
        let word = words[random.next(words.count)]
        let names = ["Ann", "Bob", "ann", "Zoë", "Al"]
        let name = names[random.next(names.count)]
        let some = Array(titles.shuffled(using: &random).prefix(random.next(4)))
        let divisor = 1 + random.next(5), remainder = random.next(3)
        let date = Date(timeIntervalSince1970: Double(random.next(2_000_000_000)))
        let genre = [Genre.drama, .comedy, .horror][random.next(3)]
        let flag = random.next(2) == 0
        let low = min(year, other), high = max(year, other)
        let minScore = random.next(6) - 3
        var list: [(String, Predicate<Film>)] = []
        list.append(("year >", #Predicate<Film> { $0.year > year }))
        list.append(("year == || rating >=", #Predicate<Film> { $0.year == year || ($0.rating ?? 0) >= rating }))
        list.append(("not", #Predicate<Film> { !($0.year < year && $0.seen) }))
        list.append(("rating == nil", #Predicate<Film> { $0.rating == nil }))
        list.append(("rating != nil && !", #Predicate<Film> { $0.rating != nil && $0.rating! < rating }))
        list.append(("rating flatMap", #Predicate<Film> { $0.rating.flatMap { $0 * 2 > rating } ?? flag }))
        list.append(("note == word", #Predicate<Film> { $0.note == word }))
        list.append(("note != word", #Predicate<Film> { $0.note != word }))
        list.append(("title <", #Predicate<Film> { $0.title < title }))
        list.append(("title ==", #Predicate<Film> { $0.title == title }))
        list.append(("title contains", #Predicate<Film> { $0.title.contains(word) }))
        list.append(("title starts", #Predicate<Film> { $0.title.starts(with: title) }))
        list.append(("note ?? contains", #Predicate<Film> { ($0.note ?? "").contains(word) }))
        list.append(("genre", #Predicate<Film> { $0.genre == genre }))
        list.append(("seen", #Predicate<Film> { $0.seen }))
        list.append(("seen == flag", #Predicate<Film> { $0.seen == flag }))
        list.append(("date", #Predicate<Film> { $0.released < date }))
        list.append(("arithmetic", #Predicate<Film> { ($0.year - 1990) / divisor % 3 == remainder }))
        list.append(("negative remainder", #Predicate<Film> { (1990 - $0.year) % divisor == -remainder }))
        list.append(("float division", #Predicate<Film> { ($0.rating ?? 1) / 2 > rating / 4 }))
        list.append(("ternary", #Predicate<Film> { ($0.seen ? $0.year : $0.year + 10) > year }))
        list.append(("closed range", #Predicate<Film> { (low...high).contains($0.year) }))
        list.append(("half-open range", #Predicate<Film> { (low..<high).contains($0.year) }))
        list.append(("captured contains", #Predicate<Film> { some.contains($0.title) }))
        list.append(("tags contains", #Predicate<Film> { $0.tags.contains(word) }))
        list.append(("tags isEmpty", #Predicate<Film> { $0.tags.isEmpty }))
        list.append(("tags count", #Predicate<Film> { $0.tags.count >= 2 }))
        list.append(("scores where", #Predicate<Film> { $0.scores.contains { $0 < minScore } }))
        list.append(("scores all", #Predicate<Film> { $0.scores.allSatisfy { $0 >= minScore } }))
        list.append(("nested", #Predicate<Film> { $0.address.city == "Paris" && $0.address.zip > divisor * 10 }))
        list.append(("to-one ?.", #Predicate<Film> { $0.studio?.name == "A24" }))
        list.append(("to-one ?. compare", #Predicate<Film> { ($0.studio?.founded ?? 0) > year - 1990 + 2000 }))
        list.append(("to-one nil", #Predicate<Film> { $0.studio == nil }))
        list.append(("to-many contains where", #Predicate<Film> { $0.cast.contains { $0.name == name } }))
        list.append(("to-many all", #Predicate<Film> { $0.cast.allSatisfy { $0.age > 25 } }))
        list.append(("to-many count", #Predicate<Film> { $0.cast.count == 2 }))
        list.append(("to-many isEmpty", #Predicate<Film> { $0.cast.isEmpty }))
        list.append(("to-many with outer", #Predicate<Film> { film in film.cast.contains { person in person.age + 1990 < film.year } == false }))
        list.append(("enum rawValue", #Predicate<Film> { $0.genre.rawValue == genre.rawValue || $0.genre.rawValue < "d" }))
        list.append(("Int enum rawValue order", #Predicate<Film> { ($0.priority?.rawValue ?? 0) >= divisor % 3 + 1 }))
        list.append(("optional text ?. starts", #Predicate<Film> { $0.note?.starts(with: word) == true }))
        list.append(("!= and Bool !=", #Predicate<Film> { $0.title != title && $0.seen != flag }))
        list.append(("to-one ?. flatMap Bool", #Predicate<Film> { $0.studio.flatMap { $0.founded > year - 1990 + 2000 } ?? flag }))
        return list
    }

    @Test("random values and predicates: each engine returns what predicate.evaluate keeps", arguments: await Backend.available)
    func oracle(_ backend: Backend) async throws {
        let db = try await backend.open()
        let films = Self.sample(seed: 7, count: 120)
        try await db.save(films)
        let stored = try await db.get(Film.self)
        var random = SeededRandom(seed: 42)
        var telling = Set<String>()   // predicates that kept some values and left out others
        for round in 0..<4 {
            for (name, predicate) in Self.predicates(&random) {
                let expected = Set(try stored.filter(predicate).map(\.id))
                if !expected.isEmpty && expected.count < stored.count { telling.insert(name) }
                let found = try await db.get(with: Filter(predicate))
                #expect(Set(found.map(\.id)) == expected, "\(backend) round \(round): \(name)")
                #expect(try await db.count(with: Filter(predicate)) == expected.count, "\(backend) round \(round): \(name) count")
            }
        }
        #expect(telling.count == Self.predicates(&random).count, "predicates that never told values apart: \(Set(Self.predicates(&random).map(\.0)).subtracting(telling))")
    }

    @Test("sort descriptors order as sorted(using:), ties in stored order, with a limit", arguments: await Backend.available)
    func sorting(_ backend: Backend) async throws {
        let db = try await backend.open()
        let films = Self.sample(seed: 11, count: 80)
        try await db.save(films)
        let stored = try await db.get(Film.self)
        let everything = #Predicate<Film> { _ in true }
        let descriptors: [[SortDescriptor<Film>]] = [
            [SortDescriptor(\.title)],
            [SortDescriptor(\.title, comparator: .lexical), SortDescriptor(\.year, order: .reverse)],
            [SortDescriptor(\.rating), SortDescriptor(\.title)],
            [SortDescriptor(\.rating, order: .reverse), SortDescriptor(\.released)],
            [SortDescriptor(\.note, comparator: .lexical, order: .reverse), SortDescriptor(\.id)],
            [SortDescriptor(\.year), SortDescriptor(\.released, order: .reverse)],
        ]
        for sortBy in descriptors {
            let expected = stored.sorted(using: sortBy)
            let found = try await db.get(with: Filter(everything, sortBy: sortBy))
            #expect(found.map(\.id) == expected.map(\.id), "\(backend): \(sortBy.map { "\($0.keyPath as Any)" })")
            let limited = try await db.get(with: Filter(#Predicate<Film> { $0.year > 2000 }, sortBy: sortBy).limit(7))
            #expect(limited.map(\.id) == Array(try expected.filter(#Predicate<Film> { $0.year > 2000 }).prefix(7)).map(\.id))
        }
    }

    @Test("predicates compose with and, or, delete and live values", arguments: await Backend.available)
    func composition(_ backend: Backend) async throws {
        let db = try await backend.open()
        let films = Self.sample(seed: 3, count: 40)
        try await db.save(films)
        let old = #Predicate<Film> { $0.year < 2000 }
        let seen = #Predicate<Film> { $0.seen }
        let both = try await db.get(with: Filter(old).and(Filter(seen)))
        #expect(Set(both.map(\.id)) == Set(films.filter { $0.year < 2000 && $0.seen }.map(\.id)))
        let either = try await db.count(with: Filter(old).or(\Film.title, is: .equal(to: "Zed")))
        #expect(either == films.filter { $0.year < 2000 || $0.title == "Zed" }.count)
        let deleted = try await db.delete(with: Filter(old))
        #expect(deleted == films.filter { $0.year < 2000 }.count)
        #expect(try await db.count(Film.self) == films.count - deleted)
    }

    @Test("a live query of a #Predicate sees changes to the values and to their related values", arguments: await Backend.available)
    func live(_ backend: Backend) async throws {
        let db = try await backend.open()
        let studio = Studio(id: 1, name: "Neon", founded: 2010)
        let film = Film(id: UUID(), title: "Alien", year: 1979, rating: nil, genre: .horror, priority: nil, mood: .calm, seen: false, released: Date(timeIntervalSince1970: 0),
                        note: nil, tags: [], scores: [], address: Address(city: "Oslo", zip: 1), studio: studio, cast: [])
        try await db.save(film)
        let values = Collected(db.observe(Filter(#Predicate<Film> { $0.studio?.name == "A24" }, sortBy: [SortDescriptor(\.title)])))
        try await values.wait { $0.last?.isEmpty == true }
        let a24 = Studio(id: 1, name: "A24", founded: 2012)
        try await db.save(a24)   // only the related row changes
        try await values.wait { $0.last?.map(\.title) == ["Alien"] }
        var other = film
        other.id = UUID()
        other.title = "Aliens"
        other.studio = a24   // saving the graph saves the studio as it is here
        try await db.save(other)
        try await values.wait { $0.last?.map(\.title) == ["Alien", "Aliens"] }
    }

    @Test("what SQL cannot say with Swift's meaning throws unsupportedPredicate and changes nothing", arguments: await Backend.available)
    func refusals(_ backend: Backend) async throws {
        let db = try await backend.open()
        let films = Self.sample(seed: 5, count: 10)
        try await db.save(films)
        let refused: [(String, Filter<Film>)] = [
            ("String.count", Filter(#Predicate<Film> { $0.title.count > 3 })),
            ("enum order", Filter(#Predicate<Film> { _ in true }, sortBy: [SortDescriptor(\.genre.rawValue)]).and(Filter(#Predicate<Film> { $0.tags.first == "x" }))),
            ("first", Filter(#Predicate<Film> { $0.tags.first == "x" })),
            ("rawValue of an enum that is not CaseIterable", Filter(#Predicate<Film> { $0.mood.rawValue == "calm" })),
        ]
        for (name, filter) in refused {
            await #expect(throws: ModelError.self, "\(backend): \(name)") { try await db.get(with: filter) }
            do {
                _ = try await db.delete(with: filter)
                Issue.record("\(backend): \(name) deleted")
            } catch let error as ModelError {
                #expect(error.code == .unsupportedPredicate || error.code == .invalidKeyPath, "\(backend): \(name): \(error)")
                #expect(error.model.contains("Film"))
            }
        }
        #expect(try await db.count(Film.self) == films.count)
    }
}

extension SeededRandom {
    /// A number in `0..<bound`.
    mutating func next(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
