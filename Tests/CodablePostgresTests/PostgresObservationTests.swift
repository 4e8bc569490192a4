#if Postgres
import Foundation
import Testing
@testable import CodablePostgres

/// What only PostgreSQL's observation has: other app instances and processes, the listening
/// connection's losses, and statements whose rows a notification cannot name.
@Suite("PostgreSQL: observing across app instances", .serverShare, .needsPostgres, .hangLimit(minutes: 3))
struct PostgresObservationTests {
    #if Macros
    @RowCodable
    #endif
    struct Visit: UUIDModel, Equatable, Sendable {
        let id: UUID
        var worker: String
        var number: Int
    }

    @Test("commits by another app instance, by SQL and by another process reach observers")
    func otherInstances() async throws {
        let url = try await TestServer.shared.freshDatabaseURL()
        let observer = try await Postgres.Database(url: url)
        let other = try await Postgres.Database(url: url)
        let everyone = Collected(observer.observe(Visit.self))
        try await everyone.wait { $0.last == [] }
        let batches = Batches(try await observer.changes(to: Visit.self))

        let first = Visit(id: UUID(), worker: "other", number: 1)
        try await other.save(first)                                           // another instance
        try await everyone.wait { $0.last == [first] }
        try await other.execute(#"UPDATE "Visit" SET number = 2 WHERE id = $1::uuid"#, arguments: [.text(first.id.uuidString)])   // SQL, as psql would
        try await everyone.wait { $0.last?.first?.number == 2 }
        try await batches.wait { $0.count == 2 }
        #expect(batches.values == [
            ChangeBatch(inserted: [first.id], updated: [], deleted: [], isComplete: true),
            ChangeBatch(inserted: [], updated: [first.id], deleted: [], isComplete: true),
        ])

        // A second process saving 40 values, one by one and in batches.
        let binary = TestServer.workerBinary
        let counts = Collected(observer.observe(count: Filter(\Visit.worker, is: .equal(to: "process"))))
        try await counts.wait { $0.last == 0 }
        let run = try await TestServer.run([binary, url, "40", "process"])
        #expect(run.status == 0, "\(run.output)")
        try await counts.wait { $0.last == 40 }
        try await everyone.wait { $0.last?.count == 41 }
        await other.close()
        await observer.close()
    }

    @Test("a lost listening connection comes back, and everything observed is read again")
    func listenerLost() async throws {
        let url = try await TestServer.shared.freshDatabaseURL()
        let observer = try await Postgres.Database(url: url)
        let other = try await Postgres.Database(url: url)
        let everyone = Collected(observer.observe(Visit.self))
        try await everyone.wait { $0.last == [] }
        let batches = Batches(try await observer.changes(to: Visit.self))

        // End every other connection to the database (the listening one and the observer's pool:
        // as a server restart would), then commit while they are gone. A read that meets a lost
        // connection is tried again, not ended.
        let admin = try await Postgres.Database(url: url)
        try await admin.execute("""
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
            WHERE datname = current_database() AND pid <> pg_backend_pid()
            """)
        let missed = Visit(id: UUID(), worker: "meanwhile", number: 1)
        var saved = false
        for _ in 0..<8 where !saved { saved = (try? await other.save(missed)) != nil }   // `other`'s pool lost its connection too
        #expect(saved)
        // Seen by the read that follows the resumption (or as its own notification, when
        // listening resumed before the commit); the change sequence says it may have missed rows.
        try await everyone.wait { $0.last == [missed] }
        try await batches.wait { $0.contains { !$0.isComplete && $0.inserted.isEmpty } }
        // And listening goes on.
        let after = Visit(id: UUID(), worker: "after", number: 2)
        try await other.save(after)
        try await everyone.wait { $0.last?.count == 2 }
        await admin.close()
        await other.close()
        await observer.close()
    }

    @Test("a listening connection that stops answering (as behind a dead network) is replaced, and everything observed is read again")
    func silentListeningConnection() async throws {
        let url = try await TestServer.shared.freshDatabaseURL()
        let observer = try await Postgres.Database(url: url)
        observer.listener.heartbeat.withLock { $0 = (.milliseconds(200), .seconds(1)) }
        let other = try await Postgres.Database(url: url)
        let count = Collected(observer.observe(count: Filter<Visit>()))
        try await count.wait { $0.last == 0 }
        // The listening connection's backend stops (SIGSTOP): the socket stays open, nothing
        // answers, and a notification sent to it would never arrive.
        var listening: [Int32] = []
        for _ in 0..<100 where listening.isEmpty {
            listening = try await other.handle.session.rows("""
                SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() \
                AND (query LIKE 'LISTEN%' OR query = 'SELECT 1')
                """).map { try $0.decode(Int32.self) }
            if listening.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
        }
        let backend = try #require(listening.first)
        #expect(kill(backend, SIGSTOP) == 0)
        defer { kill(backend, SIGCONT) }
        try await other.save(Visit(id: UUID(), worker: "while stopped", number: 1))
        // Within the heartbeat's interval and time limit, a new connection listens and the count
        // is read again.
        try await count.wait { $0.last == 1 }
        try await other.save(Visit(id: UUID(), worker: "after", number: 2))
        try await count.wait { $0.last == 2 }
        await other.close()
        await observer.close()
    }

    @Test("statements whose rows a notification cannot name give incomplete batches; junk on the channel is ignored")
    func unnamedRows() async throws {
        let db = try await TestServer.shared.freshDatabase()
        // The table exists before the feed starts: a feed that waits for its table's creation is
        // another path (DecisionsOnBothBackendsTests).
        let first = try await db.save(Visit(id: UUID(), worker: "first", number: -1))
        _ = try await db.delete(first)
        let counts = Collected(db.observe(count: Filter<Visit>()))
        try await counts.wait { $0.last == 0 }
        let batches = Batches(try await db.changes(to: Visit.self))
        try await db.execute("NOTIFY \(ChangeNotifications.channel), 'not json'")
        try await db.execute(#"NOTIFY \#(ChangeNotifications.channel), '{"x": "1", "t": "Visit", "e": "I", "n": "nonsense"}'"#)
        try await db.save((0..<1_500).map { Visit(id: UUID(), worker: "bulk", number: $0) })   // over the 1,000 ids a notification names
        try await counts.wait { $0.last == 1_500 }
        try await db.execute(#"TRUNCATE "Visit""#)
        try await counts.wait { $0.last == 0 }
        try await batches.wait { $0.filter { !$0.isComplete }.count >= 2 }
        #expect(batches.values.allSatisfy { $0.inserted.isEmpty && $0.deleted.isEmpty })
        await db.close()
    }

    @Test("another role, with another search_path and no rights on the library's own objects, writes an observed table")
    func otherRoles() async throws {
        let url = try await TestServer.shared.freshDatabaseURL()
        let observer = try await Postgres.Database(url: url)
        let everyone = Collected(observer.observe(Visit.self))
        try await everyone.wait { $0.last == [] }
        // The table, made by a save (an observation creates none).
        let seed = Visit(id: UUID(), worker: "seed", number: 0)
        try await observer.save(seed)
        try await observer.delete(seed)
        // A role that may only read and write the model's table (as a web app's role would).
        let role = "writer_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
        try await observer.execute("CREATE ROLE \(role) LOGIN PASSWORD 'pw'")
        try await observer.execute(#"GRANT SELECT, INSERT, UPDATE, DELETE ON "Visit" TO \#(role)"#)
        let writer = try await Postgres.Database(url: url.replacingOccurrences(of: "postgres:secret@", with: "\(role):pw@"))
        let visit = Visit(id: UUID(), worker: "other role", number: 1)
        try await writer.save(visit)
        try await everyone.wait { $0.last == [visit] }
        // And one whose search_path does not find the library's table by name.
        try await writer.inTransaction { tx in
            try await tx.execute("SET LOCAL search_path = pg_catalog")
            try await tx.execute(#"UPDATE public."Visit" SET number = 2"#)
        }
        try await everyone.wait { $0.last?.first?.number == 2 }
        await writer.close()
        try await observer.execute("DROP OWNED BY \(role)")
        try await observer.execute("DROP ROLE \(role)")
        await observer.close()
    }

    @Test("the same table in another schema (another tenant's) does not reach this schema's observers")
    func otherSchemas() async throws {
        let url = try await TestServer.shared.freshDatabaseURL()
        let observer = try await Postgres.Database(url: url)
        let batches = Batches(try await observer.changes(to: Visit.self))
        // A role whose own schema comes first in its search_path: its models live there.
        let role = "tenant_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
        try await observer.execute("CREATE ROLE \(role) LOGIN PASSWORD 'pw'")
        try await observer.execute("CREATE SCHEMA \(role) AUTHORIZATION \(role)")
        let tenant = try await Postgres.Database(url: url.replacingOccurrences(of: "postgres:secret@", with: "\(role):pw@"))
        let theirs = Collected(tenant.observe(count: Filter<Visit>()))
        try await theirs.wait { $0.last == 0 }
        try await tenant.save(Visit(id: UUID(), worker: "tenant", number: 1))
        try await theirs.wait { $0.last == 1 }
        // Ours: only our own commit, in our own schema.
        let mine = Visit(id: UUID(), worker: "mine", number: 2)
        try await observer.save(mine)
        // Notifications arrive in commit order: the tenant's commit came first, so had it reached
        // this listener, its batch would be there before ours.
        try await batches.wait { !$0.isEmpty }
        #expect(batches.values.map(\.inserted) == [[mine.id]])
        #expect(try await observer.count(Visit.self) == 1)
        await tenant.close()
        try await observer.execute("DROP SCHEMA \(role) CASCADE")
        try await observer.execute("DROP OWNED BY \(role)")
        try await observer.execute("DROP ROLE \(role)")
        await observer.close()
    }

    @Test("closing the database ends its observations")
    func closing() async throws {
        let db = try await TestServer.shared.freshDatabase()
        let everyone = Collected(db.observe(Visit.self))
        try await everyone.wait { $0.last == [] }
        await db.close()
        try await everyone.waitForEnd()
    }
}
#endif
