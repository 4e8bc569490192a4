import Foundation
import Testing
@testable import CodableSQLite

@Suite("Core: transactions")
struct TransactionTests {
    private func counted(_ db: SQLite.Database) throws -> Int {
        try db.read("SELECT count(*) AS n FROM t")[0]["n"]?.intValue ?? -1
    }

    @Test func commitsAndReturnsTheBlockValue() throws {
        for db in try TestDatabases.both() {
            try db.execute(raw: "CREATE TABLE t (x)")
            let value = try db.inTransaction { tx in
                #expect(tx === db, "the body's tx is the database itself, inside the transaction")
                try tx.write("INSERT INTO t VALUES (1)")
                return 42
            }
            #expect(value == 42)
            #expect(try counted(db) == 1)
        }
    }

    @Test func errorRollsBackAndIsRethrown() throws {
        struct Failure: Error, Equatable {}
        for db in try TestDatabases.both() {
            try db.execute(raw: "CREATE TABLE t (x)")
            #expect(throws: Failure()) {
                try db.inTransaction { _ in
                    try db.write("INSERT INTO t VALUES (1)")
                    throw Failure()
                }
            }
            #expect(try counted(db) == 0)
        }
    }

    @Test func sqliteErrorInsideRollsBackEverything() throws {
        let db = try TestDatabases.file()
        try db.execute(raw: "CREATE TABLE t (x UNIQUE)")
        #expect(throws: SQLite.Error.self) {
            try db.inTransaction { _ in
                try db.write("INSERT INTO t VALUES (1)")
                try db.write("INSERT INTO t VALUES (1)")
            }
        }
        #expect(try counted(db) == 0)
    }

    @Test func nestedCallsAreSavepoints() throws {
        struct Inner: Error {}
        let db = try TestDatabases.memory()
        try db.execute(raw: "CREATE TABLE t (x)")
        try db.inTransaction { _ in
            try db.write("INSERT INTO t VALUES (1)")
            do {
                try db.inTransaction { _ in
                    try db.write("INSERT INTO t VALUES (2)")
                    throw Inner()
                }
            } catch is Inner {}
            try db.inTransaction { _ in try db.write("INSERT INTO t VALUES (3)") }
        }
        #expect(try db.read("SELECT x FROM t ORDER BY x").map { $0["x"] } == [.integer(1), .integer(3)])
    }

    @Test func callsInsideSeeUncommittedWritesAndDoNotDeadlock() throws {
        let db = try TestDatabases.file()
        try db.execute(raw: "CREATE TABLE t (x)")
        try db.inTransaction { _ in
            try db.write("INSERT INTO t VALUES (1)")
            #expect(try counted(db) == 1)
            try db.execute(raw: "INSERT INTO t VALUES (2)")
            #expect(try db.read("SELECT max(x) AS m FROM t")[0]["m"] == .integer(2))
        }
    }

    @Test func hasOpenTransactionsIsTrueOnlyInside() throws {
        let db = try TestDatabases.memory()
        #expect(!db.hasOpenTransactions)
        let inside = try db.inTransaction { _ in db.hasOpenTransactions }
        #expect(inside)
        #expect(!db.hasOpenTransactions)
    }

    @Test func readersDoNotWaitForAnOpenWriteAndSeeTheLastCommittedState() throws {
        let db = try TestDatabases.file()
        try db.execute(raw: "CREATE TABLE t (x); INSERT INTO t VALUES (1)")
        let inTransaction = DispatchSemaphore(value: 0)
        let readDone = DispatchSemaphore(value: 0)
        let observed = LockedBox<[Int]>([])
        let reader = Thread {
            inTransaction.wait()
            let start = Date()
            let n = (try? db.read("SELECT count(*) AS n FROM t")[0]["n"]?.intValue) ?? -1
            observed.update { $0 = [n, Date().timeIntervalSince(start) < 1 ? 1 : 0] }
            readDone.signal()
        }
        reader.start()
        try db.inTransaction { _ in
            try db.write("INSERT INTO t VALUES (2)")
            inTransaction.signal()
            // The transaction stays open until the other thread has read.
            #expect(readDone.wait(timeout: .now() + 10) == .success)
        }
        #expect(observed.value == [1, 1])
        #expect(try counted(db) == 2)
    }

    @Test func transactionEndedBySQLInsideTheBlockIsReported() throws {
        let db = try TestDatabases.memory()
        try db.execute(raw: "CREATE TABLE t (x)")
        let error = #expect(throws: SQLite.Error.self) {
            try db.inTransaction { _ in
                try db.write("INSERT INTO t VALUES (1)")
                try db.execute(raw: "ROLLBACK")
            }
        }
        #expect(error?.code == .misuse)
        #expect(try counted(db) == 0)
    }

    @Test func aSingleRowDecodeThatLeavesATransactionOpenIsReportedAndRolledBack() throws {
        for db in try TestDatabases.both() {
            try db.execute(raw: "CREATE TABLE t (x)")
            let decoder = SQLite.Decoder(db)
            // BEGIN has no row: the single-row call must still report the transaction it opened.
            for sql in ["BEGIN", "SAVEPOINT s"] {
                let error = #expect(throws: SQLite.Error.self) { try decoder.decode(Int.self, using: sql) }
                #expect(error?.code == .misuse)
                #expect(error?.message.contains("left a transaction open") == true)
            }
            // Nothing stays open: the next write commits on its own, and other connections see it.
            try db.write("INSERT INTO t VALUES (1)")
            #expect(try decoder.decode(Int.self, using: "SELECT count(*) FROM t") == 1)
            #expect(try decoder.decode(Int.self, using: "SELECT x FROM t WHERE x = 2") == nil)
        }
    }

    @Test func nothingRunsInABlockWhoseTransactionSQLiteRolledBack() throws {
        for db in try TestDatabases.both() {
            try db.execute(raw: "CREATE TABLE t (x PRIMARY KEY)")
            try db.write("INSERT INTO t VALUES (1)")
            let error = #expect(throws: SQLite.Error.self) {
                try db.inTransaction { _ in
                    try db.write("INSERT INTO t VALUES (2)")
                    // OR ROLLBACK ends the whole transaction; the block goes on as if it had not.
                    do {
                        try db.write("INSERT OR ROLLBACK INTO t VALUES (1)")
                        Issue.record("the duplicate was inserted")
                    } catch {}
                    try db.write("INSERT INTO t VALUES (3)")
                }
            }
            #expect(error?.code == .misuse)
            #expect(error?.message.contains("already ended") == true)
            #expect(try db.read("SELECT x FROM t ORDER BY x").map { $0["x"] } == [.integer(1)])
            try db.write("INSERT INTO t VALUES (4)")
            #expect(try counted(db) == 2)
        }
    }

    @Test func asyncTransaction() async throws {
        let db = try TestDatabases.file()
        try await db.execute(raw: "CREATE TABLE t (x)")
        let value = try await db.write { _ in
            try db.write("INSERT INTO t VALUES (1)")
            return try db.read("SELECT count(*) AS n FROM t")[0]["n"]?.intValue ?? 0
        }
        #expect(value == 1)
    }
}

/// A value shared between threads in tests.
final class LockedBox<Value>: @unchecked Sendable {  // guarded by `lock`
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value { lock.withLock { stored } }

    func update(_ change: (inout Value) -> Void) { lock.withLock { change(&stored) } }
}
