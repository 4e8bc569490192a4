import Foundation
import Testing
@testable import CodableSQLite

/// A query that runs for many seconds unless it is interrupted (and then ends, should a failing
/// test leave it running).
private let endlessQuery = """
    WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)
    SELECT count(*) AS n FROM (SELECT x FROM c LIMIT 200000000)
    """

@Suite("Core: cancellation and waiting without blocking")
struct CancellationTests {
    /// Waits (polling, with a deadline) until `condition` holds.
    private func waitUntil(seconds: Double = 30, _ condition: () -> Bool) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < deadline else { throw CancellationTestTimeout() }
            try await Task.sleep(nanoseconds: 2_000_000)
        }
    }

    private struct CancellationTestTimeout: Error {}

    /// A task running `endlessQuery` in a `read` closure, returned once the query has started.
    private func startEndlessRead(on db: SQLite.Database) async throws -> Task<[SQLiteRow], any Error> {
        let started = Locked(false)
        let task = Task {
            try await db.read { conn -> [SQLiteRow] in
                started.withLock { $0 = true }
                return try conn.read(endlessQuery)
            }
        }
        do {
            try await waitUntil { started.withLock { $0 } }
        } catch {
            task.cancel()
            throw error
        }
        return task
    }

    @Test(arguments: ["memory", "file"])
    func cancellingARunningQueryInterruptsIt(kind: String) async throws {
        let db = kind == "memory" ? try TestDatabases.memory() : try TestDatabases.file()
        let task = try await startEndlessRead(on: db)
        defer { task.cancel() }
        try await Task.sleep(nanoseconds: 20_000_000)  // well inside the statement
        let cancelledAt = Date()
        task.cancel()
        let result = await task.result
        let latency = Date().timeIntervalSince(cancelledAt)
        #expect(throws: CancellationError.self) { try result.get() }
        // The statement alone would run for minutes; 50 ms is the goal. A loaded CI machine gets
        // slack: under a sanitizer, with the PostgreSQL suites starting a server on the same 2 cores.
        #expect(latency < 2, "cancellation took \(latency) s")
        // The database is still usable, on the same connection.
        #expect(try await db.read("SELECT 1 AS one")[0]["one"] == .integer(1))
    }

    @Test func cancellingAWriteRollsItBack() async throws {
        let db = try TestDatabases.file()
        try await db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY)")
        let started = Locked(false)
        let task = Task {
            try await db.write { conn -> [SQLiteRow] in
                try conn.write("INSERT INTO t VALUES (1)")
                started.withLock { $0 = true }
                return try conn.read(endlessQuery)
            }
        }
        defer { task.cancel() }
        try await waitUntil { started.withLock { $0 } }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try await db.read("SELECT count(*) AS n FROM t")[0]["n"] == .integer(0))
        try await db.write("INSERT INTO t VALUES (2)")
        #expect(try await db.read("SELECT id FROM t") == [["id": .integer(2)]])
    }

    @Test func aTaskCancelledBeforeItStartsRunsNothing() async throws {
        let db = try TestDatabases.file()
        try await db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY)")
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await db.write("INSERT INTO t VALUES (1)")
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try await db.read("SELECT count(*) AS n FROM t")[0]["n"] == .integer(0))
    }

    @Test func aTaskWaitingForAConnectionLeavesTheQueueWhenCancelled() async throws {
        var configuration = SQLite.Database.Configuration(path: TestDatabases.temporaryPath())
        configuration.maximumReaderCount = 1
        let db = try SQLite.Database(configuration)
        let holder = try await startEndlessRead(on: db)
        defer { holder.cancel() }
        // The only reader is busy: this read waits, suspended.
        let waiter = Task { try await db.read("SELECT 1 AS one") }
        try await Task.sleep(nanoseconds: 50_000_000)
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        holder.cancel()
        await #expect(throws: CancellationError.self) { try await holder.value }
        // The reader went back to the pool: a new read gets it.
        #expect(try await db.read("SELECT 2 AS two")[0]["two"] == .integer(2))
    }

    @Test func manyMoreAsyncReadsThanReadersAllComplete() async throws {
        var configuration = SQLite.Database.Configuration(path: TestDatabases.temporaryPath())
        configuration.maximumReaderCount = 2
        let db = try SQLite.Database(configuration)
        try await db.execute(raw: "CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1), (2), (3);")
        let sums = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    try await db.read { conn in
                        // Holds the connection for a moment, so that most tasks have to wait.
                        _ = try conn.read("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 2000) SELECT count(*) FROM c")
                        return try conn.read("SELECT sum(n) AS s FROM t")[0]["s"]?.intValue ?? -1
                    }
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(sums.count == 200)
        #expect(sums.allSatisfy { $0 == 6 })
    }

    @Test func syncAndAsyncWritersShareTheWriterInArrivalOrder() async throws {
        let db = try TestDatabases.file()
        try await db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, source TEXT)")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<50 {
                group.addTask { try await db.write("INSERT INTO t (source) VALUES ('async')") }
                if index % 5 == 0 {
                    group.addTask {
                        // A synchronous call from a task is what a legacy caller would do; it runs
                        // on a thread of its own here so that it may block.
                        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                            Thread {
                                continuation.resume(with: Result { try db.write("INSERT INTO t (source) VALUES ('sync')") }.map { _ in })
                            }.start()
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await db.read("SELECT count(*) AS n FROM t WHERE source = 'async'")[0]["n"] == .integer(50))
        #expect(try await db.read("SELECT count(*) AS n FROM t WHERE source = 'sync'")[0]["n"] == .integer(10))
    }
}
