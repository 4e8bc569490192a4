import Foundation
import Testing
@testable import CodableSQLite

@Suite("Core: executing statements")
struct StatementExecutionTests {
    @Test func executeRawRunsEveryStatementAndReturnsTheLastRows() throws {
        for db in try TestDatabases.both() {
            let rows = try db.execute(raw: """
                CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT); -- a comment
                CREATE INDEX t_name ON t(name);
                INSERT INTO t VALUES (1, 'a'), (2, 'b');
                SELECT name FROM t ORDER BY id;
                """)
            #expect(rows == [["name": .text("a")], ["name": .text("b")]])
            #expect(try db.read("SELECT name FROM sqlite_schema WHERE type = 'index'") == [["name": .text("t_name")]])
        }
    }

    @Test func executeRawOfOnlyCommentsAndWhitespaceDoesNothing() throws {
        let db = try TestDatabases.memory()
        #expect(try db.execute(raw: "  -- nothing\n  /* still nothing */ ") == [])
    }

    @Test func executeRawStopsAtTheFirstFailureKeepingEarlierStatements() throws {
        let db = try TestDatabases.memory()
        let error = #expect(throws: SQLite.Error.self) {
            try db.execute(raw: "CREATE TABLE t (x); INSERT INTO t VALUES (1); INSERT INTO nope VALUES (2); INSERT INTO t VALUES (3);")
        }
        #expect(error?.message == "no such table: nope")
        #expect(error?.sql?.hasPrefix("INSERT INTO nope") == true)
        #expect(try db.read("SELECT x FROM t") == [["x": .integer(1)]])
    }

    @Test func namedArgumentsBindEveryPrefix() throws {
        let db = try TestDatabases.memory()
        let rows = try db.read("SELECT :a AS a, @b AS b, $c AS c", arguments: ["a": 1, "b": "two", "c": 3.5])
        #expect(rows == [["a": .integer(1), "b": .text("two"), "c": .double(3.5)]])
    }

    @Test func argumentKeysMayCarryTheirPrefix() throws {
        let db = try TestDatabases.memory()
        #expect(try db.read("SELECT :a AS a", arguments: [":a": 7]) == [["a": .integer(7)]])
    }

    @Test func positionalArguments() throws {
        let db = try TestDatabases.memory()
        #expect(try db.read("SELECT ? + ? AS sum", arguments: [.integer(1), .integer(2)]) == [["sum": .integer(3)]])
    }

    @Test func writeAndReadWithNamedArguments() throws {
        for db in try TestDatabases.both() {
            try db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
            try db.write("INSERT INTO t VALUES (:id, :name)", arguments: ["id": .integer(1), "name": .text("a")])
            let rows: [SQLiteRow] = try db.read("SELECT * FROM t WHERE id = :id", arguments: ["id": .integer(1)])
            #expect(rows[0]["name"] == .text("a"))
        }
    }

    @Test func writeReturnsRowsOfReturningClauses() throws {
        let db = try TestDatabases.memory()
        try db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
        let rows = try db.write("INSERT INTO t (name) VALUES (:name) RETURNING id", arguments: ["name": "a"])
        #expect(rows == [["id": .integer(1)]])
    }

    @Test func parameterWithoutArgumentBindsNull() throws {
        let db = try TestDatabases.memory()
        #expect(try db.read("SELECT :missing IS NULL AS missing", arguments: [:]) == [["missing": .integer(1)]])
    }

    @Test func duplicateColumnNamesKeepTheLeftmost() throws {
        let db = try TestDatabases.memory()
        #expect(try db.read("SELECT 1 AS x, 2 AS x") == [["x": .integer(1)]])
    }

    @Test func valuesRoundTripThroughEveryStorageClass() throws {
        let db = try TestDatabases.memory()
        try db.execute(raw: "CREATE TABLE v (value)")
        let megabyte = Data((0..<1_048_576).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let values: [SQLite.Value] = [
            .null, .integer(.min), .integer(.max), .integer(0), .double(-0.5), .double(.infinity), .double(-.infinity),
            .double(.greatestFiniteMagnitude), .text(""), .text("héllo 🎉\u{0}after nul"), .data(Data()), .data(megabyte),
        ]
        for value in values {
            try db.write("DELETE FROM v")
            try db.write("INSERT INTO v VALUES (?)", arguments: [value])
            #expect(try db.read("SELECT value FROM v")[0]["value"] == value)
        }
    }

    @Test func emptyBlobReadsBackAsEmptyDataNotNull() throws {
        let db = try TestDatabases.memory()
        try db.execute(raw: "CREATE TABLE v (value BLOB)")
        try db.write("INSERT INTO v VALUES (:v)", arguments: ["v": .data(Data())])
        #expect(try db.read("SELECT value, typeof(value) AS type FROM v") == [["value": .data(Data()), "type": .text("blob")]])
        try db.write("INSERT INTO v VALUES (zeroblob(0))")
        #expect(try db.read("SELECT value FROM v")[1]["value"] == .data(Data()))
    }

    @Test func emptyStringStaysText() throws {
        let db = try TestDatabases.memory()
        #expect(try db.read("SELECT typeof(?) AS type", arguments: [.text("")]) == [["type": .text("text")]])
    }

    @Test func statementsAreCachedAndStillCorrectAfterSchemaChanges() throws {
        let db = try TestDatabases.file()
        try db.execute(raw: "CREATE TABLE t (a); INSERT INTO t VALUES (1)")
        #expect(try db.read("SELECT * FROM t") == [["a": .integer(1)]])
        try db.execute(raw: "ALTER TABLE t ADD COLUMN b DEFAULT 2")
        #expect(try db.read("SELECT * FROM t") == [["a": .integer(1), "b": .integer(2)]])
    }

    @Test func readRejectsStatementsThatWriteOnEveryKindOfDatabase() throws {
        for db in try TestDatabases.both() {
            try db.execute(raw: "CREATE TABLE t (x)")
            let error = #expect(throws: SQLite.Error.self) { try db.read("INSERT INTO t VALUES (1)") }
            #expect(error?.code == .misuse)
            #expect(try db.read("SELECT count(*) AS n FROM t") == [["n": .integer(0)]])
        }
    }

    @Test func readRunsPragmasThatReportButNotPragmasThatWrite() throws {
        for db in try TestDatabases.both() {
            try db.execute(raw: "CREATE TABLE t (x)")
            #expect(try db.read("PRAGMA user_version") == [["user_version": .integer(0)]])
            #expect(try db.read("PRAGMA main.table_info(t)").map { $0["name"] } == [.text("x")])
            #expect(try db.read("PRAGMA integrity_check(1)") == [["integrity_check": .text("ok")]])
            for writing in ["PRAGMA user_version = 5", "PRAGMA user_version(5)", "PRAGMA main.user_version (5)"] {
                let error = #expect(throws: SQLite.Error.self, "\(writing)") { try db.read(writing) }
                #expect(error?.code == .misuse)
            }
            #expect(try db.userVersion == 0)
        }
    }
}
