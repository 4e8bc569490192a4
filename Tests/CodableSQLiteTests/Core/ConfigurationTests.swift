import Foundation
import Testing
@testable import CodableSQLite

@Suite("Core: configuration and schema")
struct ConfigurationTests {
    @Test func directoryAndFilenameCreateTheFolderAndAddAnExtension() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("codablesqlite-config-\(UUID())/nested")
        let db = try SQLite.Database(SQLite.Database.Configuration(directory: folder, filename: "MyAppData"))
        #expect(db.path == folder.appendingPathComponent("MyAppData.sqlite").path)
        try db.execute(raw: "CREATE TABLE t (x)")
        #expect(FileManager.default.fileExists(atPath: db.path))
        #expect(SQLite.Database.Configuration(directory: folder, filename: "data.db").path.hasSuffix("/data.db"))
    }

    @Test func fileDatabasesReadThroughAMemoryMapUnlessTurnedOff() throws {
        let mapped = try TestDatabases.file("mmap")
        let mapSize = try #require(try mapped.read("PRAGMA mmap_size").first?["mmap_size"]?.intValue)
        // SQLite caps the size at its compile-time maximum, 0 in some builds; Debian's is 2 GB.
        #if os(Linux)
        #expect(mapSize == SQLite.Database.Configuration(path: mapped.path).memoryMapSize)
        #expect(mapSize == 256 << 20)
        #else
        #expect(mapSize <= SQLite.Database.Configuration(path: mapped.path).memoryMapSize)
        #endif
        #expect(try mapped.write("PRAGMA mmap_size").first?["mmap_size"]?.intValue == mapSize)

        var configuration = SQLite.Database.Configuration(path: TestDatabases.temporaryPath("no-mmap"))
        configuration.memoryMapSize = -1   // counts as 0
        let plain = try SQLite.Database(configuration)
        #expect(try plain.read("PRAGMA mmap_size") == [["mmap_size": .integer(0)]])
        #expect(try plain.write("PRAGMA mmap_size") == [["mmap_size": .integer(0)]])

        // Reads through the map see every commit: rows checkpointed into the file, then rows
        // changed again in the WAL, then the file grown.
        for db in [mapped, plain] {
            try db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
            try db.inTransaction { _ in try (1...2_000).forEach { try db.write("INSERT INTO t VALUES (?, ?)", arguments: [.integer(Int64($0)), .text("first \($0)")]) } }
            _ = try db.write("PRAGMA wal_checkpoint(TRUNCATE)")
            #expect(try db.read("SELECT v FROM t WHERE id = 1500") == [["v": .text("first 1500")]])
            _ = try db.write("UPDATE t SET v = 'second ' || id")
            #expect(try db.read("SELECT v FROM t WHERE id = 1500") == [["v": .text("second 1500")]])
            _ = try db.write("PRAGMA wal_checkpoint(TRUNCATE)")
            try db.inTransaction { _ in try (2_001...6_000).forEach { try db.write("INSERT INTO t VALUES (?, ?)", arguments: [.integer(Int64($0)), .text("third \($0)")]) } }
            #expect(try db.read("SELECT count(*) AS n, max(v) AS m FROM t") == [["n": .integer(6_000), "m": .text("third 6000")]])
            #expect(try db.read("SELECT v FROM t WHERE id IN (1500, 5000) ORDER BY id") == [["v": .text("second 1500")], ["v": .text("third 5000")]])
        }
    }

    #if canImport(Darwin)
    @Test func defaultDirectoryIsInApplicationSupport() {
        let url = SQLite.Database.Configuration.defaultDirectory(environment: ["XDG_DATA_HOME": "/data/home"], programName: "todo")
        #expect(url.path.hasSuffix("/Application Support/todo"))
    }
    #else
    @Test func defaultDirectoryFollowsXDGDataHome() {
        let url = SQLite.Database.Configuration.defaultDirectory(environment: ["XDG_DATA_HOME": "/data/home"], programName: "todo")
        #expect(url.path == "/data/home/todo")
    }

    @Test func defaultDirectoryFallsBackToLocalShare() {
        let url = SQLite.Database.Configuration.defaultDirectory(environment: ["HOME": "/home/me"], programName: "todo")
        #expect(url.path == "/home/me/.local/share/todo")
        let relative = SQLite.Database.Configuration.defaultDirectory(
            environment: ["HOME": "/home/me", "XDG_DATA_HOME": "relative/path"], programName: "todo")
        #expect(relative.path == "/home/me/.local/share/todo")
    }

    @Test func defaultDirectoryWithoutHOMEIsUnderTheUsersHomeFolder() {
        let url = SQLite.Database.Configuration.defaultDirectory(environment: [:], programName: "todo")
        #expect(url.path == URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(".local/share/todo").path)
        #expect(url.path.hasPrefix("/"))
    }
    #endif

    @Test func defaultConfigurationIsDatabaseSqliteInTheProgramFolder() {
        let path = SQLite.Database.Configuration().path
        #expect(path.hasSuffix("/database.sqlite"))
        #expect(path.hasPrefix(SQLite.Database.Configuration.defaultDirectory.path))
    }

    @Test func fileDatabasesUseWALAndMemoryDatabasesWork() throws {
        let path = TestDatabases.temporaryPath("wal")
        let db = try SQLite.Database(path: path)
        #expect(try db.read("PRAGMA journal_mode") == [["journal_mode": .text("wal")]])
        #expect(try db.read("PRAGMA foreign_keys") == [["foreign_keys": .integer(1)]])
        let memory = try TestDatabases.memory()
        try memory.execute(raw: "CREATE TABLE t (x); INSERT INTO t VALUES (1)")
        #expect(try memory.read("SELECT x FROM t") == [["x": .integer(1)]])
    }

    @Test func anyBusyTimeoutOpens() throws {
        for timeout in [TimeInterval.infinity, .nan, -1, 0, 1e300, 0.25] {
            var configuration = SQLite.Database.Configuration(path: TestDatabases.temporaryPath("busy"))
            configuration.busyTimeout = timeout
            let db = try SQLite.Database(configuration)
            try db.execute(raw: "CREATE TABLE t (x)")
            #expect(try db.tables() == ["t"], "busyTimeout \(timeout)")
        }
    }

    @Test func userVersionGetAndSet() throws {
        for db in try TestDatabases.both() {
            #expect(try db.userVersion == 0)
            try db.setUserVersion(7)
            #expect(try db.userVersion == 7)
        }
        #expect(throws: SQLite.Error.self) { try TestDatabases.memory().setUserVersion(Int(Int32.max) + 1) }
    }

    @Test func tablesAndColumns() throws {
        let db = try TestDatabases.memory()
        #expect(try db.tables() == [])
        try db.execute(raw: "CREATE TABLE b (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT 'x', data); CREATE TABLE a (y)")
        #expect(try db.tables() == ["a", "b"])
        #expect(try db.columns(in: "b") == [
            SQLite.Column(name: "id", type: "INTEGER", isNotNull: false, defaultValue: nil, primaryKeyPosition: 1),
            SQLite.Column(name: "name", type: "TEXT", isNotNull: true, defaultValue: "'x'", primaryKeyPosition: 0),
            SQLite.Column(name: "data", type: "", isNotNull: false, defaultValue: nil, primaryKeyPosition: 0),
        ])
        let error = #expect(throws: SQLite.Error.self) { try db.columns(in: "missing") }
        #expect(error?.message == "no such table: missing")
    }
}
