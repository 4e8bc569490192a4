import Foundation
import Testing
@testable import CodableSQLite

/// A database whose folder or file is deleted, renamed or replaced while it is open refuses every
/// write with an error naming the path, instead of committing into a file no name leads to.
@Suite("Reliability: a database moved or deleted while open")
struct MovedDatabaseTests {
    /// What happens to the database file while it is open.
    enum Removal: String, CaseIterable, Sendable {
        case folderDeleted, fileDeleted, fileRenamed, fileReplaced

        func apply(to path: String, in folder: URL) throws {
            let files = FileManager.default
            switch self {
            case .folderDeleted:
                try files.removeItem(at: folder)
            case .fileDeleted:
                try files.removeItem(atPath: path)
            case .fileRenamed:
                try files.moveItem(atPath: path, toPath: folder.appendingPathComponent("renamed.sqlite").path)
            case .fileReplaced:
                // Another file now has the name: a copy of the old one, so that it is a database too.
                let aside = folder.appendingPathComponent("aside.sqlite").path
                try files.moveItem(atPath: path, toPath: aside)
                try files.copyItem(atPath: aside, toPath: path)
            }
        }
    }

    /// A model first saved after the file was deleted: its table is made in the refused transaction.
    struct Note: Codable, Model { var id: Int64?; var text: String }

    /// Counts commits the layers above Core hear of.
    final class CommitCounter: TransactionObserver, @unchecked Sendable {  // only touched with the writer held
        var commits = 0
        var rollbacks = 0
        var published = 0
        func transactionDidCommit() { commits += 1 }
        func transactionDidRollBack() { rollbacks += 1 }
        func changesDidCommit(_ changes: DatabaseChanges) { published += 1 }
    }

    /// A WAL database in a folder of its own, with one committed row and a model saved.
    private func openDatabase() throws -> (db: SQLite.Database, path: String, folder: URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("codablesqlite-moved-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("app.sqlite").path
        let db = try SQLite.Database(path: path)
        try db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'kept');")
        try db.save(Person("Ann", age: 30))
        #expect(try db.read("SELECT count(*) AS n FROM t")[0]["n"] == .integer(1))   // a reader is open
        return (db, path, folder)
    }

    /// `body` fails with the moved-database error naming `path`.
    private func expectMoved<R>(_ path: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R) {
        let error = #expect(throws: SQLite.Error.self, sourceLocation: sourceLocation) { _ = try body() }
        #expect(error?.extendedCode == .readOnlyDatabaseMoved, "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(error?.message.contains(path) == true, "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(error?.message.contains("moved or deleted") == true, sourceLocation: sourceLocation)
    }

    @Test(arguments: Removal.allCases)
    func everyWriteFailsAndNothingIsAnnounced(_ removal: Removal) throws {
        let (db, path, folder) = try openDatabase()
        defer { try? FileManager.default.removeItem(at: folder) }
        let counter = CommitCounter()
        db.addTransactionObserver(counter)
        try db.startTrackingChanges()

        try removal.apply(to: path, in: folder)

        expectMoved(path) { try db.write("INSERT INTO t VALUES (2, 'lost')") }                   // autocommit
        expectMoved(path) { try db.save(Person("Bob", age: 40)) }                                // a model
        expectMoved(path) { try db.save(Note(text: "lost")) }                                    // a new table
        expectMoved(path) { try db.save(Note(text: "lost")) }                                    // still not made
        expectMoved(path) { try db.inTransaction { _ in try db.write("INSERT INTO t VALUES (3, 'lost')") } }
        expectMoved(path) { try db.execute(raw: "BEGIN; INSERT INTO t VALUES (4, 'lost'); COMMIT;") }
        expectMoved(path) { try db.execute(raw: "CREATE TABLE lost (n)") }                     // schema
        expectMoved(path) { try db.write("INSERT INTO t VALUES (5, 'lost')") }                   // and again
        #expect(counter.published == 0)
        #expect(counter.commits == 0)
        #expect(counter.rollbacks > 0)
        // Nothing is left half done on the writer: no transaction open, and it still reads.
        #expect(try db.withWriter { $0.isAutocommit })
        #expect(try db.withWriter { try $0.execute("SELECT count(*) AS n FROM t") }.first?["n"] == .integer(1))
        // Reads go on from the reader already open, and see what was committed before.
        #expect(try db.read("SELECT count(*) AS n FROM t")[0]["n"] == .integer(1))
        #expect(try db.get(Person.self).map(\.name) == ["Ann"])
    }

    @Test func asyncWritesFailToo() async throws {
        let (db, path, folder) = try openDatabase()
        try FileManager.default.removeItem(at: folder)
        let error = await #expect(throws: SQLite.Error.self) { try await db.write("INSERT INTO t VALUES (2, 'lost')") }
        #expect(error?.extendedCode == .readOnlyDatabaseMoved)
        #expect(error?.message.contains(path) == true)
    }

    @Test func aRollbackJournalDatabaseGivesTheSameError() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("codablesqlite-moved-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("journal.sqlite").path
        let db = try SQLite.Database(path: path)
        try db.execute(raw: "PRAGMA journal_mode = DELETE; CREATE TABLE t (n);")
        try FileManager.default.removeItem(at: folder)
        expectMoved(path) { try db.write("INSERT INTO t VALUES (1)") }
    }

    @Test func inMemoryAndTemporaryDatabasesAreUnaffected() throws {
        for path in [":memory:", ""] {
            let db = try SQLite.Database(path: path)
            try db.execute(raw: "CREATE TABLE t (n)")
            try db.inTransaction { _ in try db.write("INSERT INTO t VALUES (1)") }
            try db.write("INSERT INTO t VALUES (2)")
            #expect(try db.read("SELECT count(*) AS n FROM t")[0]["n"] == .integer(2), "\(path)")
        }
    }
}
