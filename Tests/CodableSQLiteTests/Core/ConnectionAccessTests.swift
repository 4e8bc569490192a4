import Foundation
import Testing
@testable import CodableSQLite

@Suite("Core: closures on one connection (read { }, write { }, inTransaction { })")
struct ConnectionAccessTests {
    private func accounts() throws -> SQLite.Database {
        let db = try TestDatabases.file()
        try db.execute(raw: """
            CREATE TABLE account (id INTEGER PRIMARY KEY, balance INTEGER NOT NULL CHECK (balance >= 0));
            INSERT INTO account VALUES (1, 100), (2, 0);
            """)
        return db
    }

    /// Expects `body` to throw an ``SQLite/Error`` with the code ``SQLite/ResultCode/misuse``.
    private func expectMisuse<R>(_ body: () throws -> R, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let error = #expect(throws: SQLite.Error.self, sourceLocation: sourceLocation) { try body() }
        #expect(error?.code == .misuse, sourceLocation: sourceLocation)
    }

    @Test func aTransactionClosureIsOneTransaction() throws {
        let db = try accounts()
        try db.inTransaction { tx in
            try tx.write("UPDATE account SET balance = balance - 30 WHERE id = 1")
            try tx.write("UPDATE account SET balance = balance + 30 WHERE id = 2")
        }
        #expect(try db.read("SELECT balance FROM account ORDER BY id").map { $0["balance"] } == [.integer(70), .integer(30)])
        // A failure in the middle leaves nothing behind.
        #expect(throws: SQLite.Error.self) {
            try db.inTransaction { tx in
                try tx.write("UPDATE account SET balance = balance + 500 WHERE id = 2")
                try tx.write("UPDATE account SET balance = balance - 500 WHERE id = 1")   // CHECK fails
            }
        }
        #expect(try db.read("SELECT balance FROM account ORDER BY id").map { $0["balance"] } == [.integer(70), .integer(30)])
    }

    @Test func readClosureSeesOneSnapshot() throws {
        let db = try accounts()
        let (before, after) = try db.read { conn in
            let before = try conn.read("SELECT sum(balance) AS s FROM account")[0]["s"]
            // Another connection commits meanwhile; this closure's snapshot does not move.
            try db.write("INSERT INTO account VALUES (3, 1000)")
            let after = try conn.read("SELECT sum(balance) AS s FROM account")[0]["s"]
            return (before, after)
        }
        #expect(before == .integer(100))
        #expect(after == .integer(100))
        #expect(try db.read("SELECT sum(balance) AS s FROM account")[0]["s"] == .integer(1100))
    }

    @Test(arguments: ["memory", "file"])
    func readInsideAReadClosureRefusesWrites(kind: String) throws {
        let db = kind == "memory" ? try TestDatabases.memory() : try TestDatabases.file()
        try db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY)")
        try expectMisuse {
            try db.read { snapshot in try snapshot.read("INSERT INTO t VALUES (1)") }
        }
        #expect(try db.read("SELECT count(*) AS n FROM t")[0]["n"] == .integer(0))
    }

    @Test func callsOnTheDatabaseInsideTheClosureJoinIt() throws {
        let db = try ModelFixtures.file()
        let person = Person("Ann", age: 30)
        #expect(throws: SQLite.Error.self) {
            try db.inTransaction { tx in
                try tx.save(person)                                        // the model layer, same transaction
                try tx.write("INSERT INTO nowhere VALUES (1)")              // fails: everything rolls back
            }
        }
        #expect(try db.count(Person.self) == 0)
        try db.inTransaction { tx in try tx.save(person) }
        let names = try db.read { _ in try db.get(Person.self).map(\.name) }
        #expect(names == ["Ann"])
    }

    @Test func asyncForms() async throws {
        let db = try accounts()
        let moved = try await db.write { tx in
            try tx.write("UPDATE account SET balance = balance - 1 WHERE id = 1")
            return try tx.read("SELECT changes() AS n")[0]["n"]?.intValue   // on the same connection
        }
        #expect(moved == 1)
        let total = try await db.read { snapshot in try snapshot.read("SELECT sum(balance) AS s FROM account")[0]["s"]?.intValue }
        #expect(total == 99)
        let rows = try await db.write { tx in try tx.execute(raw: "DELETE FROM account WHERE id = 2; SELECT count(*) AS n FROM account;") }
        #expect(rows == [["n": .integer(1)]])
        // A write made in a read closure waits for the writer and commits on its own.
        try await db.read { snapshot in _ = try snapshot.write("INSERT INTO account VALUES (5, 5)") }
        #expect(try await db.read("SELECT count(*) AS n FROM account")[0]["n"] == .integer(2))
        #expect(rows == [["n": .integer(1)]])
    }
}
