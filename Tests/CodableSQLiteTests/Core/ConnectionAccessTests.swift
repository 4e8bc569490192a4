import Foundation
import Testing
@testable import CodableSQLite

@Suite("Core: closure-scoped connections")
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

    @Test func writeClosureIsOneTransaction() throws {
        let db = try accounts()
        try db.write { conn in
            try conn.write("UPDATE account SET balance = balance - 30 WHERE id = 1")
            try conn.write("UPDATE account SET balance = balance + 30 WHERE id = 2")
        }
        #expect(try db.read("SELECT balance FROM account ORDER BY id").map { $0["balance"] } == [.integer(70), .integer(30)])
        // A failure in the middle leaves nothing behind.
        #expect(throws: SQLite.Error.self) {
            try db.write { conn in
                try conn.write("UPDATE account SET balance = balance + 500 WHERE id = 2")
                try conn.write("UPDATE account SET balance = balance - 500 WHERE id = 1")   // CHECK fails
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
    func readClosureRefusesWrites(kind: String) throws {
        let db = kind == "memory" ? try TestDatabases.memory() : try TestDatabases.file()
        try db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY)")
        try expectMisuse {
            try db.read { conn in try conn.write("INSERT INTO t VALUES (1)") }
        }
        try expectMisuse {
            try db.read { conn in try conn.read("INSERT INTO t VALUES (1)") }
        }
        #expect(try db.read("SELECT count(*) AS n FROM t")[0]["n"] == .integer(0))
    }

    @Test func aConnectionUsedAfterItsClosureThrows() throws {
        let db = try accounts()
        let escaped = try db.read { $0 }
        try expectMisuse { try escaped.read("SELECT 1") }
        let escapedWriter = try db.write { $0 }
        try expectMisuse { try escapedWriter.write("DELETE FROM account") }
        #expect(try db.read("SELECT count(*) AS n FROM account")[0]["n"] == .integer(2))
    }

    @Test func callsOnTheDatabaseInsideTheClosureJoinIt() throws {
        let db = try ModelFixtures.file()
        let person = Person("Ann", age: 30)
        #expect(throws: SQLite.Error.self) {
            try db.write { conn in
                try db.save(person)                                        // the model layer, same transaction
                try conn.write("INSERT INTO nowhere VALUES (1)")            // fails: everything rolls back
            }
        }
        #expect(try db.count(Person.self) == 0)
        try db.write { _ in try db.save(person) }
        let names = try db.read { _ in try db.get(Person.self).map(\.name) }
        #expect(names == ["Ann"])
    }

    @Test func asyncForms() async throws {
        let db = try accounts()
        let moved = try await db.write { conn in
            try conn.write("UPDATE account SET balance = balance - 1 WHERE id = 1")
            return conn.changes
        }
        #expect(moved == 1)
        let total = try await db.read { conn in try conn.read("SELECT sum(balance) AS s FROM account")[0]["s"]?.intValue }
        #expect(total == 99)
        let rows = try await db.write { conn in try conn.execute(raw: "DELETE FROM account WHERE id = 2; SELECT count(*) AS n FROM account;") }
        #expect(rows == [["n": .integer(1)]])
    }
}
