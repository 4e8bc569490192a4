#if Postgres
import Foundation
import PostgresNIO

extension Postgres {
    /// What ``Database`` and ``Transaction`` both offer: the model API and the key-value store,
    /// with the same spellings as on ``SQLite/Database``. Write helpers against it to use them in
    /// and out of transactions:
    ///
    /// ```swift
    /// func seed(_ db: some Postgres.Queryable) async throws {
    ///     try await db.save([Person(id: UUID(), name: "Ann", age: 31)])
    /// }
    /// try await seed(db)
    /// try await db.inTransaction { tx in try await seed(tx) }
    /// ```
    ///
    /// Only ``Database`` and ``Transaction`` conform: ``Handle`` cannot be made outside the library.
    ///
    /// Sendable: required.
    public protocol Queryable: Sendable {
        /// Where the statements run.
        var handle: Handle { get }
    }

    /// Where a ``Queryable``'s statements run; it has no public members.
    ///
    /// Sendable: yes.
    public struct Handle: Sendable {
        let session: Session
    }
}

extension Postgres.Database: ModelStore {}
extension Postgres.Transaction: ModelStore {}

extension Postgres.Database: Postgres.Queryable {
    /// The pool's connections.
    public var handle: Postgres.Handle { Postgres.Handle(session: session) }
}

extension Postgres.Transaction: Postgres.Queryable {
    /// The transaction's connection.
    public var handle: Postgres.Handle { Postgres.Handle(session: session) }
}

extension Postgres.Queryable {
    /// Runs SQL of your own, such as a migration (inside the transaction, for a ``Postgres/Transaction``).
    /// Arguments bind to `$1`, `$2`… as ``read(_:arguments:)``'s do, in their own types (cast them
    /// in the SQL where the server cannot tell: `$1::uuid`).
    ///
    /// ```swift
    /// try await db.execute("CREATE INDEX IF NOT EXISTS person_name ON \"Person\" (lower(name))")
    /// try await db.execute("UPDATE \"Person\" SET age = age + 1 WHERE name = $1", arguments: [.text("Bob")])
    /// ```
    ///
    /// On a ``Postgres/Database`` the statement runs in a transaction of its own, so that it is
    /// reported done only once committed; a statement PostgreSQL refuses to run in a transaction
    /// block (`VACUUM`, `CREATE INDEX CONCURRENTLY`, SQLSTATE 25001) runs on its own instead.
    public func execute(_ sql: String, arguments: [StoredValue] = []) async throws {
        try await executeBound(sql, Self.bindings(arguments))
    }

    /// ``execute(_:arguments:)`` with text arguments (`nil` binds `NULL`): the sync server's form.
    package func execute(_ sql: String, _ arguments: [String?]) async throws {
        try await executeBound(sql, Postgres.Session.textBindings(arguments))
    }

    private func executeBound(_ sql: String, _ binds: PostgresBindings) async throws {
        let session = handle.session
        do {
            try await session.writing { _ = try await $0.rows(sql, binds) }
        } catch let error as Postgres.Error where error.sqlState == "25001" && session.connection == nil {
            _ = try await session.rows(sql, binds)
        }
    }

    /// Inserts or replaces a value (by id); returns it as stored, with its id when PostgreSQL
    /// assigned one and its `Date`s at PostgreSQL's microsecond precision.
    ///
    /// ```swift
    /// let saved = try await db.save(Person(id: UUID(), name: "Bob", age: 20))
    /// ```
    @discardableResult
    public func save<T: Model & Sendable>(_ value: T) async throws -> T {
        guard let saved = try await handle.session.writing({ try await $0.save([value]) }).first else {
            throw ModelError(.unexpectedResult, T.self, "the save returned no row")
        }
        return saved
    }

    /// Inserts or replaces many values in one transaction; returns them as stored, in order. When
    /// several values have the same id the last one is stored (as saving them one by one would).
    ///
    /// The values are one statement with one array parameter per column; more than 10,000 values
    /// of a model whose ids the database does not assign are one statement per 10,000 (in id
    /// order), each sent while the next is encoded, so that the client's work and the server's
    /// overlap. Inside ``Database/inTransaction(_:)``, a save of several statements (that, or a
    /// graph) that fails part-way fails the transaction, as a failing statement does.
    ///
    /// ```swift
    /// try await db.save(people)
    /// ```
    @discardableResult
    public func save<T: Model & Sendable>(_ values: [T]) async throws -> [T] {
        try await handle.session.writing { try await $0.save(values) }
    }

    /// The values matching the filter, in its order and page.
    ///
    /// ```swift
    /// let adults = try await db.get(with: Filter(\Person.age, is: .greater(than: 17)).sort(by: \.name).limit(20))
    /// ```
    public func get<T: Model & Sendable>(with filter: Filter<T>) async throws -> [T] {
        try await handle.session.get(with: filter)
    }

    /// The `WHERE`, `ORDER BY` and `LIMIT` clauses ``get(with:)`` runs for `filter`, arguments
    /// as `$1`, `$2`… placeholders: to read what a filter or a `#Predicate` becomes.
    ///
    /// ```swift
    /// print(try await db.sql(for: Filter(#Predicate<Person> { $0.age > 17 })))
    /// // WHERE ("Person"."age" > $1::bigint)
    /// ```
    public func sql<T: Model & Sendable>(for filter: Filter<T>) async throws -> String {
        let table = try handle.session.plannedTable(for: T.self)
        var binds = PostgresBindings()
        return String(try filter.clauses(table: table, binds: &binds).dropFirst())
    }

    /// The value with this id, or `nil`.
    ///
    /// ```swift
    /// let bob = try await db.get(Person.self, id: bobID)
    /// ```
    public func get<T: Model & Sendable>(_ type: T.Type, id: T.ID) async throws -> T? where T.ID: Sendable {
        try await handle.session.get(T.self, id: id)
    }

    /// How many values match the filter (within its page, when it has one).
    ///
    /// ```swift
    /// let n = try await db.count(with: Filter(\Person.age, is: .between(15, and: 35)))
    /// ```
    public func count<T: Model & Sendable>(with filter: Filter<T>) async throws -> Int {
        try await handle.session.count(with: filter)
    }

    /// Deletes the value with this id; whether there was one.
    ///
    /// ```swift
    /// try await db.delete(Person.self, id: bobID)
    /// ```
    @discardableResult
    public func delete<T: Model & Sendable>(_ type: T.Type, id: T.ID) async throws -> Bool where T.ID: Sendable {
        try await handle.session.writing { try await $0.delete(T.self, ids: [id]) } > 0
    }

    /// Deletes these values (by id); how many were stored.
    ///
    /// ```swift
    /// try await db.delete(people)
    /// ```
    @discardableResult
    public func delete<T: Model & Sendable>(_ values: [T]) async throws -> Int {
        try await handle.session.writing { try await $0.delete(T.self, ids: values.map(\.id)) }
    }

    /// Deletes the values matching the filter (within its order and page); how many.
    ///
    /// ```swift
    /// try await db.delete(with: Filter(\Person.name, is: .equal(to: "Bob")))
    /// ```
    @discardableResult
    public func delete<T: Model & Sendable>(with filter: Filter<T>) async throws -> Int {
        try await handle.session.writing { try await $0.delete(with: filter) }
    }
}
#endif
