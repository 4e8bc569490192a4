import Foundation
import Testing
@testable import CodableSQLite

/// Every kind of bad input: a precise error, the database still usable, nothing committed lost.
@Suite("Core: errors")
struct ErrorHandlingTests {
    /// A database with one committed row, to check that failures lose nothing.
    private func seeded(_ db: SQLite.Database) throws -> SQLite.Database {
        try db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE); INSERT INTO t VALUES (1, 'kept')")
        return db
    }

    private func expectIntact(_ db: SQLite.Database) throws {
        #expect(try db.read("SELECT id, name FROM t") == [["id": .integer(1), "name": .text("kept")]])
        try db.write("INSERT INTO t VALUES (2, 'after')")
        #expect(try db.read("SELECT count(*) AS n FROM t") == [["n": .integer(2)]])
    }

    @Test func badSQL() throws {
        for db in try TestDatabases.both().map(seeded) {
            let error = #expect(throws: SQLite.Error.self) { try db.write("INSERT INTO t VALUS (3, 'x')") }
            #expect(error?.code == .error)
            #expect(error?.message.contains("syntax error") == true)
            #expect(error?.sql == "INSERT INTO t VALUS (3, 'x')")
            try expectIntact(db)
        }
    }

    @Test func missingTable() throws {
        for db in try TestDatabases.both().map(seeded) {
            let error = #expect(throws: SQLite.Error.self) { try db.read("SELECT * FROM nope") }
            #expect(error?.code == .error)
            #expect(error?.message == "no such table: nope")
            try expectIntact(db)
        }
    }

    @Test func constraintViolation() throws {
        for db in try TestDatabases.both().map(seeded) {
            let error = #expect(throws: SQLite.Error.self) { try db.write("INSERT INTO t VALUES (1, 'again')") }
            #expect(error?.code == .constraint)
            #expect(error?.code.rawValue == 19)
            #expect(error?.extendedCode == .constraintPrimaryKey)
            #expect(error?.message == "UNIQUE constraint failed: t.id")
            try expectIntact(db)
        }
    }

    @Test func constraintErrorsMatchInCatchPatterns() throws {
        let db = try seeded(TestDatabases.memory())
        var matched: [String] = []
        for sql in ["INSERT INTO t VALUES (5, 'kept')", "INSERT INTO t VALUES (6, NULL)", "INSERT INTO t VALUES (1, 'x')"] {
            do {
                try db.write(sql)
            } catch SQLite.ResultCode.constraintUnique {
                matched.append("unique")
            } catch SQLite.ResultCode.constraintNotNull {
                matched.append("not null")
            } catch SQLite.ResultCode.constraint {
                matched.append("other constraint")
            }
        }
        #expect(matched == ["unique", "not null", "other constraint"])
        try expectIntact(db)
    }

    @Test func unknownArgumentName() throws {
        for db in try TestDatabases.both().map(seeded) {
            let error = #expect(throws: SQLite.Error.self) {
                try db.write("INSERT INTO t VALUES (:id, :name)", arguments: ["id": 3, "nmae": "typo"])
            }
            #expect(error?.code == .range)
            #expect(error?.message.contains("nmae") == true)
            #expect(error?.message.contains(":name") == true)
            try expectIntact(db)
        }
    }

    @Test func wrongNumberOfPositionalArguments() throws {
        let db = try seeded(TestDatabases.memory())
        let error = #expect(throws: SQLite.Error.self) { try db.write("INSERT INTO t VALUES (?, ?)", arguments: [.integer(3)]) }
        #expect(error?.code == .range)
        try expectIntact(db)
    }

    @Test func namedArgumentsForPositionalParameters() throws {
        let db = try seeded(TestDatabases.memory())
        #expect(throws: SQLite.Error.self) { try db.write("INSERT INTO t VALUES (?, ?)", arguments: ["id": 3]) }
        try expectIntact(db)
    }

    @Test func severalStatementsInWriteAreAnErrorNotSilentlyCut() throws {
        let db = try seeded(TestDatabases.memory())
        let error = #expect(throws: SQLite.Error.self) {
            try db.write("INSERT INTO t VALUES (3, 'c'); INSERT INTO t VALUES (4, 'd')")
        }
        #expect(error?.code == .misuse)
        try expectIntact(db)
    }

    @Test func emptySQLIsAnError() throws {
        let db = try TestDatabases.memory()
        #expect(throws: SQLite.Error.self) { try db.write("  ") }
    }

    @Test func pathWhoseFolderDoesNotExist() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-folder-\(UUID())/db.sqlite").path
        let error = #expect(throws: SQLite.Error.self) { try SQLite.Database(path: path) }
        #expect(error?.code == .cannotOpen)
        #expect(error?.message.contains(path) == true)
    }

    @Test func fileThatIsNotADatabase() throws {
        let path = TestDatabases.temporaryPath("not-a-database")
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: SQLite.Error.self) { try SQLite.Database(path: path) }
        #expect(error?.code == .notADatabase)
        #expect(error?.message.contains(path) == true)
        // The file is untouched.
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(repeating: 0x41, count: 4096))
    }

    @Test func readOnlyLocationCannotBeCreated() throws {
        // Tests may run as root, which ignores file permissions; /proc refuses new files for everyone.
        let error = #expect(throws: SQLite.Error.self) { try SQLite.Database(path: "/proc/codablesqlite-\(UUID()).sqlite") }
        #expect(error?.code == .cannotOpen)
    }

    @Test func readOnlyDatabaseRejectsWritesAndKeepsData() throws {
        let path = TestDatabases.temporaryPath("read-only")
        _ = try seeded(SQLite.Database(path: path))
        var configuration = SQLite.Database.Configuration(path: path)
        configuration.isReadOnly = true
        let db = try SQLite.Database(configuration)
        let error = #expect(throws: SQLite.Error.self) { try db.write("INSERT INTO t VALUES (2, 'no')") }
        #expect(error?.code == .readOnly)
        #expect(try db.read("SELECT name FROM t") == [["name": .text("kept")]])
    }

    @Test func transactionLeftOpenBySQLIsRolledBackAndReported() throws {
        for db in try TestDatabases.both().map(seeded) {
            let error = #expect(throws: SQLite.Error.self) { try db.execute(raw: "BEGIN; INSERT INTO t VALUES (9, 'uncommitted')") }
            #expect(error?.code == .misuse)
            #expect(db.hasOpenTransactions == false)
            try expectIntact(db)
        }
    }

    @Test func errorDescriptionNamesCodesMessageAndSQL() throws {
        let db = try seeded(TestDatabases.memory())
        do {
            try db.write("INSERT INTO t VALUES (1, 'x')")
            Issue.record("expected a constraint error")
        } catch {
            let text = "\(error)"
            #expect(text.contains("19"))
            #expect(text.contains("1555"))
            #expect(text.contains("UNIQUE constraint failed: t.id"))
            #expect(text.contains("INSERT INTO t VALUES (1, 'x')"))
            #expect(error.localizedDescription == text)
        }
    }
}
