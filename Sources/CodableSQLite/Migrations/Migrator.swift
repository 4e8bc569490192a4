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
    ///
    /// Migrations always run in the order registered, so a new migration goes after every one
    /// that may have run: ``migrate(_:)`` refuses a migration registered before one that has
    /// already run. Removing an old migration that has run is fine (its record stays in the
    /// table and is ignored), so apps can drop steps every database has long passed.
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
        ///
        /// Migrations that have run but are no longer registered are ignored.
        ///
        /// - Throws: ``SQLite/Error`` with code ``SQLite/ResultCode/misuse``, before running
        ///   anything, when a name is registered twice or when a migration that has not run is
        ///   registered before one that has (it would run after it, out of order; when another
        ///   process runs such a later migration meanwhile, the run stops before the step it
        ///   would misorder). Else the error of the migration that failed.
        public func migrate(_ database: Database) throws {
            if let duplicate {
                throw SQLite.Error(code: .misuse, message: "The migration \"\(duplicate)\" is registered twice")
            }
            try database.execute(raw: """
                CREATE TABLE IF NOT EXISTS codablesqlite_migrations (name TEXT PRIMARY KEY NOT NULL, appliedAt TEXT NOT NULL)
                """)
            defer { database.models.reset() }
            let applied = Set(try appliedMigrations(in: database))
            try checkOrder(applied: applied)
            for migration in migrations where !applied.contains(migration.name) {
                try database.inTransaction { _ in
                    // Another caller (or process) may have run migrations since `applied` was
                    // read: the transaction holds the write lock, so these checks are final.
                    let appliedNow = Set(try appliedMigrations(in: database))
                    guard !appliedNow.contains(migration.name) else { return }
                    try checkOrder(applied: appliedNow)
                    try migration.migrate(database)
                    try database.write(
                        "INSERT INTO codablesqlite_migrations (name, appliedAt) VALUES (?, strftime('%Y-%m-%d %H:%M:%f', 'now'))",
                        arguments: [.text(migration.name)])
                }
            }
        }

        /// Throws when a registered migration that has not run comes before one that has.
        private func checkOrder(applied: Set<String>) throws {
            guard let lastApplied = migrations.lastIndex(where: { applied.contains($0.name) }) else { return }
            guard let pending = migrations[..<lastApplied].firstIndex(where: { !applied.contains($0.name) }) else { return }
            let pendingName = migrations[pending].name
            // Name the first migration after it that has run.
            let ranName = migrations[(pending + 1)...].first(where: { applied.contains($0.name) })?.name
                ?? migrations[lastApplied].name
            throw SQLite.Error(code: .misuse, message: """
                Refusing to run the migration "\(pendingName)": it is registered before "\(ranName)", which has \
                already run. Migrations run in the order registered, so a new migration must be registered after \
                every migration that has run.
                """)
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
