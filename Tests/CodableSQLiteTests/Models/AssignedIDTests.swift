@testable import CodableSQLite
import Foundation
import Testing

/// Ids the database assigns during a save never take an id another value of the same save gives
/// explicitly (issue 21, defect 1): both values are kept, neither turns into an update of the other.
@Suite("Models: relationship saves assign ids apart from explicit ones")
struct RelationshipAssignedIDTests {
    typealias Movie = Cinema.Movie
    typealias Studio = Cinema.Studio
    typealias City = DeepRelationshipTests.City
    typealias Country = DeepRelationshipTests.Country
    typealias Stop = DeepRelationshipTests.Stop
    typealias Tour = DeepRelationshipTests.Tour
    typealias Playlist = RelationshipEdgeCaseTests.Playlist
    typealias Song = RelationshipEdgeCaseTests.Song

    static var feed: Data { Data("""
    [
      {"id": "1F6A3C1E-0000-4000-8000-0000000000A1", "title": "The Matrix", "releaseDate": 922838400,
       "studio": {"id": null, "name": "Warner Bros."}, "tags": [], "cast": []},
      {"id": "1F6A3C1E-0000-4000-8000-0000000000A2", "title": "Toy Story", "releaseDate": 816998400,
       "studio": {"id": 1, "name": "Pixar"}, "tags": [], "cast": []}
    ]
    """.utf8) }

    static func movie(_ title: String, _ studio: Studio?) -> Movie {
        Movie(id: UUID(), title: title, releaseDate: Date(timeIntervalSince1970: 0), studio: studio, cast: [], tags: [])
    }

    @Test func theIssueScenarioKeepsBothStudios() throws {
        let db = try TestDatabases.file("assigned-ids")
        let movies = try JSONDecoder().decode([Movie].self, from: Self.feed)
        let saved = try db.save(movies)
        #expect(try db.count(Studio.self) == 2)
        let warnerID = try #require(saved[0].studio?.id)
        #expect(warnerID != 1)
        #expect(saved[1].studio == Studio(id: 1, name: "Pixar"))
        #expect(try db.get(Movie.self, id: movies[0].id)?.studio == Studio(id: warnerID, name: "Warner Bros."))
        #expect(try db.get(Movie.self, id: movies[1].id)?.studio == Studio(id: 1, name: "Pixar"))
        #expect(try db.get(with: Filter<Movie>().sort(by: \.title)) == saved.sorted { $0.title < $1.title })
        #expect(try db.checkIntegrity().isEmpty)
    }

    @Test func theExplicitIDListedFirstKeepsBothToo() throws {
        let db = try TestDatabases.memory()
        let movies = [Self.movie("Toy Story", Studio(id: 1, name: "Pixar")), Self.movie("The Matrix", Studio(id: nil, name: "Warner Bros."))]
        let saved = try db.save(movies)
        #expect(try db.count(Studio.self) == 2)
        let warnerID = try #require(saved[1].studio?.id)
        #expect(warnerID != 1)
        #expect(try db.get(Movie.self, id: movies[0].id)?.studio?.name == "Pixar")
        #expect(try db.get(Movie.self, id: movies[1].id)?.studio == Studio(id: warnerID, name: "Warner Bros."))
    }

    @Test func anIDAssignedSkipsTheExplicitIDsOfTheSave() throws {
        let db = try TestDatabases.memory()
        try db.save(Self.movie("Old", Studio(id: nil, name: "Old")))   // id 1
        let saved = try db.save([
            Self.movie("A", Studio(id: nil, name: "New")),
            Self.movie("B", Studio(id: 2, name: "Two")),
            Self.movie("C", Studio(id: 7, name: "Seven")),
            Self.movie("D", Studio(id: 1, name: "Old, renamed")),   // an update of the existing row
        ])
        // SQLite's choice (2, after the stored 1) is claimed by "Two": the next free one.
        #expect(saved[0].studio?.id == 3)
        #expect(try db.get(Studio.self).sorted { ($0.id ?? 0) < ($1.id ?? 0) }.map(\.name) == ["Old, renamed", "Two", "New", "Seven"])
    }

    @Test func idsAssignedDeeperDownAndInToManyListsKeepTheirOwnRows() throws {
        let db = try TestDatabases.memory()
        let france = Country(id: "fr", name: "France")
        let tour = Tour(id: nil, name: "Grand tour", stops: [
            Stop(id: nil, city: City(id: nil, name: "Paris", country: france), note: "first"),
            Stop(id: 1, city: City(id: 1, name: "Lyon", country: france), note: "second"),
        ])
        let saved = try db.save(tour)
        #expect(try db.count(Stop.self) == 2)
        #expect(try db.count(City.self) == 2)
        let first = try #require(saved.stops.first)
        #expect(first.id != nil && first.id != 1)
        #expect(first.city?.id != nil && first.city?.id != 1)
        #expect(try db.get(Tour.self, id: saved.id) == saved)
        #expect(try db.get(City.self, id: 1)?.name == "Lyon")
        #expect(try db.get(Stop.self, id: 1)?.note == "second")

        // A to-many of values whose ids are assigned, the explicit one listed last.
        let playlist = try db.save(Playlist(id: nil, songs: [Song(id: nil, title: "a"), Song(id: nil, title: "b"), Song(id: 2, title: "c")]))
        #expect(try db.count(Song.self) == 3)
        #expect(Set(playlist.songs.compactMap(\.id)).count == 3)
        #expect(try db.get(Playlist.self, id: playlist.id)?.songs.map(\.title) == ["a", "b", "c"])
    }

    @Test func idLessCopiesAreSeparateValuesAndExplicitOnesAreSavedOnce() throws {
        // Value types carry no identity: two id-less copies are two new values (as before);
        // the same explicit id is one row however often it appears.
        let db = try TestDatabases.memory()
        let a24 = Studio(id: nil, name: "A24")
        let pixar = Studio(id: 1, name: "Pixar")
        let saved = try db.save([Self.movie("A", a24), Self.movie("B", pixar), Self.movie("C", a24), Self.movie("D", pixar)])
        #expect(try db.count(Studio.self) == 3)
        let ids = saved.compactMap { $0.studio?.id }
        #expect(ids.count == 4 && ids[1] == 1 && ids[3] == 1)
        #expect(Set([ids[0], ids[2], 1]).count == 3)
    }

    @Test func theLargestIDStillLeavesRoomForAssignedOnes() throws {
        let db = try TestDatabases.memory()
        let saved = try db.save([
            Self.movie("A", Studio(id: nil, name: "New")),
            Self.movie("B", Studio(id: 1, name: "One")),
            Self.movie("C", Studio(id: .max, name: "Max")),
        ])
        #expect(try db.count(Studio.self) == 3)
        let assigned = try #require(saved[0].studio?.id)
        #expect(assigned != 1 && assigned != .max)
        #expect(try db.get(Studio.self, id: assigned)?.name == "New")
    }
}

/// The same rule for models without relationships, saved in one `save([…])`.
@Suite("Models: assigned ids apart from explicit ones")
struct ModelAssignedIDTests {
    @Test func anIDLessNoteNeverTakesTheIDOfAnExplicitOne() throws {
        let db = try ModelFixtures.memory()
        let saved = try db.save([Note(id: nil, text: "new"), Note(id: 1, text: "explicit")])
        #expect(try db.count(Note.self) == 2)
        let assigned = try #require(saved[0].id)
        #expect(assigned != 1)
        #expect(try db.get(Note.self, id: assigned)?.text == "new")
        #expect(try db.get(Note.self, id: 1)?.text == "explicit")
    }

    @Test func updatesAndInsertsMixedStillGetTheNextIDs() throws {
        let db = try ModelFixtures.memory()
        let first = try db.save([Note(id: nil, text: "a"), Note(id: nil, text: "b")])
        #expect(first.map(\.id) == [1, 2])
        // SQLite's choice unless a value of the call claims it: "d" would get 4, which "e" claims.
        let saved = try db.save([Note(id: nil, text: "c"), Note(id: 2, text: "B"), Note(id: nil, text: "d"), Note(id: 4, text: "e")])
        #expect(saved.map(\.id) == [3, 2, 5, 4])
        #expect(try db.get(Note.self).map(\.text) == ["a", "B", "c", "e", "d"])
        // Explicit ids only below the largest stored one: SQLite's own choice, as before.
        let more = try db.save([Note(id: 1, text: "A"), Note(id: nil, text: "f")])
        #expect(more.map(\.id) == [1, 6])
    }

    @Test func theLargestIDStillLeavesRoomForAssignedOnes() throws {
        let db = try ModelFixtures.memory()
        let saved = try db.save([Note(id: nil, text: "a"), Note(id: .max, text: "max"), Note(id: 1, text: "one"), Note(id: nil, text: "b")])
        #expect(try db.count(Note.self) == 4)
        #expect(Set(saved.compactMap(\.id)).count == 4)
        #expect(try db.get(Note.self, id: 1)?.text == "one")
        #expect(try db.get(Note.self, id: .max)?.text == "max")
    }
}
