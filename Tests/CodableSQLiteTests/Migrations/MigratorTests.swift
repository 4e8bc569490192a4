import Foundation
import Testing
@testable import CodableSQLite

// The model versions of SchemaEvolutionTests, for the migration that unblocks a new property.
private struct ItemV1: Codable, Model, Equatable { var id: Int; var title: String; static var tableName: String { "item" } }
private struct ItemV3: Codable, Model { var id: Int; var title: String; var priority: Int; static var tableName: String { "item" } }

@Suite("Migrations: migrator")
struct MigratorTests {
    @Test func migrationsRunOnceInOrderAndAreRecorded() throws {
        let db = try ModelFixtures.file()
        var migrator = SQLite.Migrator()
        migrator.registerMigration("create") { db in try db.execute(raw: "CREATE TABLE log (step TEXT)") }
        migrator.registerMigration("first row") { db in try db.write("INSERT INTO log VALUES ('one')") }
        try migrator.migrate(db)
        try migrator.migrate(db)
        #expect(try db.read("SELECT step FROM log").map { $0["step"] } == [.text("one")])
        #expect(try migrator.appliedMigrations(in: db) == ["create", "first row"])

        migrator.registerMigration("second row") { db in try db.write("INSERT INTO log VALUES ('two')") }
        try migrator.migrate(db)
        #expect(try db.read("SELECT step FROM log ORDER BY rowid").map { $0["step"] } == [.text("one"), .text("two")])
    }

    @Test func concurrentMigrationsRunEachStepOnce() throws {
        let db = try ModelFixtures.file()
        var migrator = SQLite.Migrator()
        migrator.registerMigration("create") { db in try db.execute(raw: "CREATE TABLE log (step TEXT)") }
        migrator.registerMigration("row") { db in try db.write("INSERT INTO log VALUES ('one')") }
        let failures = LockedBox<[String]>([])
        let migrations = migrator
        DispatchQueue.concurrentPerform(iterations: 6) { _ in
            do { try migrations.migrate(db) } catch { failures.update { $0.append("\(error)") } }
        }
        #expect(failures.value == [])
        #expect(try db.read("SELECT step FROM log").map { $0["step"] } == [.text("one")])
        #expect(try migrator.appliedMigrations(in: db) == ["create", "row"])
    }

    @Test func failingMigrationRollsBackItselfOnly() throws {
        struct Broken: Error {}
        let db = try ModelFixtures.memory()
        var migrator = SQLite.Migrator()
        migrator.registerMigration("create") { db in try db.execute(raw: "CREATE TABLE t (x)") }
        migrator.registerMigration("broken") { db in
            try db.write("INSERT INTO t VALUES (1)")
            throw Broken()
        }
        #expect(throws: Broken.self) { try migrator.migrate(db) }
        #expect(try db.tables().contains("t"))
        #expect(try db.read("SELECT count(*) AS n FROM t")[0]["n"] == .integer(0))
        #expect(try migrator.appliedMigrations(in: db) == ["create"])
    }

    @Test func duplicateMigrationNamesAreAnError() throws {
        let db = try ModelFixtures.memory()
        var migrator = SQLite.Migrator()
        migrator.registerMigration("same") { _ in }
        migrator.registerMigration("same") { _ in }
        #expect(throws: SQLite.Error.self) { try migrator.migrate(db) }
    }

    @Test func migrationUnblocksANonOptionalProperty() throws {
        let db = try ModelFixtures.memory()
        try db.save(ItemV1(id: 1, title: "old"))
        var migrator = SQLite.Migrator()
        migrator.registerMigration("item.priority") { db in
            try db.execute(raw: #"ALTER TABLE item ADD COLUMN priority INTEGER NOT NULL DEFAULT 3"#)
        }
        try migrator.migrate(db)
        try db.save(ItemV3(id: 2, title: "new", priority: 1))
        #expect(try db.get(ItemV3.self).map(\.priority) == [3, 1])
    }

    /// A migrator whose steps each log their name in table `log`.
    private static func logging(_ names: [String]) -> SQLite.Migrator {
        var migrator = SQLite.Migrator()
        for name in names {
            migrator.registerMigration(name) { db in
                try db.execute(raw: "CREATE TABLE IF NOT EXISTS log (step TEXT)")
                try db.write("INSERT INTO log VALUES (?)", arguments: [.text(name)])
            }
        }
        return migrator
    }

    private static func log(_ db: SQLite.Database) throws -> [String] {
        try db.read("SELECT step FROM log ORDER BY rowid").compactMap { $0["step"]?.stringValue }
    }

    @Test func aMigrationRegisteredBeforeOneThatRanIsRefusedBeforeRunningAnything() throws {
        let db = try ModelFixtures.file()
        try Self.logging(["v1", "v3"]).migrate(db)
        let error = #expect(throws: SQLite.Error.self) { try Self.logging(["v1", "v2", "v3", "v4"]).migrate(db) }
        #expect(error?.code == .misuse)
        #expect(error?.message.contains(#""v2""#) == true)
        #expect(error?.message.contains(#"before "v3", which has already run"#) == true)
        #expect(try Self.log(db) == ["v1", "v3"])
        #expect(try SQLite.Migrator().appliedMigrations(in: db) == ["v1", "v3"])
    }

    @Test func aMigrationRegisteredBeforeOneThatRanIsRefusedWhenOlderStepsAreRemoved() throws {
        let db = try ModelFixtures.memory()
        try Self.logging(["v1", "v3"]).migrate(db)
        let error = #expect(throws: SQLite.Error.self) { try Self.logging(["v2", "v3"]).migrate(db) }
        #expect(error?.message.contains(#""v2""#) == true)
        #expect(try Self.log(db) == ["v1", "v3"])
    }

    @Test func aMigrationThatRanMeanwhileOutOfOrderStopsTheRun() throws {
        // Another process ran "v3" while this one was running "v1".
        let db = try ModelFixtures.memory()
        var migrator = SQLite.Migrator()
        migrator.registerMigration("v1") { db in
            try db.write("INSERT INTO codablesqlite_migrations (name, appliedAt) VALUES ('v3', '2026-01-01')")
        }
        migrator.registerMigration("v2") { db in try db.execute(raw: "CREATE TABLE v2 (x)") }
        migrator.registerMigration("v3") { _ in }
        let error = #expect(throws: SQLite.Error.self) { try migrator.migrate(db) }
        #expect(error?.code == .misuse)
        #expect(error?.message.contains(#""v2""#) == true)
        #expect(try !db.tables().contains("v2"))
        #expect(try migrator.appliedMigrations(in: db) == ["v3", "v1"])
    }

    @Test func removedMigrationsThatRanAreIgnored() throws {
        let db = try ModelFixtures.memory()
        try Self.logging(["v1", "v2"]).migrate(db)
        try Self.logging(["v2", "v3"]).migrate(db)
        try Self.logging(["v4"]).migrate(db)
        try Self.logging([]).migrate(db)
        #expect(try Self.log(db) == ["v1", "v2", "v3", "v4"])
        #expect(try SQLite.Migrator().appliedMigrations(in: db) == ["v1", "v2", "v3", "v4"])
    }

    @Test func newMigrationsAfterEveryAppliedOneRunInTheOrderRegistered() throws {
        let db = try ModelFixtures.memory()
        try Self.logging(["v1", "v2"]).migrate(db)
        try Self.logging(["v1", "v2", "v4", "v3"]).migrate(db)
        #expect(try Self.log(db) == ["v1", "v2", "v4", "v3"])
        // Everything has run: registering the applied ones in another order runs nothing and is fine.
        try Self.logging(["v3", "v1", "v4", "v2"]).migrate(db)
        #expect(try Self.log(db) == ["v1", "v2", "v4", "v3"])
    }
}
