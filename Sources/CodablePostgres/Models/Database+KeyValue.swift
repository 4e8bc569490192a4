#if Postgres
import Foundation
import PostgresNIO

extension Postgres.Queryable {
    /// Stores any `Codable` value under a key (as `jsonb`), replacing what the key held: the JSON
    /// form `SQLite.Database` stores (as text) under the same table name.
    ///
    /// ```swift
    /// try await db.store([1, 2, 3], forKey: "lottery")
    /// ```
    public func store<T: Encodable & Sendable>(_ value: T, forKey key: String) async throws {
        let session = handle.session
        try await session.database.prepareKeyValueTable()
        var binds = PostgresBindings()
        binds.append(key)
        binds.append(try JSONForm.encode(value))
        try await session.writing { session in
            _ = try await session.rows("""
                INSERT INTO \(Postgres.Database.keyValueTable) (key, value) VALUES ($1, $2::jsonb) \
                ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value
                """, binds)
        }
    }

    /// The value stored under a key, or `nil`.
    ///
    /// ```swift
    /// let numbers = try await db.value([Int].self, forKey: "lottery")
    /// ```
    public func value<T: Decodable & Sendable>(_ type: T.Type, forKey key: String) async throws -> T? {
        let session = handle.session
        guard try await session.database.keyValueTableExists(session) else { return nil }
        var binds = PostgresBindings()
        binds.append(key)
        let sql = "SELECT value::text FROM \(Postgres.Database.keyValueTable) WHERE key = $1"
        guard let cell = try await session.rows(sql, binds).first?.first, let bytes = cell.bytes else { return nil }
        return try bytes.withUnsafeReadableBytes { buffer in
            try JSONForm.decode(T.self, from: buffer, source: sql, label: "value")
        }
    }

    /// Removes the value stored under a key; whether there was one.
    ///
    /// ```swift
    /// try await db.removeValue(forKey: "lottery")
    /// ```
    @discardableResult
    public func removeValue(forKey key: String) async throws -> Bool {
        let session = handle.session
        guard try await session.database.keyValueTableExists(session) else { return false }
        var binds = PostgresBindings()
        binds.append(key)
        let removed = try await session.writing { session in
            try await session.integers(
                "WITH removed AS (DELETE FROM \(Postgres.Database.keyValueTable) WHERE key = $1 RETURNING 1) SELECT count(*) FROM removed", binds)
        }
        return (removed.first ?? 0) > 0
    }
}

extension Postgres.Database {
    /// The same name as on SQLite.
    static let keyValueTable = "codablesqlite_values"

    /// Whether the key-value table exists (a read creates nothing).
    func keyValueTableExists(_ session: Postgres.Session) async throws -> Bool {
        if hasKeyValueTable.withLock({ $0 }) { return true }
        let found = try await session.integers("SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            + "WHERE n.nspname = current_schema() AND c.relname = '\(Self.keyValueTable)'").first == 1
        if found { hasKeyValueTable.withLock { $0 = true } }
        return found
    }

    func prepareKeyValueTable() async throws {
        if hasKeyValueTable.withLock({ $0 }) { return }
        // IF NOT EXISTS can still collide when two instances create it at the same moment: take turns.
        try await transactionOnOwnConnection { session in
            try await session.lock(table: Self.keyValueTable)
            _ = try await session.rows("CREATE TABLE IF NOT EXISTS \(Self.keyValueTable) (key text PRIMARY KEY, value jsonb NOT NULL)")
        }
        hasKeyValueTable.withLock { $0 = true }
    }
}
#endif
