#if Postgres
import Foundation
import Testing
import CodableSQLite
@testable import CodablePostgres

/// What only PostgreSQL has to show about relationships: its own column types and constraints,
/// concurrent graph saves from two processes, a failure in the middle of a graph, and copying
/// graphs over from SQLite. (The behaviour both engines share is in `RelationshipsOnBothBackendsTests`.)
@Suite("PostgreSQL: relationships", .serverShare, .needsPostgres, .hangLimit(minutes: 3))
struct PostgresRelationshipTests {
    typealias Movie = Graphs.Movie
    typealias Actor = Graphs.Actor
    typealias Studio = Graphs.Studio
    typealias Country = Graphs.Country
    typealias City = Graphs.City
    typealias Stop = Graphs.Stop
    typealias Tour = Graphs.Tour

    @Test("tables use PostgreSQL's types: foreign keys typed like the targets' ids, ordered link tables")
    func schema() async throws {
        let db = try await TestServer.shared.freshDatabase()
        try await db.save(Graphs.movies)
        let columns = try await db.handle.session.rows("""
            SELECT table_name::text || '.' || column_name::text || ' ' || data_type::text FROM information_schema.columns \
            WHERE table_schema = current_schema() AND table_name IN ('Movie', 'Movie.cast') ORDER BY 1
            """).map { try $0.decode(String.self) }
        #expect(columns.contains("Movie.studio bigint"))
        #expect(columns.contains("Movie.cast.owner uuid"))
        #expect(columns.contains("Movie.cast.target text"))
        #expect(columns.contains("Movie.cast.position integer"))
        let constraints = try await db.handle.session.rows("""
            SELECT conrelid::regclass::text || ' ' || pg_get_constraintdef(oid) FROM pg_constraint \
            WHERE contype = 'f' AND conrelid IN ('"Movie"'::regclass, '"Movie.cast"'::regclass) ORDER BY 1
            """).map { try $0.decode(String.self) }
        #expect(constraints.contains { $0.hasPrefix("\"Movie\" FOREIGN KEY (studio) REFERENCES \"Studio\"(id) ON DELETE SET NULL") }, "\(constraints)")
        #expect(constraints.filter { $0.hasPrefix("\"Movie.cast\"") && $0.hasSuffix("ON DELETE CASCADE") }.count == 2, "\(constraints)")
        // psql sees the links, in order.
        let links = try await db.handle.session.rows("""
            SELECT string_agg(target, ',' ORDER BY position) FROM "Movie.cast" WHERE owner = '1f6a3c1e-0000-4000-8000-000000000001'
            """).map { try $0.decode(String.self) }
        #expect(links == ["keanu,carrie"])
        await db.close()
    }

    @Test("two processes saving films that share performers and labels, in opposite orders: no deadlock, no lost link")
    func twoProcessesSavingGraphs() async throws {
        let url = try await TestServer.shared.freshDatabaseURL()
        let binary = TestServer.workerBinary
        // The tables first, so that the processes race on rows rather than on creating them.
        let db = try await Postgres.Database(url: url)
        struct Performer: Model, Sendable { var id: String; var name: String }
        struct Label: Model, Sendable { var id: String; var name: String }
        struct Film: UUIDModel, Sendable { let id: UUID; var worker: String; var number: Int; var label: Label?; var cast: [Performer] }
        try await db.save(Film(id: UUID(), worker: "setup", number: 0, label: nil, cast: []))
        async let first = TestServer.run([binary, url, "100", "first", "graph"])
        async let second = TestServer.run([binary, url, "100", "second", "graph"])
        let (one, two) = try await (first, second)
        #expect(one.status == 0 && one.output.contains("saved 100"), "\(one.output)")
        #expect(two.status == 0 && two.output.contains("saved 100"), "\(two.output)")
        #expect(try await db.count(Film.self) == 201)
        #expect(try await db.count(Performer.self) == 100)
        #expect(try await db.count(Label.self) == 3)
        // Every film has exactly the performers it was saved with, in order.
        let pool = (0..<100).map { String(format: "p%03d", $0) }
        for film in try await db.get(with: Filter(\Film.worker, is: .notEqual(to: "setup"))) {
            let ordered = film.worker == "first" ? pool : pool.reversed()
            #expect(film.cast.map(\.id) == (0..<40).map { ordered[(film.number * 7 + $0) % 100] }, "\(film.worker) \(film.number)")
            #expect(film.label != nil)
        }
        await db.close()
    }

    @Test("a statement failing in the middle of a graph save rolls the whole call back; the database goes on")
    func failureInTheMiddleOfAGraph() async throws {
        let db = try await TestServer.shared.freshDatabase()
        try await db.save(City(id: nil, name: "Nice", country: Country(id: "fr", name: "France")))
        try await db.execute("ALTER TABLE \"City\" ADD CONSTRAINT no_rome CHECK (name <> 'Rome')")
        let tours = [
            Tour(id: nil, name: "ok", stops: [Stop(id: nil, city: City(id: nil, name: "Paris", country: Country(id: "fr", name: "France")), note: "")]),
            Tour(id: nil, name: "bad", stops: [Stop(id: nil, city: City(id: nil, name: "Rome", country: Country(id: "it", name: "Italy")), note: "")]),
        ]
        do {
            try await db.save(tours)
            Issue.record("a graph with a refused city was saved")
        } catch let error as Postgres.Error {
            #expect(error.sqlState == "23514", "\(error)")   // check_violation
        }
        #expect(try await db.count(Tour.self) == 0)
        #expect(try await db.count(Stop.self) == 0)
        #expect(try await db.count(City.self) == 1)
        #expect(try await db.count(Country.self) == 1)
        try await db.save(tours[0])
        #expect(try await db.get(Tour.self).first?.stops.first?.city?.name == "Paris")
        await db.close()
    }

    @Test("a transaction whose statement failed is not reported committed; a savepoint lets it go on")
    func failedStatementInATransaction() async throws {
        let db = try await TestServer.shared.freshDatabase()
        let release = try await db.save(Graphs.Release(id: nil, studio: Studio(id: nil, name: "A24"), crew: []))
        // Deleting the studio fails (the release refers to it) and PostgreSQL aborts the
        // transaction: COMMIT would roll back without an error, so the library throws instead.
        do {
            try await db.inTransaction { tx in
                try await tx.save(Actor(id: "lost", name: "Lost"))
                do { try await tx.delete(release.studio) } catch let error as ModelError { #expect(error.code == .deleteDenied) }
            }
            Issue.record("a transaction PostgreSQL rolled back was reported committed")
        } catch let error as Postgres.Error {
            #expect(error.sqlState == "25P02", "\(error)")
            #expect(error.message.contains("savepoint"))
        }
        #expect(try await db.get(Actor.self, id: "lost") == nil)
        // In a savepoint, the failure is rolled back alone and the transaction commits.
        try await db.inTransaction { tx in
            try await tx.save(Actor(id: "kept", name: "Kept"))
            _ = try? await tx.inTransaction { inner in try await inner.delete(release.studio) }
            try await tx.save(Actor(id: "also", name: "Also"))
        }
        #expect(try await db.count(Actor.self) == 2)
        // A savepoint whose body catches its own failure: rolled back alone, the failure thrown
        // out of it, and the transaction goes on.
        try await db.inTransaction { tx in
            let outcome: Int? = try? await tx.inTransaction { inner in
                do { try await inner.delete(release.studio) } catch {}
                return 1
            }
            #expect(outcome == nil)
            try await tx.save(Actor(id: "third", name: "Third"))
        }
        #expect(try await db.count(Actor.self) == 3)
        #expect(try await db.count(Studio.self) == 1)
        await db.close()
    }

    @Test("a table created inside a transaction that holds a lock it needs fails with a clear error, not a hang")
    func schemaPreparationBlockedByTheCallersTransaction() async throws {
        let db = try await TestServer.shared.freshDatabase()
        // The transaction writes Studio; Release's table refers to Studio, so creating it needs a
        // lock that conflicts with the transaction's, on a connection of its own.
        // The lock wait shortened from 10 s to 1 s, so that the test does not wait for nothing.
        let started = ContinuousClock.now
        do {
            try await Postgres.Database.$schemaLockWait.withValue(.seconds(1)) {
                try await db.inTransaction { tx in
                    try await tx.save(Studio(id: nil, name: "A24"))
                    try await tx.save(Graphs.Release(id: nil, studio: Studio(id: nil, name: "B"), crew: []))
                }
            }
            Issue.record("the first save of Release in a transaction that wrote Studio succeeded")
        } catch let error as Postgres.Error {
            #expect(error.sqlState == "55P03", "\(error)")
            #expect(error.message.contains("Release"))
            #expect(error.message.contains("waited 1.0 seconds"), "\(error.message)")
        }
        // Failed rather than hung: at the lock limit, far from the 60 s statement limit.
        #expect(ContinuousClock.now - started < .seconds(TestWait.scaled(TestWait.seconds)))
        // Outside a transaction it works, and then inside one too.
        try await db.save(Graphs.Release(id: nil, studio: Studio(id: nil, name: "B"), crew: []))
        try await db.inTransaction { tx in
            try await tx.save(Studio(id: nil, name: "C"))
            try await tx.save(Graphs.Release(id: nil, studio: Studio(id: nil, name: "D"), crew: []))
        }
        #expect(try await db.count(Graphs.Release.self) == 2)
        await db.close()
    }

    @Test("copy brings graphs over from SQLite: related values, links in order, assigned ids kept")
    func copyGraphs() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("copy-graph-\(UUID().uuidString).sqlite").path
        let sqlite = try SQLite.Database(path: path)
        let saved = try await sqlite.save(Graphs.movies)
        try await sqlite.save(Actor(id: "solo", name: "In no movie"))
        let db = try await TestServer.shared.freshDatabase()
        let copied = try await db.copy([Actor.self, Movie.self], from: sqlite)
        #expect(copied == ["Actor": 5, "Movie": 3])
        #expect(try await db.get(with: Filter<Movie>().sort(by: \.title)) == saved.sorted { $0.title < $1.title })
        #expect(try await db.count(Studio.self) == 2)
        // Again: nothing changes; ids PostgreSQL assigns continue after the copied ones.
        try await db.copy([Actor.self, Movie.self], from: sqlite)
        #expect(try await db.count(Actor.self) == 5)
        let studioIDs = saved.compactMap { $0.studio?.id }
        #expect(try await db.save(Studio(id: nil, name: "New")).id == (studioIDs.max() ?? 0) + 1)
        await db.close()
    }
}
#endif
