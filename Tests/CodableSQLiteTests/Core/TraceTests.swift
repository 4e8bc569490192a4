import Foundation
import Testing
@testable import CodableSQLite

@Suite("Core: tracing statements")
struct TraceTests {
    /// The statements a handler saw, in order.
    private final class Seen: Sendable {
        let statements = Locked<[String]>([])
        var all: [String] { statements.withLock { $0 } }
        func handler() -> @Sendable (String) -> Void {
            { sql in self.statements.withLock { $0.append(sql) } }
        }
    }

    @Test func aHandlerSeesEveryStatementOfEveryConnectionOnlyWhileItIsSet() throws {
        for db in try TestDatabases.both() {
            try db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
            let decoder = SQLite.Decoder(db)
            // Statements run before a handler is set, on the writer and on a reader, are not reported.
            try db.write("INSERT INTO t (name) VALUES (?)", arguments: [.text("before")])
            _ = try decoder.decode(String.self, using: "SELECT name FROM t WHERE id = 1")

            let seen = Seen()
            db.trace(seen.handler())
            try db.write("INSERT INTO t (name) VALUES (?)", arguments: [.text("traced")])
            #expect(try decoder.decode(String.self, using: "SELECT name FROM t WHERE id = :id", arguments: ["id": .integer(2)]) == "traced")
            #expect(try decoder.decode(String.self, using: "SELECT name FROM t WHERE id = 99") == nil)
            #expect(seen.all == [
                "INSERT INTO t (name) VALUES (?)",
                "SELECT name FROM t WHERE id = :id",
                "SELECT name FROM t WHERE id = 99",
            ])

            db.trace(nil)
            _ = try decoder.decode(String.self, using: "SELECT name FROM t WHERE id = 1")
            #expect(seen.all.count == 3)

            // Set again, on connections that ran statements untraced meanwhile.
            let again = Seen()
            db.trace(again.handler())
            _ = try decoder.decode(String.self, using: "SELECT name FROM t WHERE id = 1")
            db.trace(nil)
            #expect(again.all == ["SELECT name FROM t WHERE id = 1"])
        }
    }

    @Test func triggersAreNotReportedAsStatements() throws {
        let db = try TestDatabases.memory()
        try db.execute(raw: """
            CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE log (name TEXT);
            CREATE TRIGGER t_log AFTER INSERT ON t BEGIN INSERT INTO log VALUES (new.name); END;
            """)
        let seen = Seen()
        db.trace(seen.handler())
        try db.write("INSERT INTO t (name) VALUES ('a')")
        db.trace(nil)
        #expect(seen.all == ["INSERT INTO t (name) VALUES ('a')"])
        #expect(try db.read("SELECT name FROM log") == [["name": .text("a")]])
    }
}
