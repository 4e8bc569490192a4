import Foundation

extension SQLite.Database {
    static let keyValueTable = "codablesqlite_values"

    /// Stores any `Codable` value under a key, replacing what the key held.
    ///
    /// ```swift
    /// try db.store(173813.5345, forKey: "myKey")
    /// try db.store([MyData(int: 1, date: Date())], forKey: "records")   // arrays of structs too
    /// ```
    ///
    /// Single values are stored as SQLite stores them (a `Double` as REAL), others as JSON text,
    /// following the same storage rules as columns, so values come back exactly.
    @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
    public func store<T: Encodable>(_ value: T, forKey key: String) throws {
        let stored = try ValueEncoder.value(for: value, at: .root, options: EncodingOptions())
        try withWriter { connection in
            if !models.hasKeyValueTable(includingUncommitted: true) {
                try connection.execute(
                    "CREATE TABLE IF NOT EXISTS \(Self.keyValueTable) (key TEXT PRIMARY KEY NOT NULL, value) WITHOUT ROWID")
                models.noteKeyValueTable(committed: connection.isAutocommit)
            }
            try connection.withStatement(
                "INSERT INTO \(Self.keyValueTable) (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
            ) { statement in
                try statement.bind([.text(key), stored])
                try statement.run()
            }
        }
    }

    /// The value stored under a key, or `nil` when there is none.
    ///
    /// ```swift
    /// let v = try db.value(Double.self, forKey: "myKey")             // 173813.5345
    /// let home = try db.value(Address.self, forKey: "home")          // a struct, from its JSON
    /// let scores = try db.value([String: Int].self, forKey: "scores")
    /// ```
    ///
    /// Every value `store(_:forKey:)` accepts comes back equal, read as the one stored value
    /// (the struct's properties are members of its JSON, not result columns).
    ///
    /// Asking for an `Optional` works like a dictionary of optionals: the result is `nil` when
    /// the key is missing and `.some(nil)` when the key holds a stored `nil`:
    ///
    /// ```swift
    /// try db.store(nil as Int?, forKey: "limit")
    /// try db.value(Int?.self, forKey: "limit")   // Optional(nil): the key holds nil
    /// try db.value(Int?.self, forKey: "other")   // nil: no such key
    /// try db.value(Int.self, forKey: "limit")    // throws DecodingError.valueNotFound
    /// ```
    ///
    /// - Throws: `DecodingError` when the stored value is not a `T` (a stored `nil` is not an `Int`).
    @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
    public func value<T: Decodable>(_ type: T.Type, forKey key: String) throws -> T? {
        try withReader { connection -> T? in
            guard try keyValueTableExists(on: connection) else { return nil }
            return try connection.withStatement("SELECT value FROM \(Self.keyValueTable) WHERE key = ?") { statement in
                try statement.bind([.text(key)])
                guard try statement.step() else { return nil }
                // The column holds one value (JSON text for containers): decode it as that value,
                // not as a row whose columns are T's keys.
                return try statement.decodeColumnValue(T.self, options: DecodingOptions())
            }
        }
    }

    /// Removes the value stored under a key, if any.
    ///
    /// ```swift
    /// try db.removeValue(forKey: "myKey")
    /// ```
    ///
    /// - Returns: whether a value was removed.
    @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
    @discardableResult
    public func removeValue(forKey key: String) throws -> Bool {
        try withWriter { connection in
            guard try keyValueTableExists(on: connection) else { return false }
            try connection.withStatement("DELETE FROM \(Self.keyValueTable) WHERE key = ?") { statement in
                try statement.bind([.text(key)])
                try statement.run()
            }
            return connection.changes > 0
        }
    }

    private func keyValueTableExists(on connection: RawConnection) throws -> Bool {
        let inTransaction = !connection.isAutocommit
        if models.hasKeyValueTable(includingUncommitted: inTransaction) { return true }
        let exists = try connection.execute(
            "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = '\(Self.keyValueTable)'")
        if !exists.isEmpty { models.noteKeyValueTable(committed: !inTransaction) }
        return !exists.isEmpty
    }

    /// Asynchronous ``store(_:forKey:)``.
    ///
    /// ```swift
    /// try await db.store(settings, forKey: "settings")
    /// ```
    public func store<T: Encodable & Sendable>(_ value: T, forKey key: String) async throws {
        try await performWrite { _ in try self.store(value, forKey: key) }
    }

    /// Asynchronous ``value(_:forKey:)``.
    ///
    /// ```swift
    /// let settings = try await db.value(Settings.self, forKey: "settings")
    /// ```
    public func value<T: Decodable & Sendable>(_ type: T.Type, forKey key: String) async throws -> T? {
        try await performRead { _ in try self.value(type, forKey: key) }
    }

    /// Asynchronous ``removeValue(forKey:)``.
    ///
    /// ```swift
    /// try await db.removeValue(forKey: "settings")
    /// ```
    @discardableResult
    public func removeValue(forKey key: String) async throws -> Bool {
        try await performWrite { _ in try self.removeValue(forKey: key) }
    }
}
