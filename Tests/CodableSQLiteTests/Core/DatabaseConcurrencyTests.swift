import Dispatch
import Foundation
import Testing
@testable import CodableSQLite

@Suite("Core: concurrency")
struct DatabaseConcurrencyTests {
    /// 8 tasks write and read for about two seconds (and at least 3 rounds each, however slow the
    /// machine: a sanitizer on a loaded machine once gave each task only one); the final count is
    /// exact and nobody sees SQLITE_BUSY.
    @Test func concurrentTasksWriteAndReadWithExactCounts() async throws {
        let db = try TestDatabases.file("tasks")
        try await db.execute(raw: "CREATE TABLE t (task INTEGER, n INTEGER)")
        let deadline = Date().addingTimeInterval(2)
        let written = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var count = 0
                    while Date() < deadline || count < 3 {
                        try await db.write("INSERT INTO t VALUES (?, ?)", arguments: [.integer(Int64(task)), .integer(Int64(count))])
                        count += 1
                        let mine = try await db.read("SELECT count(*) AS n FROM t WHERE task = ?", arguments: [.integer(Int64(task))])
                        #expect(mine[0]["n"] == .integer(Int64(count)))  // reads see committed writes
                    }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(written >= 24)
        #expect(try await db.read("SELECT count(*) AS n FROM t")[0]["n"] == .integer(Int64(written)))
    }

    /// Synchronous calls from 8 threads at once, mixing single writes, transactions and reads.
    @Test func synchronousCallsFromEightThreads() throws {
        let db = try TestDatabases.file("threads")
        try db.execute(raw: "CREATE TABLE t (thread INTEGER, n INTEGER)")
        let failures = LockedBox<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            do {
                for round in 0..<50 {
                    if round % 2 == 0 {
                        try db.write("INSERT INTO t VALUES (?, ?)", arguments: [.integer(Int64(thread)), .integer(Int64(round))])
                    } else {
                        try db.inTransaction { _ in
                            try db.write("INSERT INTO t VALUES (?, ?)", arguments: [.integer(Int64(thread)), .integer(Int64(round))])
                            let inside = try db.read("SELECT count(*) AS n FROM t WHERE thread = ?", arguments: [.integer(Int64(thread))])
                            if inside[0]["n"] != .integer(Int64(round + 1)) { throw SQLite.Error(code: .error, message: "stale read") }
                        }
                    }
                    _ = try db.read("SELECT count(*) FROM t")
                }
            } catch {
                failures.update { $0.append("\(thread): \(error)") }
            }
        }
        #expect(failures.value.isEmpty, "\(failures.value)")
        #expect(try db.read("SELECT count(*) AS n FROM t")[0]["n"] == .integer(400))
    }

    @Test func twoDatabasesOnOneFileShareDataWithoutBusyErrors() throws {
        let path = TestDatabases.temporaryPath("shared")
        let first = try SQLite.Database(path: path)
        let second = try SQLite.Database(path: path)
        try first.execute(raw: "CREATE TABLE t (x)")
        DispatchQueue.concurrentPerform(iterations: 4) { index in
            let db = index % 2 == 0 ? first : second
            for value in 0..<25 { _ = try? db.write("INSERT INTO t VALUES (?)", arguments: [.integer(Int64(value))]) }
        }
        #expect(try second.read("SELECT count(*) AS n FROM t")[0]["n"] == .integer(100))
    }

    @Test func asyncCallsOfEveryKind() async throws {
        let db = try TestDatabases.file()
        try await db.execute(raw: "CREATE TABLE t (x)")
        try await db.write("INSERT INTO t VALUES (:x)", arguments: ["x": 1])
        try await db.write("INSERT INTO t VALUES (?)", arguments: [.integer(2)])
        #expect(try await db.read("SELECT sum(x) AS s FROM t") == [["s": .integer(3)]])
        #expect(try await db.read("SELECT x FROM t WHERE x = ?", arguments: [.integer(2)]) == [["x": .integer(2)]])
    }

    @Test func cancelledTaskDoesNotRunItsStatement() async throws {
        let db = try TestDatabases.memory()
        try await db.execute(raw: "CREATE TABLE t (x)")
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await db.write("INSERT INTO t VALUES (1)")
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try await db.read("SELECT count(*) AS n FROM t") == [["n": .integer(0)]])
    }
}
