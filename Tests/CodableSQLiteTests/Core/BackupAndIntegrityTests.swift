import Foundation
import Testing
@testable import CodableSQLite

@Suite("Core: backup, integrity, full disks and damaged files")
struct BackupAndIntegrityTests {
    @Test func aBackupIsAWholeCopyOfTheCommittedState() throws {
        let db = try TestDatabases.file("backup")
        try db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY, payload TEXT)")
        try db.inTransaction { _ in
            for id in 0..<2_000 { try db.write("INSERT INTO t VALUES (?, ?)", arguments: [.integer(Int64(id)), .text(String(repeating: "x", count: 200))]) }
        }
        let path = TestDatabases.temporaryPath("backup-copy")
        try db.backup(to: path)
        let copy = try SQLite.Database(path: path)
        #expect(try copy.read("SELECT count(*) AS n FROM t")[0]["n"] == .integer(2_000))
        #expect(try copy.checkIntegrity() == [])
        // Backing up again replaces the copy.
        try db.write("DELETE FROM t WHERE id >= 1000")
        try db.backup(to: path)
        #expect(try SQLite.Database(path: path).read("SELECT count(*) AS n FROM t")[0]["n"] == .integer(1_000))
    }

    @Test func anAsyncBackupReportsProgressWhileWritesGoOn() async throws {
        let db = try TestDatabases.file("backup-async")
        try await db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY, payload TEXT)")
        try await db.write { _ in
            for id in 0..<3_000 { try db.write("INSERT INTO t VALUES (?, ?)", arguments: [.integer(Int64(id)), .text(String(repeating: "y", count: 300))]) }
        }
        let steps = Locked<[SQLite.Database.BackupProgress]>([])
        let path = TestDatabases.temporaryPath("backup-async-copy")
        async let backup: Void = db.backup(to: path, pagesPerStep: 10) { progress in steps.withLock { $0.append(progress) } }
        for id in 3_000..<3_050 {   // writes while the backup runs
            try await db.write("INSERT INTO t VALUES (?, 'z')", arguments: [.integer(Int64(id))])
        }
        try await backup
        let seen = steps.withLock { $0 }
        #expect(seen.count > 5)
        #expect(seen.last?.fraction == 1)
        let copied = try await SQLite.Database(path: path).read("SELECT count(*) AS n FROM t")[0]["n"]?.intValue ?? 0
        #expect((3_000...3_050).contains(copied))   // one snapshot: before, during or after the writes
        #expect(try await db.read("SELECT count(*) AS n FROM t")[0]["n"] == .integer(3_050))
    }

    @Test func vacuumIntoWritesACompactCopy() throws {
        let db = try TestDatabases.file("vacuum")
        try db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1), (2);")
        let path = TestDatabases.temporaryPath("vacuum-copy")
        try db.vacuum(into: path)
        #expect(try SQLite.Database(path: path).read("SELECT count(*) AS n FROM t")[0]["n"] == .integer(2))
        #expect(throws: SQLite.Error.self) { try db.vacuum(into: path) }   // the file exists
        #expect(throws: SQLite.Error.self) { try db.backup(to: "/nonexistent-folder/x/y.sqlite") }
    }

    @Test func aFullDiskRollsBackWholeAndTheDatabaseWorksAgain() throws {
        let db = try TestDatabases.file("full")
        try db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY, payload BLOB)")
        try db.write("INSERT INTO t VALUES (1, zeroblob(100))")
        let pages = try db.read("PRAGMA page_count")[0]["page_count"]?.intValue ?? 0
        try db.withWriter { _ = try $0.execute("PRAGMA max_page_count = \(pages + 2)") }
        let error = #expect(throws: SQLite.Error.self) {
            try db.inTransaction { _ in
                for id in 2..<100 { try db.write("INSERT INTO t VALUES (?, zeroblob(4000))", arguments: [.integer(Int64(id))]) }
            }
        }
        #expect(error?.code == .full)
        #expect(try db.read("SELECT count(*) AS n FROM t")[0]["n"] == .integer(1))   // all or nothing
        try db.withWriter { _ = try $0.execute("PRAGMA max_page_count = 1000000") }
        try db.write("INSERT INTO t VALUES (2, zeroblob(4000))")
        #expect(try db.read("SELECT count(*) AS n FROM t")[0]["n"] == .integer(2))
        #expect(try db.checkIntegrity() == [])
    }

    @Test func damagedFilesGiveClearErrors() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("damaged-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // Not a database at all.
        let text = folder.appendingPathComponent("notes.sqlite").path
        try Data("just some text, long enough to look like a header and more....".utf8).write(to: URL(fileURLWithPath: text))
        let notADatabase = #expect(throws: SQLite.Error.self) { try SQLite.Database(path: text) }
        #expect(notADatabase?.code == .notADatabase)
        // A real database whose header was overwritten with garbage.
        let garbage = folder.appendingPathComponent("garbage.sqlite").path
        do {
            let db = try SQLite.Database(path: garbage)
            try db.execute(raw: "CREATE TABLE t (n); INSERT INTO t VALUES (1);")
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: garbage))
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 100))
        try handle.close()
        try? FileManager.default.removeItem(atPath: garbage + "-wal")
        try? FileManager.default.removeItem(atPath: garbage + "-shm")
        let header = #expect(throws: SQLite.Error.self) { try SQLite.Database(path: garbage) }
        #expect(header?.code == .notADatabase)
        // A database truncated in the middle: an error at open or at first use, never a trap.
        let truncated = folder.appendingPathComponent("truncated.sqlite").path
        do {
            let db = try SQLite.Database(path: truncated)
            try db.execute(raw: "CREATE TABLE t (n TEXT); PRAGMA wal_checkpoint(TRUNCATE);")
            try db.inTransaction { _ in for n in 0..<500 { try db.write("INSERT INTO t VALUES (?)", arguments: [.text(String(repeating: "n", count: 500) + "\(n)")]) } }
            try db.execute(raw: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
        let size = try FileManager.default.attributesOfItem(atPath: truncated)[.size] as? Int ?? 0
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: truncated))
        try file.truncate(atOffset: UInt64(size / 2))
        try file.close()
        try? FileManager.default.removeItem(atPath: truncated + "-wal")
        try? FileManager.default.removeItem(atPath: truncated + "-shm")
        do {
            let db = try SQLite.Database(path: truncated)
            let problems = try? db.checkIntegrity()
            let read = Result { try db.read("SELECT count(*) AS n, max(n) AS m FROM t") }
            switch read {
            case .failure(let error as SQLite.Error):
                #expect([.corrupt, .ioError, .notADatabase].contains(error.code))
            case .failure(let error):
                Issue.record("unexpected error \(error)")
            case .success:
                #expect(problems?.isEmpty == false)   // it read, but the check says it is damaged
            }
        } catch let error as SQLite.Error {
            #expect([.corrupt, .notADatabase, .ioError].contains(error.code))
        }
    }

    @Test func theIntegrityCheckReturnsTheDamagedPagesAndTheErrorThatStoppedIt() throws {
        let path = TestDatabases.temporaryPath("damaged-pages")
        var pageSize = 0
        do {
            let db = try SQLite.Database(path: path)
            try db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, payload TEXT); CREATE INDEX t_name ON t(name);")
            try db.inTransaction { _ in
                for id in 1...3_000 {
                    try db.write("INSERT INTO t VALUES (?, ?, ?)", arguments: [.integer(Int64(id)), .text("name\(id)"), .text(String(repeating: "x", count: 200))])
                }
            }
            try db.execute(raw: "PRAGMA wal_checkpoint(TRUNCATE)")
            pageSize = try db.read("PRAGMA page_size")[0]["page_size"]?.intValue ?? 0
            #expect(try db.checkIntegrity() == [])
        }
        // Twelve pages of the table overwritten with garbage; the header (page 1) intact.
        let damaged = Array(stride(from: 10, through: 120, by: 10))
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        for page in damaged {
            try file.seek(toOffset: UInt64((page - 1) * pageSize))
            try file.write(contentsOf: Data(repeating: 0xA5, count: pageSize))
        }
        try file.close()

        // SQLite lists the pages, then stops with SQLITE_CORRUPT: both are returned.
        let problems = try SQLite.Database(path: path).checkIntegrity()
        for page in damaged {
            #expect(problems.contains { $0.contains("Page \(page):") }, "page \(page) is not reported: \(problems)")
        }
        #expect(problems.last?.contains("database disk image is malformed") == true, "\(problems)")
        #expect(problems.last?.contains("SQLite error 11") == true, "\(problems)")
    }

    @Test func theIntegrityCheckThrowsWhenTheFileIsNotADatabase() throws {
        let path = TestDatabases.temporaryPath("integrity-not-a-database")
        let db = try SQLite.Database(path: path)
        try db.execute(raw: "CREATE TABLE t (n); INSERT INTO t VALUES (1); PRAGMA wal_checkpoint(TRUNCATE);")
        // The header overwritten while the database is open; no reader has opened it yet.
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try file.write(contentsOf: Data(repeating: 0xA5, count: 100))
        try file.close()
        let error = #expect(throws: SQLite.Error.self) { try db.checkIntegrity() }
        #expect(error?.code == .notADatabase, "\(String(describing: error))")
    }

    @Test func durabilityIsConfigurable() throws {
        var configuration = SQLite.Database.Configuration(path: TestDatabases.temporaryPath("durable"))
        #expect(configuration.durability == .processCrash)
        configuration.durability = .powerLoss
        let db = try SQLite.Database(configuration)
        #expect(try db.withWriter { try $0.execute("PRAGMA synchronous") }.first?["synchronous"] == .integer(2))   // FULL
        let normal = try TestDatabases.file("normal")
        #expect(try normal.withWriter { try $0.execute("PRAGMA synchronous") }.first?["synchronous"] == .integer(1))  // NORMAL
    }
}

@Suite("Core: read-only databases")
struct ReadOnlyDatabaseTests {
    @Test func aReadOnlyDatabaseRefusesWritesAndKeepsItsData() throws {
        let path = TestDatabases.temporaryPath("read-only")
        do {
            let db = try SQLite.Database(path: path)
            try db.execute(raw: "CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1);")
        }
        let readOnly = try SQLite.Database(path: "file:\(path)?mode=ro")
        let error = #expect(throws: SQLite.Error.self) { try readOnly.write("INSERT INTO t VALUES (2)") }
        #expect(error?.code == .readOnly)
        #expect(try readOnly.read("SELECT count(*) AS n FROM t")[0]["n"] == .integer(1))
    }
}
