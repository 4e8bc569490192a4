import Dispatch
import Foundation
import Observation
import Testing
@testable import CodableSQLite

@Suite("Observation: callbacks and @Observable values")
struct CallbackAndLiveTests {
    @Test func theCallbackGetsTheCurrentRowsThenEachChangeUntilCancelled() async throws {
        let db = try TestDatabases.file("callback")
        try await db.execute(raw: "CREATE TABLE tasks (id INTEGER PRIMARY KEY, title TEXT); INSERT INTO tasks VALUES (1, 'a');")
        let seen = Locked<[Int]>([])
        let queue = DispatchQueue(label: "test.callback")
        let token = db.observe(rowsOf: "SELECT * FROM tasks").sink(queue: queue) { rows in
            dispatchPrecondition(condition: .onQueue(queue))
            seen.withLock { $0.append(rows.count) }
        }
        await eventually { seen.withLock { $0 } == [1] }
        try await db.write("INSERT INTO tasks VALUES (2, 'b')")
        await eventually { seen.withLock { $0 } == [1, 2] }
        token.cancel()
        try await db.write("INSERT INTO tasks VALUES (3, 'c')")
        await eventually { db.observations.observerCount == 0 }
        #expect(seen.withLock { $0 } == [1, 2])
    }

    @Test func decodedRowsAndBadSQL() async throws {
        struct Row: Codable, Sendable { var id: Int }
        let db = try TestDatabases.file("callback-decoded")
        try await db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (5);")
        let ids = Locked<[[Int]]>([])
        let token = db.observe([Row].self, using: "SELECT id FROM t").sink(queue: DispatchQueue(label: "q")) { rows in
            ids.withLock { $0.append(rows.map(\.id)) }
        }
        await eventually { ids.withLock { $0 } == [[5]] }
        _ = token
        // SQL that cannot run ends the observation with its error, given to onError.
        let failure = Locked<(any Error)?>(nil)
        let failing = db.observe(rowsOf: "SELECT * FROM nowhere").sink(queue: .global(), onError: { error in failure.withLock { $0 = error } }) { _ in
            Issue.record("no rows for SQL that cannot run")
        }
        await eventually { failure.withLock { $0 } != nil }
        #expect(failure.withLock { $0 } is SQLite.Error)
        _ = failing
    }

    @MainActor @Test func aLiveValueFollowsTheDatabase() async throws {
        let db = try ModelFixtures.file()
        try await db.save(Person("Ann", age: 30))
        let live = LiveValue(initial: [], observation: db.observe(Filter(\Person.age, is: .greater(than: 17)).sort(by: \.name)))
        await eventually { live.isLoaded }
        #expect(live.value.map(\.name) == ["Ann"])
        try await db.save(Person("Bob", age: 40))
        await eventually { live.value.count == 2 }
        #expect(live.value.map(\.name) == ["Ann", "Bob"])
        #expect(live.error == nil)
        // Observation tracking sees the change.
        let changed = Locked(false)
        withObservationTracking { _ = live.value } onChange: { changed.withLock { $0 = true } }
        try await db.save(Person("Cid", age: 50))
        await eventually { changed.withLock { $0 } }
    }
}
