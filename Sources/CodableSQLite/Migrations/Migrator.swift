import Foundation

extension SQLite {
    /// Named schema changes, each run once, in the order registered, in its own transaction, and
    /// recorded in the database (table `codablesqlite_migrations`).
    ///
    /// ```swift
    /// var migrator = SQLite.Migrator()
    /// migrator.registerMigration("add people.age") { db in
    ///     try db.execute(raw: "ALTER TABLE \"Person\" ADD COLUMN \"age\" INTEGER NOT NULL DEFAULT 18")
    /// }
    /// migrator.registerMigration("index names") { db in
    ///     try db.execute(raw: "CREATE INDEX person_name ON \"Person\"(\"name\")")
    /// }
    /// try migrator.migrate(db)   // runs what has not run yet
    /// ```
    ///
    /// Use migrations for the schema changes models cannot make automatically: a new non-optional
    /// property on a table with rows, a changed property type, a property made optional.
    public struct Migrator: Sendable {
        private var migrations: [(name: String, migrate: @Sendable (Database) throws -> Void)] = []
        private var duplicate: String?

        /// An empty migrator.
        public init() {}

        /// Adds a migration; `name` identifies it in the database forever, so never rename one
        /// that has run.
        ///
        /// ```swift
        /// migrator.registerMigration("v2") { db in try db.execute(raw: "…") }
        /// ```
        public mutating func registerMigration(_ name: String, _ migrate: @escaping @Sendable (Database) throws -> Void) {
            if migrations.contains(where: { $0.name == name }) { duplicate = duplicate ?? name }
            migrations.append((name, migrate))
        }

        /// Runs every registered migration that has not run on `database`, in order. A failing
        /// migration is rolled back and rethrown; the ones before it stay applied.
        ///
        /// ```swift
        /// try migrator.migrate(db)
        /// ```
        public func migrate(_ database: Database) throws {
            if let duplicate {
                throw SQLite.Error(code: .misuse, message: "The migration \"\(duplicate)\" is registered twice")
            }
            try database.execute(raw: """
                CREATE TABLE IF NOT EXISTS codablesqlite_migrations (name TEXT PRIMARY KEY NOT NULL, appliedAt TEXT NOT NULL)
                """)
            defer { database.models.reset() }
            let applied = Set(try appliedMigrations(in: database))
            for migration in migrations where !applied.contains(migration.name) {
                try database.inTransaction {
                    // Another caller (or process) may have run it since `applied` was read: the
                    // transaction holds the write lock, so this check is final.
                    let ranMeanwhile = try database.read(
                        "SELECT 1 FROM codablesqlite_migrations WHERE name = ?", arguments: [.text(migration.name)])
                    guard ranMeanwhile.isEmpty else { return }
                    try migration.migrate(database)
                    try database.write(
                        "INSERT INTO codablesqlite_migrations (name, appliedAt) VALUES (?, strftime('%Y-%m-%d %H:%M:%f', 'now'))",
                        arguments: [.text(migration.name)])
                }
            }
        }

        /// The names of the migrations that have run on `database`, in the order they ran.
        ///
        /// ```swift
        /// try migrator.appliedMigrations(in: db)   // ["add people.age"]
        /// ```
        public func appliedMigrations(in database: Database) throws -> [String] {
            let exists = try database.read(
                "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'codablesqlite_migrations'")
            guard !exists.isEmpty else { return [] }
            return try database.read("SELECT name FROM codablesqlite_migrations ORDER BY rowid").compactMap { $0["name"]?.stringValue }
        }
    }
}
