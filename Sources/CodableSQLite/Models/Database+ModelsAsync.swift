extension SQLite.Database {
    /// Asynchronous ``save(_:)-(T)``.
    ///
    /// ```swift
    /// try await db.save(billy)
    /// ```
    @discardableResult
    public func save<T: Model & Sendable>(_ value: T) async throws -> T {
        try await performWrite { _ in try self.save(value) }
    }

    /// Asynchronous ``save(_:)-([T])``.
    ///
    /// ```swift
    /// try await db.save([alice, bob])
    /// ```
    @discardableResult
    public func save<T: Model & Sendable>(_ values: [T]) async throws -> [T] {
        try await performWrite { _ in try self.save(values) }
    }

    /// Saves `values` with their graphs, leaving related values whose rows exist as stored
    /// (created only when missing): the sync engine's save, where each row travels by its own
    /// change and a copy inside another value's graph may be older.
    package func saveKeepingRelated<T: Model & Sendable>(_ values: [T]) async throws {
        _ = try await performWrite { _ in try self.save(values, keepingExistingRelated: true) }
    }

    /// Asynchronous ``get(_:)``.
    ///
    /// ```swift
    /// let everyone = try await db.get(Person.self)
    /// ```
    public func get<T: Model & Sendable>(_ type: T.Type) async throws -> [T] {
        try await performRead { _ in try self.get(type) }
    }

    /// Asynchronous ``get(with:)``.
    ///
    /// ```swift
    /// let adults = try await db.get(with: Filter(\Person.age, is: .greater(than: 17)))
    /// ```
    public func get<T: Model & Sendable>(with filter: Filter<T>) async throws -> [T] {
        try await performRead { _ in try self.get(with: filter) }
    }

    /// Asynchronous ``get(_:id:)``.
    ///
    /// ```swift
    /// let billy = try await db.get(Person.self, id: billyID)
    /// ```
    public func get<T: Model & Sendable>(_ type: T.Type, id: T.ID) async throws -> T? where T.ID: Sendable {
        try await performRead { _ in try self.get(type, id: id) }
    }

    /// Asynchronous ``count(_:)``.
    ///
    /// ```swift
    /// let n = try await db.count(Person.self)
    /// ```
    public func count<T: Model & Sendable>(_ type: T.Type) async throws -> Int {
        try await performRead { _ in try self.count(type) }
    }

    /// Asynchronous ``count(with:)``.
    ///
    /// ```swift
    /// let n = try await db.count(with: Filter(\Person.age, is: .less(than: 18)))
    /// ```
    public func count<T: Model & Sendable>(with filter: Filter<T>) async throws -> Int {
        try await performRead { _ in try self.count(with: filter) }
    }

    /// Asynchronous ``delete(_:)-(T)``.
    ///
    /// ```swift
    /// try await db.delete(billy)
    /// ```
    @discardableResult
    public func delete<T: Model & Sendable>(_ value: T) async throws -> Bool {
        try await performWrite { _ in try self.delete(value) }
    }

    /// Asynchronous ``delete(_:id:)``.
    ///
    /// ```swift
    /// try await db.delete(Person.self, id: billyID)
    /// ```
    @discardableResult
    public func delete<T: Model & Sendable>(_ type: T.Type, id: T.ID) async throws -> Bool where T.ID: Sendable {
        try await performWrite { _ in try self.delete(type, id: id) }
    }

    /// Asynchronous ``delete(_:)-([T])``.
    ///
    /// ```swift
    /// try await db.delete([alice, bob])
    /// ```
    @discardableResult
    public func delete<T: Model & Sendable>(_ values: [T]) async throws -> Int {
        try await performWrite { _ in try self.delete(values) }
    }

    /// Asynchronous ``delete(with:)``.
    ///
    /// ```swift
    /// try await db.delete(with: Filter(\Person.name, is: .equal(to: "Bob")))
    /// ```
    @discardableResult
    public func delete<T: Model & Sendable>(with filter: Filter<T>) async throws -> Int {
        try await performWrite { _ in try self.delete(with: filter) }
    }
}

extension SQLite.Database: ModelStore {
    /// An SQLite transaction's body is given the database itself: its calls join the transaction.
    public typealias TransactionStore = SQLite.Database
}
