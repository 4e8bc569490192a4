/// The async model API that both engines offer with the same spellings: `SQLite.Database` and,
/// with the `Postgres` trait, `Postgres.Database` and `Postgres.Transaction`.
///
/// Write a model and the functions that use it once, against the protocol, and run them on
/// either engine:
///
/// ```swift
/// struct Note: Model { var id: Int?; var text: String; var isArchived = false }
///
/// func archiveAll(in db: some ModelStore) async throws -> Int {
///     try await db.inTransaction { tx in
///         let notes = try await tx.get(with: Filter(\Note.isArchived, is: .equal(to: false)))
///         try await tx.save(notes.map { var note = $0; note.isArchived = true; return note })
///         return notes.count
///     }
/// }
///
/// try await archiveAll(in: SQLite.Database(path: "notes.sqlite"))
/// try await archiveAll(in: Postgres.Database(url: "postgres://localhost/notes"))
/// ```
///
/// The meaning is the same on both engines: a save inserts or replaces by id and returns the
/// values as stored (with assigned ids); filters, sorting and paging select the same rows;
/// `inTransaction` commits when its body returns and rolls back when it throws (nested, it is a
/// savepoint). Errors are the engine's own (`SQLite.Error`, `Postgres.Error`) or ``ModelError``.
/// One difference: on PostgreSQL a failed statement aborts the transaction, so a body that
/// catches the error and returns gets the transaction rolled back and an error (SQLSTATE `25P02`);
/// a statement run in a nested `inTransaction` (a savepoint) can fail alone on both engines.
///
/// Sendable: required; both databases are.
public protocol ModelStore: Sendable {
    /// What an ``inTransaction(_:)`` body is given: the same API, inside the transaction.
    associatedtype TransactionStore: ModelStore

    /// Inserts or replaces a value (by id); returns it as stored, with its id when one was assigned.
    @discardableResult func save<T: Model & Sendable>(_ value: T) async throws -> T
    /// Inserts or replaces many values, all or none; returns them as stored, in order.
    @discardableResult func save<T: Model & Sendable>(_ values: [T]) async throws -> [T]
    /// The values matching the filter, in its order and page.
    func get<T: Model & Sendable>(with filter: Filter<T>) async throws -> [T]
    /// The value with this id, or `nil`.
    func get<T: Model & Sendable>(_ type: T.Type, id: T.ID) async throws -> T? where T.ID: Sendable
    /// How many values match the filter (within its page, when it has one).
    func count<T: Model & Sendable>(with filter: Filter<T>) async throws -> Int
    /// Deletes the value with this id; whether there was one.
    @discardableResult func delete<T: Model & Sendable>(_ type: T.Type, id: T.ID) async throws -> Bool where T.ID: Sendable
    /// Deletes the stored values with these values' ids; how many there were.
    @discardableResult func delete<T: Model & Sendable>(_ values: [T]) async throws -> Int
    /// Deletes the values matching the filter; how many there were.
    @discardableResult func delete<T: Model & Sendable>(with filter: Filter<T>) async throws -> Int
    /// Stores a value under a key, replacing what was there.
    func store<T: Encodable & Sendable>(_ value: T, forKey key: String) async throws
    /// The value stored under a key, or `nil`.
    func value<T: Decodable & Sendable>(_ type: T.Type, forKey key: String) async throws -> T?
    /// Removes the value stored under a key; whether there was one.
    @discardableResult func removeValue(forKey key: String) async throws -> Bool
    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws or
    /// its task is cancelled. Nested, it is a savepoint.
    @discardableResult func inTransaction<R: Sendable>(_ body: (TransactionStore) async throws -> R) async throws -> R
    /// The values a filter matches whose searchable text matches `text`: best first, then in the
    /// filter's order; the filter's page, at most `limit` long.
    func search<T: Model & Sendable>(for text: String, in filter: Filter<T>, limit: Int?) async throws -> [SearchHit<T>]
}

extension ModelStore {
    /// Every stored value of the type: ``get(with:)`` with an empty filter.
    ///
    /// ```swift
    /// let everyone = try await db.get(Person.self)
    /// ```
    public func get<T: Model & Sendable>(_ type: T.Type) async throws -> [T] {
        try await get(with: Filter<T>())
    }

    /// How many values are stored: ``count(with:)`` with an empty filter.
    public func count<T: Model & Sendable>(_ type: T.Type) async throws -> Int {
        try await count(with: Filter<T>())
    }

    /// Deletes the stored value with this value's id; whether there was one.
    ///
    /// ```swift
    /// try await db.delete(billy)
    /// ```
    @discardableResult
    public func delete<T: Model & Sendable>(_ value: T) async throws -> Bool {
        try await delete([value]) > 0
    }

    /// The values whose searchable text matches what a person typed, best first, at most `limit`
    /// (`nil`: all): ``search(for:in:limit:)`` with an empty filter. See ``SearchableModel``.
    ///
    /// ```swift
    /// let hits = try await db.search(Note.self, for: "milk", limit: 20)
    /// ```
    public func search<T: Model & Sendable>(_ type: T.Type, for text: String, limit: Int? = nil) async throws -> [SearchHit<T>] {
        try await search(for: text, in: Filter<T>(), limit: limit)
    }

    /// The values a filter matches whose searchable text matches `text`, best first.
    ///
    /// ```swift
    /// let hits = try await db.search(for: "milk", in: Filter(\Note.isArchived, is: .equal(to: false)))
    /// ```
    public func search<T: Model & Sendable>(for text: String, in filter: Filter<T>) async throws -> [SearchHit<T>] {
        try await search(for: text, in: filter, limit: nil)
    }
}
