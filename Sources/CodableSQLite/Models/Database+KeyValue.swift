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
    /// Every value is stored as its JSON text, the form `Postgres.Database` stores (as `jsonb`)
    /// under the same table name, so a store copied from one engine to the other reads the same
    /// values; values come back exactly (a `Double` by its shortest exact decimal).
    @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
    public func store<T: Encodable>(_ value: T, forKey key: String) throws {
        let stored = SQLite.Value.text(try JSONForm.encode(value))
        try withWriter { connection in
            if !models.hasKeyValueTable(includingUncommitted: true) {
                try connection.execute(
                    "CREATE TABLE IF NOT EXISTS \(Self.keyValueTable) (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID")
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
                guard statement.type(at: 0) == .text else {
                    // A value stored by a version before the JSON form (a number as SQLite stores
                    // it): decoded as a column's value.
                    return try statement.decodeColumnValue(T.self, options: DecodingOptions())
                }
                let json = statement.withUTF8(at: 0) { bytes in
                    Result { try JSONForm.decode(T.self, from: UnsafeRawBufferPointer(bytes), source: "key-value store", label: key) }
                }
                switch json {
                case .success(let value): return value
                case .failure(let error):
                    // Text an earlier version stored as it was (a string that is not JSON).
                    guard let value = try? statement.decodeColumnValue(T.self, options: DecodingOptions()) else { throw error }
                    return value
                }
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
