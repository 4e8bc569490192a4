import Foundation
import Testing
@testable import CodableSQLite

#if Macros
@RowCodable
#endif
private struct Snapshot: Codable, Equatable, Sendable {
    var n: Int
    var r: Int   // random(): every read gives a new value, so every read is seen
}

@Suite("Observation: precision and lifetime")
struct ObservationPrecisionTests {
    private func database() throws -> SQLite.Database {
        try TestDatabases.tasksAndOther("precision", rows: "(1, 'a', 0), (2, 'b', 0)")
    }

    @Test func writesToOtherTablesAndColumnsDoNotReadAgain() async throws {
        let db = try database()
        // Not count(*): SQLite reports that as reading every column of the table.
        let open = Collected(db.observe([Snapshot].self, using: "SELECT id AS n, random() AS r FROM tasks WHERE isCompleted = 0"))
        await open.wait { $0.count == 1 }
        try await db.write("INSERT INTO other (note) VALUES ('x')")                 // another table
        try await db.write("UPDATE tasks SET title = 'A' WHERE id = 1")             // a column the query does not read
        try await db.write("UPDATE tasks SET isCompleted = 1 WHERE id = 1")         // one it reads
        await open.wait { $0.last?.map(\.n) == [2] }
        #expect(open.values.count == 2, "read again for unrelated writes: \(open.values)")
    }

    @Test func aQueryOnOneRowIgnoresTheOthers() async throws {
        let db = try ModelFixtures.file()
        let ann = Person("Ann", age: 30)
        let bob = Person("Bob", age: 40)
        try await db.save([ann, bob])
        let query = db.observe(Person.self, id: ann.id).makeQuery()
        query.start()
        #expect(try await query.next()??.name == "Ann")
        let before = query.readCount
        try await db.save(Person("Bob", age: 41, id: bob.id))   // another row
        try await db.save(Person("Ann", age: 31, id: ann.id))   // this row
        let updated = try await query.next()
        #expect(updated??.age == 31)
        #expect(query.readCount == before + 1, "read \(query.readCount - before) times")
        query.cancel()
    }

    private struct Failure: Error {}

    @Test func writesOfARolledBackSavepointDoNotReadAgain() async throws {
        let db = try database()
        let query = db.observe([Snapshot].self, using: "SELECT id AS n, random() AS r FROM other").makeQuery()
        query.start()
        #expect(try await query.next()?.isEmpty == true)
        let before = query.readCount
        try await db.write { _ in
            try db.write("INSERT INTO tasks (title) VALUES ('c')")      // commits, but not in `other`
            #expect(throws: Failure.self) {
                try db.inTransaction { _ in
                    try db.write("INSERT INTO other VALUES (5, 'gone')")
                    throw Failure()
                }
            }
        }
        try await db.write("INSERT INTO other VALUES (6, 'kept')")     // the barrier: it must be read
        #expect(try await query.next()?.map(\.n) == [6])
        #expect(query.readCount == before + 1, "read \(query.readCount - before) times")
        query.cancel()
    }

    @Test func observingAndCancellingTenThousandTimesLeavesNothingBehind() async throws {
        let db = try database()
        let observation = db.observe(Int.self, using: "SELECT count(*) FROM tasks")
        func round(_ count: Int) async throws {
            for _ in 0..<count {
                var iterator = observation.makeAsyncIterator()
                #expect(try await iterator.next() == 2)
            }   // each iterator goes away here
        }
        try await round(1_000)
        let before = TestDatabases.residentBytes()
        try await round(9_000)
        await eventually { db.observations.observerCount == 0 }
        await eventually { !db.observations.isTrackingChanges }
        let after = TestDatabases.residentBytes()
        try await db.write("INSERT INTO tasks (title) VALUES ('c')")
        // The hooks come off the writer shortly after the last observer leaves.
        await eventually { (try? db.withWriter { $0.tracker == nil }) == true }
        try TestDatabases.expectResidentGrowth(since: before, below: 16 << 20, measuredAt: after)
    }

    @Test func noObservationKeepsTheDatabaseAlive() async throws {
        weak var weakDatabase: SQLite.Database?
        var collected: Collected<Int?>?
        do {
            let db = try database()
            weakDatabase = db
            collected = Collected(db.observe(Int.self, using: "SELECT count(*) FROM tasks"))
            await collected?.wait { $0 == [2] }
        }
        await eventually { weakDatabase == nil }
        await collected?.waitForEnd()
        #expect(collected?.error == nil)
    }
}
