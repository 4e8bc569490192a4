@testable import CodableSQLite
import Foundation
import Testing

/// The source document's movie graph: value types, no annotations.
enum Cinema {
    #if Macros
    @RowCodable
    #endif
    struct Actor: Codable, Model, Hashable, Sendable { var id: String; var name: String }
    #if Macros
    @RowCodable
    #endif
    struct Studio: Codable, Model, Hashable, Sendable { var id: Int64?; var name: String }
    #if Macros
    @RowCodable
    #endif
    struct Movie: Codable, UUIDModel, Hashable, Sendable {
        let id: UUID
        var title: String
        var releaseDate: Date
        var studio: Studio?
        var cast: [Actor]
        var tags: [String]
        static var deleteRules: [PartialKeyPath<Movie>: DeleteRule] { [\Movie.cast: .cascade] }
    }

    /// A movie whose studio must not go away while it exists.
    #if Macros
    @RowCodable
    #endif
    struct Release: Codable, Model, Equatable, Sendable {
        var id: Int64?
        var studio: Studio
        var crew: [Actor]
        static var deleteRules: [PartialKeyPath<Release>: DeleteRule] { [\Release.crew: .deny] }
    }

    /// A computed property: a global `Data` would be reported by LeakSanitizer.
    static var feed: Data { Data("""
    [
      {"id": "1F6A3C1E-0000-4000-8000-000000000001", "title": "The Matrix", "releaseDate": 922838400,
       "studio": {"name": "Warner"}, "tags": ["sci-fi"],
       "cast": [{"id": "keanu", "name": "Keanu Reeves"}, {"id": "carrie", "name": "Carrie-Anne Moss"}]},
      {"id": "1F6A3C1E-0000-4000-8000-000000000002", "title": "John Wick", "releaseDate": 1414108800,
       "studio": null, "tags": [],
       "cast": [{"id": "keanu", "name": "Keanu Reeves"}, {"id": "willem", "name": "Willem Dafoe"}]},
      {"id": "1F6A3C1E-0000-4000-8000-000000000003", "title": "Toy Story", "releaseDate": 816998400,
       "studio": {"name": "Pixar"}, "tags": ["animation", "family"],
       "cast": [{"id": "tom", "name": "Tom Hanks"}]}
    ]
    """.utf8) }

    static func count(_ db: SQLite.Database, _ table: String) throws -> Int? {
        try db.read("SELECT count(*) AS n FROM \"\(table)\"").first?["n"]?.intValue
    }
}

/// SQLite's side of relationships: the source document's feed, statement counts, the synchronous
/// API and SQLite's own errors. What both engines share (graph saves, delete rules, filters,
/// observation) is tested once for both in `Tests/CodablePostgresTests/RelationshipsOnBothBackendsTests.swift`.
@Suite("Models: relationships")
struct RelationshipTests {
    typealias Movie = Cinema.Movie
    typealias Actor = Cinema.Actor
    typealias Studio = Cinema.Studio

    @Test func theSourceScenarioEndToEnd() throws {
        let db = try TestDatabases.file("relationships")
        let movies = try JSONDecoder().decode([Movie].self, from: Cinema.feed)
        let saved = try db.save(movies)
        // Studios had nil ids: assigned, and the returned values carry them.
        #expect(saved[0].studio?.id != nil && saved[2].studio?.id != nil)
        #expect(saved[0].studio?.id != saved[2].studio?.id)
        #expect(try Cinema.count(db, "Actor") == 4)   // Keanu is in two movies: one row
        #expect(try Cinema.count(db, "Movie.cast") == 5)

        let loaded = try db.get(with: Filter<Movie>().sort(by: \.title))
        #expect(loaded.map(\.title) == ["John Wick", "The Matrix", "Toy Story"])
        #expect(loaded == saved.sorted { $0.title < $1.title })
        #expect(loaded[1].cast.map(\.id) == ["keanu", "carrie"])   // order kept
        #expect(loaded[0].studio == nil)
        let one = try db.get(Movie.self, id: movies[2].id)
        #expect(one == saved[2])

        // Deleting The Matrix cascades to its cast: Keanu and Carrie go, and Keanu leaves John Wick.
        #expect(try db.delete(saved[0]))
        #expect(try db.get(Actor.self).map(\.id).sorted() == ["tom", "willem"])
        #expect(try db.get(Movie.self, id: movies[1].id)?.cast.map(\.id) == ["willem"])
        #expect(try Cinema.count(db, "Movie.cast") == 2)
        // The studio stays (nullify is the default).
        #expect(try db.count(Studio.self) == 2)
        #expect(try db.checkIntegrity().isEmpty)
    }

    @Test func loadingRunsStatementsPerRelationshipNotPerRow() throws {
        let db = try TestDatabases.file("relationships-batch")
        let pool = (0..<50).map { Actor(id: "a\($0)", name: "Actor \($0)") }
        var movies: [Movie] = []
        for n in 0..<1_000 {
            let studio: Studio? = n % 3 == 0 ? nil : Studio(id: Int64(n % 7 + 1), name: "Studio \(n % 7)")
            let cast: [Actor] = (0..<5).map { pool[(n + $0 * 7) % 50] }
            let date = Date(timeIntervalSince1970: Double(n) * 86_400)
            movies.append(Movie(id: UUID(), title: "Movie \(n)", releaseDate: date, studio: studio, cast: cast, tags: ["t\(n % 4)"]))
        }
        try db.save(movies)
        let statements = Locked<[String]>([])
        db.trace { sql in statements.withLock { $0.append(sql) } }
        let loaded = try db.get(Movie.self)
        db.trace(nil)
        #expect(loaded.count == 1_000)
        #expect(Set(loaded) == Set(movies))
        // The movies, the studios, the cast's links and the actors (and a BEGIN/ROLLBACK for one snapshot).
        let queries = statements.withLock { $0 }.filter { $0.hasPrefix("SELECT") }
        #expect(queries.count == 4, "\(queries)")
        // A filtered, paged load runs the same number.
        statements.withLock { $0.removeAll() }
        db.trace { sql in statements.withLock { $0.append(sql) } }
        let page = try db.get(with: Filter(\Movie.title, is: .hasPrefix("Movie 1")).sort(by: \.releaseDate).limit(10, page: 2))
        db.trace(nil)
        #expect(page.count == 10)
        #expect(page.allSatisfy { movie in movies.first { $0.id == movie.id } == movie })
        #expect(statements.withLock { $0 }.filter { $0.hasPrefix("SELECT") }.count == 4)
    }

    @Test func asyncFormsAndTransactionsCompose() async throws {
        let db = try TestDatabases.file("relationships-async")
        let movies = try JSONDecoder().decode([Movie].self, from: Cinema.feed)
        try await db.save(movies)
        #expect(try await db.get(Movie.self).count == 3)
        await #expect(throws: CancellationError.self) {
            try await db.write { _ in
                try db.delete(Movie.self, id: movies[0].id)
                throw CancellationError()
            }
        }
        // The rolled-back delete left everything in place.
        #expect(try await db.count(Actor.self) == 4)
        #expect(try await db.get(Movie.self, id: movies[0].id)?.cast.count == 2)
    }
}

/// Shapes that cannot be relationships, refused with errors that say why.
@Suite("Models: relationship errors")
struct RelationshipErrorTests {
    #if Macros
    @RowCodable
    #endif
    struct Person: Codable, Model { var id: Int64?; var name: String; var friends: [Pet] }
    #if Macros
    @RowCodable
    #endif
    struct Pet: Codable, Model { var id: Int64?; var owner: [Person] }

    #if Macros
    @RowCodable
    #endif
    struct Node: Codable, Model { var id: Int64?; var children: [Node] }

    #if Macros
    @RowCodable
    #endif
    struct Wrong: Codable, Model {
        var id: Int64?
        var name: String
        static var deleteRules: [PartialKeyPath<Wrong>: DeleteRule] { [\Wrong.name: .cascade] }
    }

    @Test func cyclesAreRefusedWithTheInverseQuery() throws {
        let db = try TestDatabases.memory()
        let error = #expect(throws: ModelError.self) { try db.save(Person(id: nil, name: "A", friends: [])) }
        #expect(error?.code == .unsupportedModel)
        #expect(error?.message.contains("contains:") == true)
        expectModelError(.unsupportedModel) { try db.save(Node(id: nil, children: [])) }
        expectModelError(.unsupportedModel) { try db.get(Node.self) }
        #expect(try db.tables().isEmpty)
    }

    @Test func aDeleteRuleOnAnOrdinaryPropertyIsRefused() throws {
        let db = try TestDatabases.memory()
        let error = #expect(throws: ModelError.self) { try db.save(Wrong(id: nil, name: "x")) }
        #expect(error?.code == .unsupportedModel)
        #expect(error?.message.contains("not a relationship") == true)
    }

    @Test func aColumnWrittenAsJSONByAnEarlierVersionIsRefusedNotMisread() throws {
        let db = try TestDatabases.memory()
        // What an earlier version wrote: the cast as JSON inside the row.
        try db.execute(raw: """
            CREATE TABLE "Movie" ("id" TEXT PRIMARY KEY NOT NULL, "title" TEXT NOT NULL, "releaseDate" TEXT NOT NULL,
                "studio" TEXT, "cast" TEXT NOT NULL, "tags" TEXT NOT NULL);
            INSERT INTO "Movie" VALUES ('1F6A3C1E-0000-4000-8000-000000000009', 'Old', '2000-01-01 00:00:00', NULL,
                '[{"id":"keanu","name":"Keanu Reeves"}]', '[]');
            """)
        let error = #expect(throws: ModelError.self) { try db.get(Cinema.Movie.self) }
        #expect(error?.code == .schemaMismatch)
        #expect(error?.message.contains("`studio`") == true || error?.message.contains("`cast`") == true)
        expectModelError(.schemaMismatch) {
            try db.save(Cinema.Movie(id: UUID(), title: "New", releaseDate: Date(), studio: nil, cast: [], tags: []))
        }
        // Nothing was changed: the old row and its JSON are still there.
        #expect(try db.read("SELECT \"cast\" FROM \"Movie\"").first?["cast"]?.stringValue?.contains("keanu") == true)
    }
}

/// Expects `body` to throw a ``ModelError`` with `code`.
func expectModelError<R>(_ code: ModelError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R) {
    let error = #expect(throws: ModelError.self, sourceLocation: sourceLocation) { try body() }
    #expect(error?.code == code, sourceLocation: sourceLocation)
}

/// Graphs more than one level deep, and to-many values whose ids are assigned.
@Suite("Models: deeper relationship graphs")
struct DeepRelationshipTests {
    #if Macros
    @RowCodable
    #endif
    struct Country: Codable, Model, Hashable, Sendable { var id: String; var name: String }
    #if Macros
    @RowCodable
    #endif
    struct City: Codable, Model, Hashable, Sendable { var id: Int64?; var name: String; var country: Country }
    #if Macros
    @RowCodable
    #endif
    struct Stop: Codable, Model, Hashable, Sendable { var id: Int64?; var city: City?; var note: String }
    #if Macros
    @RowCodable
    #endif
    struct Tour: Codable, Model, Hashable, Sendable {
        var id: Int64?
        var name: String
        var stops: [Stop]
        static var deleteRules: [PartialKeyPath<Tour>: DeleteRule] { [\Tour.stops: .cascade] }
    }

    @Test func twoLevelsDownAreSavedLoadedAndCascaded() throws {
        let db = try TestDatabases.file("relationships-deep")
        let france = Country(id: "fr", name: "France")
        let tour = Tour(id: nil, name: "Grand tour", stops: [
            Stop(id: nil, city: City(id: nil, name: "Paris", country: france), note: "first"),
            Stop(id: nil, city: nil, note: "at sea"),
            Stop(id: nil, city: City(id: nil, name: "Lyon", country: france), note: "last"),
        ])
        let saved = try db.save(tour)
        // Every nil id at every level was assigned, and the returned value carries them.
        #expect(saved.id != nil)
        #expect(saved.stops.allSatisfy { $0.id != nil })
        #expect(saved.stops.compactMap { $0.city?.id }.count == 2)
        #expect(try db.count(Country.self) == 1)

        let statements = Locked<[String]>([])
        db.trace { sql in statements.withLock { $0.append(sql) } }
        let loaded = try db.get(Tour.self, id: saved.id)
        db.trace(nil)
        #expect(loaded == saved)
        #expect(loaded?.stops.map(\.note) == ["first", "at sea", "last"])
        // Tours, the stops' links, stops, cities, countries.
        #expect(statements.withLock { $0 }.filter { $0.hasPrefix("SELECT") }.count == 5)

        // Saving again with one stop removed unlinks it; the stop itself stays (it is only unlinked).
        var shorter = saved
        shorter.stops.removeLast()
        try db.save(shorter)
        #expect(try db.get(Tour.self).first?.stops.count == 2)
        #expect(try db.count(Stop.self) == 3)

        // Deleting the tour cascades to its stops (not to cities, whose rule from Stop is nullify).
        #expect(try db.delete(shorter))
        #expect(try db.count(Stop.self) == 1)
        #expect(try db.count(City.self) == 2)
        // A city still referred to by a stop's optional to-one can go: the stop's city becomes nil.
        let lyonStop = try #require(try db.get(Stop.self).first)
        try db.delete(try #require(lyonStop.city))
        #expect(try db.get(Stop.self).first?.city == nil)
        // A country still referred to by a city's non-optional to-one cannot.
        expectModelError(.deleteDenied) { try db.delete(france) }
        #expect(try db.count(Country.self) == 1)
        #expect(try db.checkIntegrity().isEmpty)
    }

    @Test func aFailingElementRollsBackTheWholeGraph() throws {
        let db = try TestDatabases.memory()
        try db.save(City(id: nil, name: "Nice", country: Country(id: "fr", name: "France")))
        try db.execute(raw: "DELETE FROM \"City\"")
        try db.execute(raw: "CREATE TRIGGER no_rome BEFORE INSERT ON \"City\" WHEN NEW.name = 'Rome' BEGIN SELECT RAISE(ABORT, 'no Rome'); END")
        let tours = [
            Tour(id: nil, name: "ok", stops: [Stop(id: nil, city: City(id: nil, name: "Paris", country: Country(id: "fr", name: "France")), note: "")]),
            Tour(id: nil, name: "bad", stops: [Stop(id: nil, city: City(id: nil, name: "Rome", country: Country(id: "it", name: "Italy")), note: "")]),
        ]
        let error = #expect(throws: SQLite.Error.self) { try db.save(tours) }
        #expect(error?.elementIndex == 1)
        // Nothing of either tour was kept, and the database still works.
        #expect(try db.count(Tour.self) == 0)
        #expect(try db.count(Stop.self) == 0)
        #expect(try db.count(City.self) == 0)
        #expect(try db.count(Country.self) == 1)
        try db.save(tours[0])
        #expect(try db.get(Tour.self).first?.stops.first?.city?.name == "Paris")
    }
}

/// A case a review found: a to-one added to an existing table. (Behaviour both engines share is
/// tested once for both in `Tests/CodablePostgresTests/RelationshipsOnBothBackendsTests.swift`.)
@Suite("Models: relationship edge cases")
struct RelationshipEdgeCaseTests {
    typealias Country = DeepRelationshipTests.Country
    typealias City = DeepRelationshipTests.City
    typealias Stop = DeepRelationshipTests.Stop

    #if Macros
    @RowCodable
    #endif
    struct Song: Codable, Model, Hashable { var id: Int64?; var title: String }
    #if Macros
    @RowCodable
    #endif
    struct Playlist: Codable, Model, Hashable { var id: Int64?; var songs: [Song] }

    @Test func aToOneAddedToAnExistingTableReadsAsNil() throws {
        let db = try TestDatabases.memory()
        try db.execute(raw: "CREATE TABLE \"Stop\" (\"id\" INTEGER PRIMARY KEY, \"note\" TEXT NOT NULL); INSERT INTO \"Stop\" VALUES (1, 'old');")
        #expect(try db.get(Stop.self).map(\.note) == ["old"])
        #expect(try db.get(Stop.self).first?.city == nil)
        try db.save(Stop(id: 2, city: City(id: nil, name: "Nice", country: Country(id: "fr", name: "France")), note: "new"))
        #expect(try db.get(Stop.self, id: 2)?.city?.name == "Nice")
    }
}
