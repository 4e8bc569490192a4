import Foundation
@testable import CodableSQLite

/// Databases for tests: each file is unique, because tests run in parallel.
enum TestDatabases {
    static func temporaryPath(_ name: String = "test") -> String {
        FileManager.default.temporaryDirectory
            .appendingPathComponent("codablesqlite-\(name)-\(UUID().uuidString).sqlite").path
    }

    static func file(_ name: String = "test") throws -> SQLite.Database {
        try SQLite.Database(path: temporaryPath(name))
    }

    static func memory() throws -> SQLite.Database {
        try SQLite.Database(path: ":memory:")
    }

    /// One in-memory and one WAL file database, for behaviour that must not differ.
    static func both() throws -> [SQLite.Database] {
        [try memory(), try file()]
    }
}
