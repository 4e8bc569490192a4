import Foundation
import Testing
@testable import CodableSQLite

@Suite("Observation: change batches")
struct ChangeBatchTests {
    @Test func rowidsPerCommitOfAnSQLTable() async throws {
        let db = try TestDatabases.file("batches")
        try await db.execute(raw: "CREATE TABLE tasks (id INTEGER PRIMARY KEY, title TEXT); CREATE TABLE other (n);")
        let batches = Batches(db.changes(in: "tasks"))   // live from here: no waiting needed
        try await db.write("INSERT INTO tasks VALUES (1, 'a'), (2, 'b')")
        try await db.write("INSERT INTO other VALUES (1)")                      // another table: no batch
        try await db.write { _ in
            try db.write("UPDATE tasks SET title = 'B' WHERE id = 2")
            try db.write("DELETE FROM tasks WHERE id = 1")
        }
        try await db.write("DELETE FROM tasks")                                   // no WHERE
        await eventually { batches.values.count == 3 }
        #expect(batches.values == [
            ChangeBatch(inserted: [1, 2], updated: [], deleted: [], isComplete: true),
            ChangeBatch(inserted: [], updated: [2], deleted: [1], isComplete: true),
            ChangeBatch(inserted: [], updated: [], deleted: [2], isComplete: true),
        ])
    }

    @Test func idsPerCommitOfAModel() async throws {
        let db = try ModelFixtures.file()
        let ann = Person("Ann", age: 30)
        let bob = Person("Bob", age: 40)
        let batches = Batches(db.changes(to: Person.self))   // before the table exists
        try await db.save(ann)
        try await db.save([Person("Ann", age: 31, id: ann.id), bob])
        try await db.delete(with: Filter(\Person.age, is: .greater(than: 35)))
        try await db.write("DELETE FROM \"Person\"")
        await eventually { batches.values.count == 4 }
        #expect(batches.values.map(\.inserted) == [[ann.id], [bob.id], [], []])
        #expect(batches.values.map(\.updated) == [[], [ann.id], [], []])
        #expect(batches.values.map(\.deleted) == [[], [], [bob.id], [ann.id]])
        #expect(batches.values.allSatisfy { $0.isComplete })
    }

    private struct Failure: Error {}

    /// Runs `body` in a nested transaction that then throws, so that it rolls back. (Not
    /// `#expect(throws:)`: two of them in one closure ran the first one's closure twice.)
    private static func rolledBack(_ db: SQLite.Database, _ body: () throws -> Void) {
        do {
            try db.inTransaction { _ in
                try body()
                throw Failure()
            }
        } catch is Failure {
        } catch {
            Issue.record(error)
        }
    }

    /// A `tasks` table with rows 1, 2 and 3, and its change batches.
    private func tasks(_ name: String) async throws -> (SQLite.Database, Batches<Int64>) {
        let db = try TestDatabases.file(name)
        try await db.execute(raw: "CREATE TABLE tasks (id INTEGER PRIMARY KEY, title TEXT); INSERT INTO tasks VALUES (1, 'a'), (2, 'b'), (3, 'c');")
        return (db, Batches(db.changes(in: "tasks")))
    }

    @Test func aRolledBackNestedTransactionLeavesNoRowsInTheBatch() async throws {
        let (db, batches) = try await tasks("batches-rollback")
        try await db.write { _ in
            try db.write("INSERT INTO tasks VALUES (10, 'x')")
            Self.rolledBack(db) {
                try db.write("INSERT INTO tasks VALUES (11, 'y')")
                try db.write("UPDATE tasks SET title = 'B' WHERE id = 2")
                try db.write("DELETE FROM tasks WHERE id = 3")
            }
        }
        try await db.write("UPDATE tasks SET title = 'A' WHERE id = 1")   // the next batch: the first is complete
        await eventually { batches.values.count == 2 }
        #expect(batches.values.first == ChangeBatch(inserted: [10], updated: [], deleted: [], isComplete: true))
    }

    @Test func aReleasedNestedTransactionIsInTheBatch() async throws {
        let (db, batches) = try await tasks("batches-release")
        try await db.write { _ in
            try db.write("INSERT INTO tasks VALUES (10, 'x')")
            try db.inTransaction { _ in
                try db.write("INSERT INTO tasks VALUES (11, 'y')")
                try db.write("UPDATE tasks SET title = 'B' WHERE id = 2")
                try db.write("DELETE FROM tasks WHERE id = 3")
            }
        }
        await eventually { batches.values.count == 1 }
        #expect(batches.values == [ChangeBatch(inserted: [10, 11], updated: [2], deleted: [3], isComplete: true)])
    }

    @Test func aSavepointRolledBackInsideAnother() async throws {
        let (db, batches) = try await tasks("batches-nested")
        try await db.write { _ in
            try db.write("INSERT INTO tasks VALUES (10, 'x')")
            try db.inTransaction { _ in                                     // released
                try db.write("INSERT INTO tasks VALUES (11, 'y')")
                Self.rolledBack(db) {                                  // rolled back inside it
                    try db.write("INSERT INTO tasks VALUES (12, 'z')")
                    try db.write("DELETE FROM tasks WHERE id = 3")
                }
                try db.write("UPDATE tasks SET title = 'B' WHERE id = 2")
            }
            Self.rolledBack(db) {                                      // rolled back, with a released one inside
                try db.inTransaction { _ in try db.write("INSERT INTO tasks VALUES (13, 'w')") }
                try db.write("UPDATE tasks SET title = 'A' WHERE id = 1")
            }
        }
        await eventually { batches.values.count == 1 }
        #expect(batches.values == [ChangeBatch(inserted: [10, 11], updated: [2], deleted: [], isComplete: true)])
    }

    @Test func savepointsOfRawSQL() async throws {
        let (db, batches) = try await tasks("batches-raw-savepoints")
        try await db.execute(raw: """
            BEGIN; INSERT INTO tasks VALUES (20, 'x');
            SAVEPOINT s; INSERT INTO tasks VALUES (21, 'y'); UPDATE tasks SET title = 'A' WHERE id = 1;
            ROLLBACK TO s; INSERT INTO tasks VALUES (22, 'z'); RELEASE s; COMMIT;
            """)
        try await db.execute(raw: """
            SAVEPOINT "Outer"; DELETE FROM tasks WHERE id = 2;
            SAVEPOINT inner; DELETE FROM tasks WHERE id = 3; ROLLBACK TO INNER;
            RELEASE outer;
            """)
        await eventually { batches.values.count == 2 }
        #expect(batches.values == [
            ChangeBatch(inserted: [20, 22], updated: [], deleted: [], isComplete: true),
            ChangeBatch(inserted: [], updated: [], deleted: [2], isComplete: true),
        ])
    }

    @Test func aRolledBackNestedSaveLeavesNoIDInTheBatch() async throws {
        let db = try ModelFixtures.file()
        try await db.save(Person("Zed", age: 1))   // the table and its triggers exist
        let ann = Person("Ann", age: 30)
        let batches = Batches(db.changes(to: Person.self))
        try await db.write { _ in
            try db.save(ann)
            Self.rolledBack(db) { try db.save(Person("Bob", age: 40)) }
        }
        await eventually { batches.values.count == 1 }
        #expect(batches.values.map(\.inserted) == [[ann.id]])
    }

    @Test func anotherProcessGivesAnIncompleteBatch() async throws {
        let path = TestDatabases.temporaryPath("batches-process")
        let db = try SQLite.Database(path: path)
        try await db.execute(raw: "CREATE TABLE tasks (id INTEGER PRIMARY KEY)")
        let batches = Batches(db.changes(in: "tasks"))
        let other = try SQLite.Database(path: path)
        try await other.write("INSERT INTO tasks VALUES (7)")
        await eventually { batches.values.count >= 1 }
        #expect(batches.values.first?.isComplete == false)
    }

    @Test func droppingTheSequenceRemovesItsTriggers() async throws {
        let db = try ModelFixtures.file()
        try await db.save(Person("Ann", age: 30))
        do {
            let sequence = db.changes(to: Person.self)
            _ = sequence
            let triggers = try db.withWriter { try $0.execute("SELECT count(*) AS n FROM temp.sqlite_master WHERE type = 'trigger'") }
            #expect(triggers.first?["n"] == .integer(3))
        }
        await eventually { db.observations.observerCount == 0 }
        await eventually {
            (try? db.withWriter { try $0.execute("SELECT count(*) AS n FROM temp.sqlite_master WHERE type = 'trigger'") })?.first?["n"] == .integer(0)
        }
        try await db.save(Person("Bob", age: 1))   // writes work without the function's triggers
        #expect(try await db.count(Person.self) == 2)
    }
}
