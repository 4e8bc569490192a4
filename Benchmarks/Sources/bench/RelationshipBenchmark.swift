import CodableSQLite
import Foundation
import GRDB

/// Scenario G: relationships. Save, then load, N movies with 5 actors each drawn from a pool of 2N
/// (10,000 and 20,000 in a full run), every movie but one in four with a studio from a pool of 100.
///
/// Contenders, each on a new WAL file with `synchronous = NORMAL`:
/// - CodableSQLite models: `db.save(movies)` and `db.get(Movie.self)`, plain structs.
/// - GRDB with hand-declared associations (`belongsTo`, `hasMany(through:)`): records upserted in
///   one transaction, loaded with `including(optional:)` and `including(all:)` into an info struct.
struct RelationshipBenchmark {
    let movies: Int
    let repetitions: Int

    init(settings: Settings) {
        movies = settings.rows < 100_000 ? 2_000 : 10_000
        repetitions = 3
    }

    func run() throws -> String {
        let data = MovieGraph.movies(count: movies)
        var lines = ["", "G: relationships, \(movies) movies × 5 actors from a pool of \(movies * 2), studios from 100 (file database, WAL, median of \(repetitions))"]
        var results: [(String, save: Double, load: Double)] = []
        for (name, measure) in [("CodableSQLite models", measureCodableSQLite), ("GRDB associations", measureGRDB)] {
            var saves: [Double] = []
            var loads: [Double] = []
            for _ in 0..<repetitions {
                let (save, load) = try measure(data)
                saves.append(save)
                loads.append(load)
            }
            results.append((name, saves.sorted()[repetitions / 2], loads.sorted()[repetitions / 2]))
        }
        let reference = results.last
        for result in results {
            lines.append("  " + result.0.padding(toLength: 22, withPad: " ", startingAt: 0)
                + String(format: "save %8.1f ms (%.2fx GRDB)   load %8.1f ms (%.2fx GRDB)",
                         result.save * 1000, result.save / (reference?.save ?? 1), result.load * 1000, result.load / (reference?.load ?? 1)))
        }
        return lines.joined(separator: "\n")
    }

    // MARK: CodableSQLite

    typealias Actor = MovieGraph.Actor
    typealias Studio = MovieGraph.Studio
    typealias Movie = MovieGraph.Movie

    private func measureCodableSQLite(_ movies: [Movie]) throws -> (Double, Double) {
        let path = temporaryDatabasePath("g-codablesqlite")
        defer { removeDatabaseFiles(path) }
        let db = try SQLite.Database(path: path)
        let saveStart = Date()
        try db.save(movies)
        let save = Date().timeIntervalSince(saveStart)
        let loadStart = Date()
        let loaded = try db.get(Movie.self)
        let load = Date().timeIntervalSince(loadStart)
        guard loaded.count == movies.count, loaded.allSatisfy({ $0.cast.count == 5 }) else {
            throw BenchmarkError.verification("G CodableSQLite: loaded \(loaded.count) movies, not \(movies.count) with 5 actors each")
        }
        return (save, load)
    }

    // MARK: GRDB

    struct GActor: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "actor"
        var id: String
        var name: String
    }

    struct GStudio: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "studio"
        var id: Int64
        var name: String
    }

    struct GCastLink: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "movieCast"
        var movieId: UUID
        var position: Int
        var actorId: String
        static let actor = belongsTo(GActor.self)
    }

    struct GMovie: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "movie"
        var id: UUID
        var title: String
        var releaseDate: Date
        var studioId: Int64?
        var tags: [String]
        static let studio = belongsTo(GStudio.self)
        static let castLinks = hasMany(GCastLink.self).order(Column("position"))
        static let cast = hasMany(GActor.self, through: castLinks, using: GCastLink.actor).forKey("cast")
    }

    struct GMovieInfo: Decodable, FetchableRecord {
        var movie: GMovie
        var studio: GStudio?
        var cast: [GActor]
    }

    private func measureGRDB(_ movies: [Movie]) throws -> (Double, Double) {
        let path = temporaryDatabasePath("g-grdb")
        defer { removeDatabaseFiles(path) }
        var configuration = GRDB.Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try pool.write { db in
            try db.execute(sql: """
                CREATE TABLE studio (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
                CREATE TABLE actor (id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL);
                CREATE TABLE movie (id BLOB PRIMARY KEY NOT NULL, title TEXT NOT NULL, releaseDate TEXT NOT NULL,
                    studioId INTEGER REFERENCES studio(id) ON DELETE SET NULL, tags TEXT NOT NULL);
                CREATE TABLE movieCast (movieId BLOB NOT NULL REFERENCES movie(id) ON DELETE CASCADE, position INTEGER NOT NULL,
                    actorId TEXT NOT NULL REFERENCES actor(id) ON DELETE CASCADE, PRIMARY KEY (movieId, position)) WITHOUT ROWID;
                CREATE INDEX movieCast_actorId ON movieCast(actorId);
                """)
        }
        let saveStart = Date()
        try pool.write { db in
            var savedActors = Set<String>()
            var savedStudios = Set<Int64>()
            for movie in movies {
                if let studio = movie.studio, let id = studio.id, savedStudios.insert(id).inserted {
                    try GStudio(id: id, name: studio.name).upsert(db)
                }
                for actor in movie.cast where savedActors.insert(actor.id).inserted {
                    try GActor(id: actor.id, name: actor.name).upsert(db)
                }
                try GMovie(id: movie.id, title: movie.title, releaseDate: movie.releaseDate,
                           studioId: movie.studio?.id, tags: movie.tags).upsert(db)
                try GCastLink.filter(Column("movieId") == movie.id).deleteAll(db)
                for (position, actor) in movie.cast.enumerated() {
                    try GCastLink(movieId: movie.id, position: position, actorId: actor.id).insert(db)
                }
            }
        }
        let save = Date().timeIntervalSince(saveStart)
        let loadStart = Date()
        let loaded = try pool.read { db in
            try GMovie.including(optional: GMovie.studio).including(all: GMovie.cast).asRequest(of: GMovieInfo.self).fetchAll(db)
        }
        let load = Date().timeIntervalSince(loadStart)
        guard loaded.count == movies.count, loaded.allSatisfy({ $0.cast.count == 5 }) else {
            throw BenchmarkError.verification("G GRDB: loaded \(loaded.count) movies, not \(movies.count) with 5 actors each")
        }
        return (save, load)
    }
}
