import Foundation
import Testing
import CodableSQLite
#if Postgres
@testable import CodablePostgres
#endif

/// The movie graph of the source documents, and deeper ones: one set of relationship tests, run
/// against SQLite and (with the Postgres trait) a real PostgreSQL server, through the public
/// ``ModelStore`` protocol. (SQLite's statement counts, its synchronous API and its own error
/// shapes are tested in `CodableSQLiteTests/Models/RelationshipTests.swift`.)
enum Graphs {
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

    /// A movie whose studio must not go away while it exists, and whose crew refuses its delete.
    #if Macros
    @RowCodable
    #endif
    struct Release: Codable, Model, Equatable, Sendable {
        var id: Int64?
        var studio: Studio
        var crew: [Actor]
        static var deleteRules: [PartialKeyPath<Release>: DeleteRule] { [\Release.crew: .deny] }
    }

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

    #if Macros
    @RowCodable
    #endif
    struct Song: Codable, Model, Hashable, Sendable { var id: Int64?; var title: String }
    #if Macros
    @RowCodable
    #endif
    struct Playlist: Codable, Model, Hashable, Sendable { var id: Int64?; var songs: [Song] }

    /// One type reached by two relationships, with ids the database assigns.
    #if Macros
    @RowCodable
    #endif
    struct Crew: Codable, Model, Hashable, Sendable { var id: Int64?; var name: String }
    #if Macros
    @RowCodable
    #endif
    struct Show: Codable, UUIDModel, Hashable, Sendable { let id: UUID; var director: Crew; var cast: [Crew] }

    /// Hostile identifiers: quotes, semicolons and SQL keywords in table and property names, and
    /// properties named like a link table's columns.
    #if Macros
    @RowCodable
    #endif
    struct Weird: Codable, Model, Hashable, Sendable {
        var id: String
        var select: String
        var order: Int
        var owner: String
        var position: Int
        var target: String?
        static var tableName: String { #"We"ird; DROP TABLE x; --"# }
    }
    #if Macros
    @RowCodable
    #endif
    struct WeirdOwner: Codable, Model, Hashable, Sendable {
        var id: Int64?
        var `where`: String
        var items: [Weird]
        var best: Weird?
        static var tableName: String { #"Owner "quoted""# }
    }

    /// Links back to itself: refused on both engines.
    #if Macros
    @RowCodable
    #endif
    struct Person: Codable, Model, Sendable { var id: Int64?; var name: String; var pets: [Pet] }
    #if Macros
    @RowCodable
    #endif
    struct Pet: Codable, Model, Sendable { var id: Int64?; var owners: [Person] }

    static let date = Date(timeIntervalSince1970: 922_838_400)

    static var movies: [Movie] {
        let keanu = Actor(id: "keanu", name: "Keanu Reeves")
        return [
            Movie(id: UUID(uuidString: "1F6A3C1E-0000-4000-8000-000000000001")!, title: "The Matrix", releaseDate: date,
                  studio: Studio(id: nil, name: "Warner"), cast: [keanu, Actor(id: "carrie", name: "Carrie-Anne Moss")], tags: ["sci-fi"]),
            Movie(id: UUID(uuidString: "1F6A3C1E-0000-4000-8000-000000000002")!, title: "John Wick", releaseDate: date + 86_400,
                  studio: nil, cast: [keanu, Actor(id: "willem", name: "Willem Dafoe")], tags: []),
            Movie(id: UUID(uuidString: "1F6A3C1E-0000-4000-8000-000000000003")!, title: "Toy Story", releaseDate: date + 2 * 86_400,
                  studio: Studio(id: nil, name: "Pixar"), cast: [Actor(id: "tom", name: "Tom Hanks")], tags: ["animation", "family"]),
        ]
    }
}

@Suite("Relationships on SQLite and PostgreSQL", .serverShare, .hangLimit(minutes: 3))
struct RelationshipsOnBothBackendsTests {
    typealias Movie = Graphs.Movie
    typealias Actor = Graphs.Actor
    typealias Studio = Graphs.Studio
    typealias Country = Graphs.Country
    typealias City = Graphs.City
    typealias Stop = Graphs.Stop
    typealias Tour = Graphs.Tour

    @Test("the source scenario: a graph saved in one call, ids assigned at depth, loaded whole, cascaded", arguments: await Backend.available)
    func sourceScenario(_ backend: Backend) async throws {
        let db = try await backend.open()
        let movies = Graphs.movies
        let saved = try await db.save(movies)
        // Studios had nil ids: assigned, and the returned values carry them.
        #expect(saved[0].studio?.id != nil && saved[2].studio?.id != nil)
        #expect(saved[0].studio?.id != saved[2].studio?.id)
        #expect(saved[0].cast == movies[0].cast)
        #expect(try await db.count(Actor.self) == 4)   // Keanu is in two movies: one row
        #expect(try await db.count(Studio.self) == 2)

        let loaded = try await db.get(with: Filter<Movie>().sort(by: \.title))
        #expect(loaded.map(\.title) == ["John Wick", "The Matrix", "Toy Story"])
        #expect(loaded == saved.sorted { $0.title < $1.title })
        #expect(loaded[1].cast.map(\.id) == ["keanu", "carrie"])   // order kept
        #expect(loaded[0].studio == nil)
        #expect(try await db.get(Movie.self, id: movies[2].id) == saved[2])

        // Deleting The Matrix cascades to its cast: Keanu and Carrie go, and Keanu leaves John Wick.
        #expect(try await db.delete(saved[0]))
        #expect(try await db.get(Actor.self).map(\.id).sorted() == ["tom", "willem"])
        #expect(try await db.get(Movie.self, id: movies[1].id)?.cast.map(\.id) == ["willem"])
        // The studio stays (nullify is the default).
        #expect(try await db.count(Studio.self) == 2)
    }

    @Test("saving the same graph twice changes nothing; unlinking keeps the related value", arguments: await Backend.available)
    func sameGraphTwice(_ backend: Backend) async throws {
        let db = try await backend.open()
        let movies = try await db.save(Graphs.movies)
        #expect(try await db.save(movies) == movies)
        #expect(try await db.count(Actor.self) == 4)
        #expect(try await db.count(Studio.self) == 2)
        #expect(try await db.get(with: Filter<Movie>().sort(by: \.title)) == movies.sorted { $0.title < $1.title })

        var matrix = movies[0]
        matrix.cast.removeFirst()
        matrix.cast.append(Actor(id: "laurence", name: "Laurence Fishburne"))
        try await db.save(matrix)
        #expect(try await db.get(Movie.self, id: matrix.id)?.cast.map(\.id) == ["carrie", "laurence"])
        #expect(try await db.get(Actor.self, id: "keanu") != nil)   // unlinked, not deleted
        #expect(try await db.get(with: Filter(\Movie.cast, contains: "keanu")).map(\.title) == ["John Wick"])
        // A related value renamed through its own save is what every owner loads.
        try await db.save(Actor(id: "carrie", name: "C.-A. Moss"))
        #expect(try await db.get(Movie.self, id: matrix.id)?.cast.first?.name == "C.-A. Moss")
    }

    @Test("one save whose graph holds two different values with one id stores the later, as saving them one by one would", arguments: await Backend.available)
    func duplicateRelatedIDsLaterWins(_ backend: Backend) async throws {
        let db = try await backend.open()
        let first = Actor(id: "keanu", name: "Keanu"), later = Actor(id: "keanu", name: "Keanu Reeves")
        let movies = [
            Movie(id: UUID(), title: "The Matrix", releaseDate: Date(timeIntervalSince1970: 922_000_000), studio: nil, cast: [first], tags: []),
            Movie(id: UUID(), title: "John Wick", releaseDate: Date(timeIntervalSince1970: 1_414_000_000), studio: nil, cast: [later], tags: []),
        ]
        let saved = try await db.save(movies)
        #expect(try await db.get(Actor.self, id: "keanu") == later)
        #expect(try await db.count(Actor.self) == 1)
        for movie in saved { #expect(try await db.get(Movie.self, id: movie.id)?.cast == [later]) }
        // The same value twice is one save, whatever its place.
        let again = try await db.save(movies.map { var movie = $0; movie.cast = [later]; return movie })
        #expect(again.map(\.cast) == [[later], [later]])
        // As one by one: the later of two top-level values with one id.
        try await db.save([Actor(id: "carrie", name: "first"), Actor(id: "carrie", name: "Carrie-Anne Moss")])
        #expect(try await db.get(Actor.self, id: "carrie")?.name == "Carrie-Anne Moss")
    }

    @Test(".deny refuses while values are linked and changes nothing", arguments: await Backend.available)
    func deny(_ backend: Backend) async throws {
        let db = try await backend.open()
        let release = try await db.save(Graphs.Release(id: nil, studio: Studio(id: nil, name: "A24"), crew: [Actor(id: "x", name: "X")]))
        #expect(await throwsModelError(.deleteDenied) { try await db.delete(release) })
        #expect(try await db.count(Graphs.Release.self) == 1)
        #expect(try await db.get(Graphs.Release.self).first?.crew.map(\.id) == ["x"])
        // With no crew linked, the delete goes ahead.
        var empty = release
        empty.crew = []
        try await db.save(empty)
        #expect(try await db.delete(empty))
        #expect(try await db.count(Graphs.Release.self) == 0)
        #expect(try await db.count(Actor.self) == 1)
    }

    @Test("a non-optional to-one keeps its target alive; an optional one becomes nil", arguments: await Backend.available)
    func toOneTargetsOnDelete(_ backend: Backend) async throws {
        let db = try await backend.open()
        let release = try await db.save(Graphs.Release(id: nil, studio: Studio(id: nil, name: "A24"), crew: []))
        let studio = release.studio
        #expect(studio.id != nil)
        do {
            try await db.delete(studio)
            Issue.record("deleting a studio a release refers to succeeded")
        } catch let error as ModelError {
            #expect(error.code == .deleteDenied)
            #expect(error.model == "Studio")
        }
        #expect(try await db.count(Studio.self) == 1)
        #expect(try await db.get(Graphs.Release.self).first?.studio == studio)
        // An optional to-one is emptied instead.
        let movie = try await db.save(Movie(id: UUID(), title: "M", releaseDate: Graphs.date, studio: Studio(id: nil, name: "B"), cast: [], tags: []))
        try await db.delete(try #require(movie.studio))
        #expect(try await db.get(Movie.self, id: movie.id)?.studio == nil)
    }

    @Test("filters through relationships, hostile values as data, delete(with:) applying the rules", arguments: await Backend.available)
    func filters(_ backend: Backend) async throws {
        let db = try await backend.open()
        let movies = try await db.save(Graphs.movies)
        let keanu = Actor(id: "keanu", name: "Keanu Reeves")
        #expect(try await db.get(with: Filter(\Movie.cast, contains: keanu.id).sort(by: \.title)).map(\.title) == ["John Wick", "The Matrix"])
        #expect(try await db.get(with: Filter(\Movie.cast, contains: keanu.id).limit(5)).count == 2)
        #expect(try await db.get(with: Filter(\Movie.studio?.name, is: .equal(to: "Pixar"))).map(\.title) == ["Toy Story"])
        #expect(try await db.count(with: Filter(\Movie.studio?.name, is: .hasPrefix("W")).and(Filter(\Movie.cast, contains: keanu.id))) == 1)
        #expect(try await db.count(with: Filter(\Movie.studio?.name, is: .hasPrefix("W")).or(Filter(\Movie.cast, contains: "tom"))) == 2)
        // Hostile values are data.
        #expect(try await db.get(with: Filter(\Movie.cast, contains: "'; DROP TABLE \"Movie\"; --")).isEmpty)
        #expect(try await db.get(with: Filter(\Movie.studio?.name, is: .equal(to: "x' OR 1=1 --"))).isEmpty)
        #expect(try await db.count(Movie.self) == 3)
        // delete(with:) applies the rules too: the cast of the deleted movies goes.
        #expect(try await db.delete(with: Filter(\Movie.cast, contains: "tom")) == 1)
        #expect(try await db.get(Actor.self, id: "tom") == nil)
        #expect(try await db.count(Movie.self) == movies.count - 1)
    }

    @Test("two levels down: saved, loaded, unlinked and cascaded; ids assigned at every depth", arguments: await Backend.available)
    func deepGraph(_ backend: Backend) async throws {
        let db = try await backend.open()
        let france = Country(id: "fr", name: "France")
        let saved = try await db.save(Tour(id: nil, name: "Grand tour", stops: [
            Stop(id: nil, city: City(id: nil, name: "Paris", country: france), note: "first"),
            Stop(id: nil, city: nil, note: "at sea"),
            Stop(id: nil, city: City(id: nil, name: "Lyon", country: france), note: "last"),
        ]))
        #expect(saved.id != nil)
        #expect(saved.stops.allSatisfy { $0.id != nil })
        #expect(saved.stops.compactMap { $0.city?.id }.count == 2)
        #expect(try await db.count(Country.self) == 1)
        let loaded = try await db.get(Tour.self, id: saved.id)
        #expect(loaded == saved)
        #expect(loaded?.stops.map(\.note) == ["first", "at sea", "last"])
        // Saving the returned value again adds nothing.
        try await db.save(saved)
        #expect(try await db.count(City.self) == 2)

        var shorter = saved
        shorter.stops.removeLast()
        try await db.save(shorter)
        #expect(try await db.get(Tour.self).first?.stops.count == 2)
        #expect(try await db.count(Stop.self) == 3)
        // Deleting the tour cascades to its stops (not to cities: Stop.city's rule is nullify).
        #expect(try await db.delete(shorter))
        #expect(try await db.count(Stop.self) == 1)
        #expect(try await db.count(City.self) == 2)
        let lyonStop = try #require(try await db.get(Stop.self).first)
        try await db.delete(try #require(lyonStop.city))
        #expect(try await db.get(Stop.self).first?.city == nil)
        #expect(await throwsModelError(.deleteDenied) { try await db.delete(france) })
        #expect(try await db.count(Country.self) == 1)
        // Filters through a non-optional to-one, two steps from the root.
        try await db.save(City(id: nil, name: "Rome", country: Country(id: "it", name: "Italy")))
        #expect(try await db.get(with: Filter(\City.country.name, is: .equal(to: "Italy"))).map(\.name) == ["Rome"])
        #expect(try await db.count(with: Filter(\City.country.id, is: .equal(to: "fr"))) == 1)
    }

    @Test("an owner saved again with new id-less elements gets their ids; order is kept", arguments: await Backend.available)
    func idLessElementsAppended(_ backend: Backend) async throws {
        let db = try await backend.open()
        var playlist = try await db.save(Graphs.Playlist(id: nil, songs: [Graphs.Song(id: nil, title: "a")]))
        playlist.songs.append(Graphs.Song(id: nil, title: "b"))
        playlist.songs.insert(Graphs.Song(id: nil, title: "c"), at: 0)
        let again = try await db.save(playlist)
        #expect(again.songs.allSatisfy { $0.id != nil })
        #expect(try await db.get(Graphs.Playlist.self).first?.songs.map(\.title) == ["c", "a", "b"])
        #expect(try await db.count(Graphs.Song.self) == 3)
    }

    @Test("an id assigned in one part of a graph never takes an id another part gives explicitly", arguments: await Backend.available)
    func assignedIDsAvoidTheWholeGraphsExplicitIDs(_ backend: Backend) async throws {
        let db = try await backend.open()
        let show = try await db.save(Graphs.Show(id: UUID(), director: Graphs.Crew(id: nil, name: "Ann"), cast: [Graphs.Crew(id: 1, name: "Bob")]))
        #expect(show.director.id != nil && show.director.id != 1)
        let loaded = try await db.get(Graphs.Show.self, id: show.id)
        #expect(loaded?.director.name == "Ann")
        #expect(loaded?.cast.map(\.name) == ["Bob"])
        #expect(try await db.count(Graphs.Crew.self) == 2)
    }

    @Test("hostile identifiers: quotes, semicolons and keywords in names, properties named like link columns", arguments: await Backend.available)
    func hostileIdentifiers(_ backend: Backend) async throws {
        let db = try await backend.open()
        let a = Graphs.Weird(id: "a'; --", select: "x\"y", order: 1, owner: "o", position: 7, target: nil)
        let b = Graphs.Weird(id: "b", select: "%_\\", order: 2, owner: "p", position: 8, target: "t")
        let saved = try await db.save(Graphs.WeirdOwner(id: nil, where: "here", items: [b, a], best: a))
        #expect(saved.id != nil)
        let loaded = try await db.get(Graphs.WeirdOwner.self, id: saved.id)
        #expect(loaded == saved)
        #expect(loaded?.items.map(\.id) == ["b", "a'; --"])
        #expect(try await db.get(with: Filter(\Graphs.Weird.select, is: .hasPrefix("%_"))).map(\.id) == ["b"])
        #expect(try await db.get(with: Filter(\Graphs.WeirdOwner.best?.select, is: .equal(to: "x\"y"))).count == 1)
        #expect(try await db.get(with: Filter(\Graphs.WeirdOwner.items, contains: "a'; --")).count == 1)
        #expect(try await db.count(with: Filter(\Graphs.Weird.position, is: .greater(than: 7)).sort(by: \.order)) == 1)
        #expect(try await db.delete(saved))
        #expect(try await db.count(Graphs.Weird.self) == 2)
    }

    @Test("copy brings graphs to an SQLite file and back into a new database of the engine", arguments: await Backend.available)
    func copyBetweenDatabases(_ backend: Backend) async throws {
        let db = try await backend.open()
        let saved = try await db.save(Graphs.movies).sorted { $0.title < $1.title }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("copy-\(UUID().uuidString).sqlite").path
        let file = try SQLite.Database(path: path)
        #expect(try await file.copy([Movie.self], from: db, batchSize: 2) == ["Movie": 3])
        #expect(try await file.get(with: Filter<Movie>().sort(by: \.title)) == saved)
        #expect(try await file.count(Actor.self) == 4)
        let other = try await backend.open()
        #expect(try await other.copy([Actor.self, Movie.self], from: file) == ["Actor": 4, "Movie": 3])
        #expect(try await other.get(with: Filter<Movie>().sort(by: \.title)) == saved)
        do {
            try await other.copy([Movie.self], from: file, batchSize: 0)
            Issue.record("copied in batches of 0")
        } catch let error as ModelError {
            #expect(error.code == .invalidArgument)
            #expect(error.model == "Movie")
        }
    }

    @Test("a graph saved in the caller's transaction is rolled back with it", arguments: await Backend.available)
    func rolledBackWithTheTransaction(_ backend: Backend) async throws {
        let db = try await backend.open()
        struct Abort: Error {}
        await #expect(throws: Abort.self) {
            try await db.inTransaction { tx in
                try await tx.save(Graphs.movies)
                #expect(try await tx.count(Actor.self) == 4)
                throw Abort()
            }
        }
        #expect(try await db.count(Movie.self) == 0)
        #expect(try await db.count(Actor.self) == 0)
        #expect(try await db.count(Studio.self) == 0)
        try await db.save(Graphs.movies)
        #expect(try await db.count(Actor.self) == 4)
    }

    @Test("live queries of models with relationships see changes to related values and links, at any depth", arguments: await Backend.available)
    func observedGraphs(_ backend: Backend) async throws {
        let db = try await backend.open()
        let movies = try await db.save(Graphs.movies)
        let observed = Collected(db.observe(Filter<Movie>().sort(by: \.title)))
        try await observed.wait { !$0.isEmpty }
        // Only the Actor table changes: the movies are read again.
        try await db.save(Actor(id: "keanu", name: "K. Reeves"))
        try await observed.wait { $0.last?.first?.cast.first?.name == "K. Reeves" }
        var toyStory = movies[2]
        toyStory.cast.append(Actor(id: "tim", name: "Tim Allen"))
        try await db.save(toyStory)
        try await observed.wait { $0.last?.last?.cast.map(\.id) == ["tom", "tim"] }
        // One movie, by id: a related value's change reads it again too.
        let one = Collected(db.observe(Movie.self, id: movies[1].id))
        try await one.wait { !$0.isEmpty }
        try await db.save(Actor(id: "willem", name: "W. Dafoe"))
        try await one.wait { $0.last??.cast.last?.name == "W. Dafoe" }
        // Two levels down: a country renamed reaches the tours.
        let tour = try await db.save(Tour(id: nil, name: "t", stops: [Stop(id: nil, city: City(id: nil, name: "Paris", country: Country(id: "fr", name: "France")), note: "")]))
        let tours = Collected(db.observe(Tour.self))
        try await tours.wait { $0.last?.first == tour }
        try await db.save(Country(id: "fr", name: "République française"))
        try await tours.wait { $0.last?.first?.stops.first?.city?.country.name == "République française" }
    }

    @Test("relationships that lead back to a type are refused with the inverse query", arguments: await Backend.available)
    func cyclesRefused(_ backend: Backend) async throws {
        let db = try await backend.open()
        do {
            try await db.save(Graphs.Person(id: nil, name: "Ann", pets: []))
            Issue.record("a cyclic model was saved")
        } catch let error as ModelError {
            #expect(error.code == .unsupportedModel)
            #expect(error.message.contains("Filter(\\"))
        }
    }
}
