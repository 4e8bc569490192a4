/// A ``ModelStore`` whose values can be observed: live queries and change batches with the same
/// spellings and meaning on `SQLite.Database` and, with the `Postgres` trait, `Postgres.Database`.
///
/// ```swift
/// func showOpenTasks(of db: some ObservableModelStore) async throws {
///     for try await open in db.observe(Filter(\Task.isCompleted, is: .equal(to: false))) {
///         print(open.map(\.title))   // now, then after every commit that changes the tasks
///     }
/// }
/// ```
///
/// On both engines: the first value is the current one; then one value per commit that changed
/// the model's table (coalesced: a slow consumer gets the newest value only, never a backlog);
/// a rolled-back transaction is never seen; leaving the loop stops the observation. The engines
/// differ in what they learn from: SQLite sees this database object's commits at once (with the
/// columns and rows written) and other processes' within about 50 ms; PostgreSQL is told about
/// every client's commits by `LISTEN`/`NOTIFY` (see `Postgres.Database`'s observation article).
///
/// Sendable: required.
public protocol ObservableModelStore: ModelStore {
    /// The values a filter matches, in its order: now, and after each commit that changes them.
    func observe<T: Model & Sendable>(_ filter: Filter<T>) -> ObservedValues<[T]>
    /// The value with this id (`nil` while there is none); writes to other rows do not read it again.
    func observe<T: Model & Sendable>(_ type: T.Type, id: T.ID) -> ObservedValues<T?> where T.ID: Sendable
    /// How many values a filter matches, now and after each commit that may change the count.
    func observe<T: Model & Sendable>(count filter: Filter<T>) -> ObservedValues<Int>
    /// The ids each committed transaction inserts, updates and deletes, one batch per commit
    /// that changed the model's table, live as soon as this returns. (`async` for PostgreSQL,
    /// which installs the table's triggers and starts listening first; SQLite's returns at once.)
    func changes<T: Model & Sendable>(to type: T.Type) async throws -> ObservedValues<ChangeBatch<T.ID>> where T.ID: Sendable
    /// A search within a filter's values (see ``ModelStore/search(for:in:limit:)``): now, and
    /// after each commit that changes the model's table.
    func observeSearch<T: Model & Sendable>(for text: String, in filter: Filter<T>, limit: Int?) -> ObservedValues<[SearchHit<T>]>
}

extension ObservableModelStore {
    /// Every stored value of a model type, now and after each commit that changes the table:
    /// ``observe(_:)-(Filter<T>)`` with an empty filter.
    ///
    /// ```swift
    /// for try await people in db.observe(Person.self) { print(people.count) }
    /// ```
    public func observe<T: Model & Sendable>(_ type: T.Type) -> ObservedValues<[T]> {
        observe(Filter<T>())
    }

    /// A search's hits (see ``ModelStore/search(_:for:limit:)``): now, and after each commit that
    /// changes the model's table.
    ///
    /// ```swift
    /// for try await hits in db.observeSearch(Note.self, for: query, limit: 20) { show(hits) }
    /// ```
    public func observeSearch<T: Model & Sendable>(_ type: T.Type, for text: String, limit: Int? = nil) -> ObservedValues<[SearchHit<T>]> {
        observeSearch(for: text, in: Filter<T>(), limit: limit)
    }

    /// Every hit of a search within a filter's values, now and after each commit that changes them.
    public func observeSearch<T: Model & Sendable>(for text: String, in filter: Filter<T>) -> ObservedValues<[SearchHit<T>]> {
        observeSearch(for: text, in: filter, limit: nil)
    }
}
