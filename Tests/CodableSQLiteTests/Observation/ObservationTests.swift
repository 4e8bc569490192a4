import Foundation
import Testing
@testable import CodableSQLite

#if Macros
@RowCodable
#endif
private struct TaskRow: Codable, Equatable, Sendable {
    var id: Int
    var title: String
    var isCompleted: Bool
}

@Suite("Observation: live queries")
struct ObservationTests {
    private func tasks() throws -> SQLite.Database {
        try TestDatabases.tasksAndOther("observe", rows: "(1, 'a', 0), (2, 'b', 1)")
    }

    @Test func firstTheCurrentValueThenOneValuePerCommit() async throws {
        let db = try tasks()
        let open = Collected(db.observe([TaskRow].self, using: "SELECT * FROM tasks WHERE isCompleted = 0 ORDER BY id"))
        await open.wait { $0.count == 1 }
        #expect(open.values.first?.map(\.title) == ["a"])
        try await db.write("INSERT INTO tasks (id, title) VALUES (3, 'c')")
        await open.wait { $0.last?.count == 2 }
        try await db.write("UPDATE tasks SET isCompleted = 1 WHERE id = 1")
        await open.wait { $0.last?.map(\.title) == ["c"] }
        #expect(open.values.map { $0.map(\.id) } == [[1], [1, 3], [3]])
    }

    @Test func singleValuesAndArgumentsAsTheDecoderReturnsThem() async throws {
        let db = try tasks()
        let count = Collected(db.observe(Int.self, using: "SELECT count(*) FROM tasks WHERE id > :d", arguments: ["d": .integer(1)]))
        await count.wait { $0 == [1] }
        try await db.write("DELETE FROM tasks WHERE id = 2")
        await count.wait { $0.last == 0 }
        let missing = Collected(db.observe(TaskRow.self, using: "SELECT * FROM tasks WHERE id = 9"))
        await missing.wait { $0.count == 1 }
        #expect(missing.values == [nil])
    }

    @Test func aRolledBackTransactionNeverNotifies() async throws {
        let db = try tasks()
        let count = Collected(db.observe(Int.self, using: "SELECT count(*) FROM tasks"))
        await count.wait { $0 == [2] }
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await db.write { _ in
                try db.write("INSERT INTO tasks (id, title) VALUES (10, 'x')")
                throw Refused()
            }
        }
        try await db.write("INSERT INTO tasks (id, title) VALUES (11, 'y')")
        await count.wait { $0.last == 3 }
        #expect(count.values == [2, 3])   // never 3 from the rolled-back insert, never a repeat
    }

    @Test func aTransactionOfTenThousandWritesIsOneValue() async throws {
        let db = try tasks()
        let count = Collected(db.observe(Int.self, using: "SELECT count(*) FROM tasks"))
        await count.wait { $0 == [2] }
        try await db.write { _ in
            for id in 100..<10_100 {
                try db.write("INSERT INTO tasks (id, title) VALUES (?, 't')", arguments: [.integer(Int64(id))])
            }
        }
        await count.wait { $0.last == 10_002 }
        #expect(count.values == [2, 10_002])
    }

    @Test func noBlindSpots() async throws {
        let db = try tasks()
        try await db.execute(raw: """
            CREATE TABLE pairs (k TEXT PRIMARY KEY, v INTEGER) WITHOUT ROWID;
            CREATE TABLE parent (id INTEGER PRIMARY KEY);
            CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent(id) ON DELETE CASCADE);
            CREATE TABLE audit (n INTEGER);
            CREATE TRIGGER tasks_audit AFTER INSERT ON tasks BEGIN INSERT INTO audit VALUES (new.id); END;
            INSERT INTO parent VALUES (1); INSERT INTO child VALUES (1, 1), (2, 1);
            """)
        let all = Collected(db.observe(Int.self, using: "SELECT count(*) FROM tasks"))
        let pairs = Collected(db.observe(Int.self, using: "SELECT count(*) FROM pairs"))
        let children = Collected(db.observe(Int.self, using: "SELECT count(*) FROM child"))
        let audit = Collected(db.observe(Int.self, using: "SELECT count(*) FROM audit"))
        await all.wait { $0 == [2] }
        await pairs.wait { $0 == [0] }
        await children.wait { $0 == [2] }
        await audit.wait { $0 == [0] }

        try await db.write("DELETE FROM tasks")                                   // the truncate optimisation
        await all.wait { $0.last == 0 }
        try await db.write("INSERT INTO pairs VALUES ('a', 1)")                   // WITHOUT ROWID
        await pairs.wait { $0.last == 1 }
        try await db.write("DELETE FROM parent WHERE id = 1")                     // ON DELETE CASCADE
        await children.wait { $0.last == 0 }
        try await db.write("INSERT INTO tasks (id, title) VALUES (5, 'e')")       // and a trigger
        await audit.wait { $0.last == 1 }
        await all.wait { $0.last == 1 }
        try await db.write("INSERT OR REPLACE INTO tasks (id, title) VALUES (5, 'E'), (6, 'f')")
        await all.wait { $0.last == 2 }
        try await db.write("INSERT INTO tasks (id, title) VALUES (6, 'g') ON CONFLICT (id) DO UPDATE SET title = 'G'")
        let titles = Collected(db.observe([String].self, using: "SELECT title FROM tasks ORDER BY id"))
        await titles.wait { $0.last == ["E", "G"] }
        try await db.execute(raw: "UPDATE tasks SET title = 'H' WHERE id = 6; UPDATE tasks SET title = 'I' WHERE id = 5;")
        await titles.wait { $0.last == ["I", "H"] }
    }

    @Test func modelSavesInsideATransactionNotify() async throws {
        let db = try ModelFixtures.file()
        try await db.save(Person("Ann", age: 30))
        let adults = Collected(db.observe(Filter(\Person.age, is: .greater(than: 17)).sort(by: \.name)))
        await adults.wait { $0.last?.map(\.name) == ["Ann"] }
        try await db.write { _ in
            try db.save(Person("Bob", age: 40))
            try db.save(Person("Cid", age: 10))
        }
        await adults.wait { $0.last?.map(\.name) == ["Ann", "Bob"] }
        #expect(adults.values.count == 2)
    }

    @Test func modelForms() async throws {
        let db = try ModelFixtures.file()
        let ann = Person("Ann", age: 30)
        let everyone = Collected(db.observe(Person.self))
        let minors = Collected(db.observe(count: Filter(\Person.age, is: .less(than: 18))))
        let one = Collected(db.observe(Person.self, id: ann.id))
        await everyone.wait { $0 == [[]] }
        await minors.wait { $0 == [0] }
        await one.wait { $0 == [nil] }
        try await db.save(ann)
        await one.wait { $0.last??.name == "Ann" }
        await everyone.wait { $0.last?.count == 1 }
        try await db.save(Person("Kid", age: 9))
        await minors.wait { $0.last == 1 }
        try await db.delete(ann)
        await one.wait { $0.count == 3 && $0.last == .some(nil) }
        await everyone.wait { $0.last?.map(\.name) == ["Kid"] }
    }

    #if Macros
    @RowCodable
    #endif
    struct Ticket: Model, Equatable, Sendable { var id: Int; var title: String }

    /// An integer id is the row's rowid: an UPDATE that changes it reports only the new rowid, and
    /// the observer of the old id must still hear that its value is gone (and the observer of the
    /// new id that it arrived).
    @Test func anIntegerIDThatChangesIsSeenByBothObservers() async throws {
        let db = try ModelFixtures.file()
        try await db.save([Ticket(id: 1, title: "one"), Ticket(id: 2, title: "two")])
        let old = Collected(db.observe(Ticket.self, id: 1))
        let new = Collected(db.observe(Ticket.self, id: 7))
        await old.wait { $0 == [Ticket(id: 1, title: "one")] }
        await new.wait { $0 == [nil] }
        try await db.write("UPDATE \"Ticket\" SET id = 7 WHERE id = 1")
        await old.wait { $0.last == .some(nil) }
        await new.wait { $0.last == Ticket(id: 7, title: "one") }
        #expect(old.values.last == .some(nil))
        #expect(new.values.last == Ticket(id: 7, title: "one"))
    }

    @Test func aDroppedTableEndsTheObservationWithTheError() async throws {
        let db = try tasks()
        let count = Collected(db.observe(Int.self, using: "SELECT count(*) FROM other"))
        await count.wait { $0 == [0] }
        try await db.execute(raw: "DROP TABLE other")
        await count.waitForEnd()
        #expect((count.error as? SQLite.Error)?.message.contains("no such table") == true)
        #expect(try !db.tables().contains("other"))
    }

    @Test func schemaChangesRunWhileObserved() async throws {
        let db = try tasks()
        let titles = Collected(db.observe([String].self, using: "SELECT title FROM tasks ORDER BY id"))
        await titles.wait { $0 == [["a", "b"]] }
        try await db.execute(raw: """
            ALTER TABLE tasks ADD COLUMN note TEXT;
            ALTER TABLE tasks RENAME COLUMN note TO remark;
            ALTER TABLE tasks DROP COLUMN remark;
            ALTER TABLE other RENAME TO other2;
            DROP TABLE other2;
            DELETE FROM tasks WHERE id = 2;
            """)
        #expect(try db.columns(in: "tasks").map(\.name) == ["id", "title", "isCompleted"])
        #expect(try db.tables() == ["tasks"])
        await titles.wait { $0.last == ["a"] }
    }

    @Test func observingSelectOneWorks() async throws {
        let db = try tasks()
        let one = Collected(db.observe(Int.self, using: "SELECT 1"))
        await one.wait { $0 == [1] }
        try await db.write("INSERT INTO tasks (id, title) VALUES (7, 'g')")
        #expect(one.values == [1])
    }

    @Test func anotherDatabaseObjectOnTheSameFileIsSeen() async throws {
        let path = TestDatabases.temporaryPath("shared")
        let db = try SQLite.Database(path: path)
        try await db.execute(raw: "CREATE TABLE t (n INTEGER)")
        let count = Collected(db.observe(Int.self, using: "SELECT count(*) FROM t"))
        await count.wait { $0 == [0] }
        let other = try SQLite.Database(path: path)
        let started = Date()
        try await other.write("INSERT INTO t VALUES (1)")
        await count.wait { $0.last == 1 }
        // 50 ms polling; sanitized builds under the whole suite's load are several times slower.
        #expect(Date().timeIntervalSince(started) < (TestDatabases.isSanitized ? 12 : 2), "seen after \(Date().timeIntervalSince(started)) s")
    }

    @Test func anotherProcessIsSeen() async throws {
        let path = TestDatabases.temporaryPath("process")
        let db = try SQLite.Database(path: path)
        try await db.execute(raw: "CREATE TABLE t (n INTEGER)")
        let count = Collected(db.observe(Int.self, using: "SELECT count(*) FROM t"))
        await count.wait { $0 == [0] }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [path, "INSERT INTO t VALUES (1); INSERT INTO t VALUES (2);"]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        await count.wait { $0.last == 2 }
    }

    @Test func aSlowConsumerGetsTheNewestValue() async throws {
        let db = try tasks()
        let observation = db.observe(Int.self, using: "SELECT count(*) FROM tasks")
        var iterator = observation.makeAsyncIterator()
        #expect(try await iterator.next() == 2)
        for id in 20..<70 {   // 50 commits while nobody reads
            try await db.write("INSERT INTO tasks (id, title) VALUES (?, 'x')", arguments: [.integer(Int64(id))])
        }
        var latest: Int?? = nil
        while latest != .some(52) {
            latest = try await iterator.next()
        }
        #expect(latest == .some(52))
    }

    @Test func endingTheLoopRemovesEverything() async throws {
        let db = try tasks()
        for _ in 0..<3 {
            let count = Collected(db.observe(Int.self, using: "SELECT count(*) FROM tasks"))
            await count.wait { $0.count == 1 }
            count.stop()
            await count.waitForEnd()
        }
        await eventually { db.observations.observerCount == 0 }
        await eventually { !db.observations.isTrackingChanges }
        try await db.write("INSERT INTO tasks (id, title) VALUES (30, 'z')")
        // The hooks come off the writer shortly after the last observer leaves.
        await eventually { (try? db.withWriter { $0.tracker == nil }) == true }
    }
}
