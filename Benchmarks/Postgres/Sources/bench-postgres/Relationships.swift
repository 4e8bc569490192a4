// Scenario G on PostgreSQL: save, then load, N movies with 5 actors each drawn from a pool of 2N
// and, for three in four, a studio from a pool of 100 (the SQLite benchmark's scenario G data).
// CodablePostgres: plain structs, `save(movies)` and `get(Movie.self)`. Fluent: hand-declared
// models with `@OptionalParent` and `@Siblings` through a pivot, created in one transaction in
// chunks, loaded with `with(\.$studio).with(\.$cast)`.
import CodablePostgres
import FluentKit
import FluentPostgresDriver
import Foundation

enum Graph {
    typealias Movie = MovieGraph.Movie

    /// What both contenders must load: each movie's title, studio and cast (as a set: Fluent's
    /// siblings keep no order).
    static func summary(_ movies: [(id: UUID, title: String, studio: String?, cast: [String])]) -> [String] {
        movies.map { "\($0.id) \($0.title) \($0.studio ?? "-") \($0.cast.sorted().joined(separator: ","))" }.sorted()
    }
}

final class FluentGraphActor: FluentKit.Model, @unchecked Sendable {  // each instance is used by one task at a time
    static let schema = "fluent_actor"
    @ID(custom: "id", generatedBy: .user) var id: String?
    @Field(key: "name") var name: String
    init() {}
    init(id: String, name: String) { self.id = id; self.name = name }
}

final class FluentGraphStudio: FluentKit.Model, @unchecked Sendable {  // each instance is used by one task at a time
    static let schema = "fluent_studio"
    @ID(custom: "id", generatedBy: .user) var id: Int64?
    @Field(key: "name") var name: String
    init() {}
    init(id: Int64, name: String) { self.id = id; self.name = name }
}

final class FluentGraphCast: FluentKit.Model, @unchecked Sendable {  // each instance is used by one task at a time
    static let schema = "fluent_movie_cast"
    @ID(key: .id) var id: UUID?
    @Parent(key: "movie_id") var movie: FluentGraphMovie
    @Parent(key: "actor_id") var actor: FluentGraphActor
    @Field(key: "position") var position: Int
    init() {}
}

final class FluentGraphMovie: FluentKit.Model, @unchecked Sendable {  // each instance is used by one task at a time
    static let schema = "fluent_movie"
    @ID(custom: "id", generatedBy: .user) var id: UUID?
    @Field(key: "title") var title: String
    @Field(key: "release_date") var releaseDate: Date
    @OptionalParent(key: "studio_id") var studio: FluentGraphStudio?
    @Siblings(through: FluentGraphCast.self, from: \.$movie, to: \.$actor) var cast: [FluentGraphActor]
    @Field(key: "tags") var tags: [String]
    init() {}

    static func createTables(on db: any FluentKit.Database) async throws {
        for table in [FluentGraphCast.schema, schema, FluentGraphActor.schema, FluentGraphStudio.schema] { try? await db.schema(table).delete() }
        try await db.schema(FluentGraphStudio.schema).field("id", .int64, .identifier(auto: false)).field("name", .string, .required).create()
        try await db.schema(FluentGraphActor.schema).field("id", .string, .identifier(auto: false)).field("name", .string, .required).create()
        try await db.schema(schema).field("id", .uuid, .identifier(auto: false)).field("title", .string, .required)
            .field("release_date", .datetime, .required).field("studio_id", .int64, .references(FluentGraphStudio.schema, "id"))
            .field("tags", .array(of: .string), .required).create()
        try await db.schema(FluentGraphCast.schema).id()
            .field("movie_id", .uuid, .required, .references(schema, "id", onDelete: .cascade))
            .field("actor_id", .string, .required, .references(FluentGraphActor.schema, "id", onDelete: .cascade))
            .field("position", .int, .required).create()
    }
}

/// Save and load times, median of `repetitions`, and what was loaded.
struct GraphTimings {
    var save: Double
    var load: Double
    var summary: [String]
}

func graphCodablePostgres(url: String, movies: [Graph.Movie], repetitions: Int) async throws -> GraphTimings {
    var saves: [Double] = [], loads: [Double] = [], summary: [String] = []
    for _ in 0..<repetitions {
        let db = try await Postgres.Database(url: url)
        for table in ["Movie.cast", "Movie", "Actor", "Studio"] { try await db.execute("DROP TABLE IF EXISTS \"\(table)\"") }
        _ = try await db.count(Graph.Movie.self)  // creates the tables outside the timing, as Fluent's schema below
        saves.append(try await measure { _ = try await db.save(movies) })
        var loaded: [Graph.Movie] = []
        loads.append(try await measure { loaded = try await db.get(Graph.Movie.self) })
        summary = Graph.summary(loaded.map { ($0.id, $0.title, $0.studio?.name, $0.cast.map(\.id)) })
        await db.close()
    }
    return GraphTimings(save: saves.sorted()[repetitions / 2], load: loads.sorted()[repetitions / 2], summary: summary)
}

func graphFluent(url: String, movies: [Graph.Movie], repetitions: Int) async throws -> GraphTimings {
    var saves: [Double] = [], loads: [Double] = [], summary: [String] = []
    let databases = Databases(threadPool: NIOThreadPool.singleton, on: MultiThreadedEventLoopGroup.singleton)
    databases.use(try .postgres(url: url, maxConnectionsPerEventLoop: 2), as: .psql)
    guard let db = databases.database(logger: Logger(label: "bench"), on: MultiThreadedEventLoopGroup.singleton.any()) else {
        throw FluentError.noResults
    }
    for _ in 0..<repetitions {
        try await FluentGraphMovie.createTables(on: db)
        saves.append(try await measure {
            try await db.transaction { tx in
                var studios: [Int64: FluentGraphStudio] = [:], actors: [String: FluentGraphActor] = [:]
                for movie in movies {
                    if let studio = movie.studio, let id = studio.id { studios[id] = FluentGraphStudio(id: id, name: studio.name) }
                    for actor in movie.cast { actors[actor.id] = FluentGraphActor(id: actor.id, name: actor.name) }
                }
                try await Array(studios.values).create(on: tx)
                let allActors = Array(actors.values)
                for start in stride(from: 0, to: allActors.count, by: 1_000) { try await allActors[start..<min(start + 1_000, allActors.count)].create(on: tx) }
                let models = movies.map { movie -> FluentGraphMovie in
                    let model = FluentGraphMovie()
                    model.id = movie.id; model.title = movie.title; model.releaseDate = movie.releaseDate
                    model.$studio.id = movie.studio?.id; model.tags = movie.tags
                    return model
                }
                for start in stride(from: 0, to: models.count, by: 1_000) { try await models[start..<min(start + 1_000, models.count)].create(on: tx) }
                var links: [FluentGraphCast] = []
                for movie in movies {
                    for (position, actor) in movie.cast.enumerated() {
                        let link = FluentGraphCast()
                        link.$movie.id = movie.id; link.$actor.id = actor.id; link.position = position
                        links.append(link)
                    }
                }
                for start in stride(from: 0, to: links.count, by: 1_000) { try await links[start..<min(start + 1_000, links.count)].create(on: tx) }
            }
        })
        var loaded: [FluentGraphMovie] = []
        loads.append(try await measure { loaded = try await FluentGraphMovie.query(on: db).with(\.$studio).with(\.$cast).all() })
        summary = Graph.summary(loaded.map { ($0.id ?? UUID(), $0.title, $0.studio?.name, $0.cast.compactMap(\.id)) })
    }
    await databases.shutdownAsync()
    return GraphTimings(save: saves.sorted()[repetitions / 2], load: loads.sorted()[repetitions / 2], summary: summary)
}
