/// A live query: an `AsyncSequence` whose first element is the query's current value and whose
/// next elements are its new values, one after each committed transaction that changed what the
/// query reads. Both engines return it, and a change feed's batches come in it too
/// (`changes(to:)`, `changes(in:)`: see ``ChangeBatch``).
///
/// ```swift
/// for try await open in db.observe(Filter(\Task.isCompleted, is: .equal(to: false))) {
///     print(open.count, "open tasks")
/// }
/// ```
///
/// - **Precise.** On SQLite the query is read again only after a commit that wrote a table and
///   column it reads (SQLite's authorizer tells which, when the query is prepared), including
///   rows changed by triggers, foreign-key actions, `INSERT OR REPLACE`, UPSERT and `DELETE FROM
///   t` without a `WHERE`. On PostgreSQL, after a commit that changed the model's table (the row,
///   for `observe(_:id:)`). A rolled-back transaction never counts.
/// - **Every writer.** SQLite: commits by this database object are seen at once; commits by
///   another `SQLite.Database` on the same file or by another process (the `sqlite3` tool, a
///   second copy of the app) within about 50 ms. PostgreSQL: commits by any client of the server
///   (another app instance, `psql`), delivered by `LISTEN`/`NOTIFY`.
/// - **Newest value only.** A consumer slower than the commits gets the newest value, never a
///   backlog, and always the final state. When `Value` is `Equatable`, a value equal to the
///   previous one is not repeated. Bursts are coalesced: 10,000 commits in a row cost a few reads.
/// - **Errors end it.** A read that fails (the table was dropped) throws from the loop.
/// - **Lifetime.** Leaving the loop, or cancelling its task, stops the observation (on SQLite it
///   also removes what it installed; PostgreSQL's notify triggers stay with the table, for other
///   app instances). An observation never keeps the database alive.
///
/// Iterating starts the observation; each iteration is an observation of its own. (A change
/// feed is running already when it is returned, and is iterated once.)
///
/// Sendable: it only describes the query; the running observation belongs to its iterator.
public struct ObservedValues<Value: Sendable>: AsyncSequence, Sendable {
    public typealias Element = Value

    package let makeSource: @Sendable () -> any ObservationSource<Value>
    /// A source started when the sequence was made (a change feed), which iterations share.
    private let running: SourceLifetime<Value>?

    /// An observation whose values `makeSource` produces (each iteration makes one).
    package init(_ makeSource: @escaping @Sendable () -> any ObservationSource<Value>) {
        self.makeSource = makeSource
        running = nil
    }

    /// The elements `source` produces; the source is started already (live), and stops when the
    /// sequence and its iterators are gone.
    package init(running source: any ObservationSource<Value>) {
        let lifetime = SourceLifetime(source: source)
        running = lifetime
        makeSource = { lifetime.source }
    }

    /// The running observation an iteration would get, not started (for tests).
    package func makeQuery() -> any ObservationSource<Value> { makeSource() }

    /// Starts the observation.
    public func makeAsyncIterator() -> Iterator {
        if let running { return Iterator(lifetime: running) }
        let source = makeSource()
        source.start()
        return Iterator(lifetime: SourceLifetime(source: source))
    }

    /// Produces the observation's values.
    ///
    /// Not `Sendable`: it belongs to the loop that iterates it.
    public struct Iterator: AsyncIteratorProtocol {
        package let lifetime: SourceLifetime<Value>

        /// The newest value not yet seen, waiting for a commit when there is none; `nil` when
        /// the observation ended or the task was cancelled.
        public mutating func next() async throws -> Value? {
            try await lifetime.source.next()
        }
    }
}

@available(*, unavailable, message: "An iterator belongs to the loop that iterates it")
extension ObservedValues.Iterator: Sendable {}

/// What runs behind an ``ObservedValues`` iteration or a change feed: it starts, produces
/// elements until it ends, and stops when cancelled. Each engine has its own.
package protocol ObservationSource<Element>: AnyObject, Sendable {
    associatedtype Element: Sendable
    /// Starts producing (called once, before the first ``next()``).
    func start()
    /// The next element, waiting for it; `nil` once ended or when the calling task is cancelled.
    func next() async throws -> Element?
    /// Stops producing and removes what the source installed.
    func cancel()
    /// How many times the source read the database (for tests of precision).
    var readCount: Int { get }
}

extension ObservationSource {
    package var readCount: Int { 0 }
}

/// Stops a source when the iterator (or sequence) holding it goes away.
package final class SourceLifetime<Element: Sendable>: Sendable {
    package let source: any ObservationSource<Element>

    package init(source: any ObservationSource<Element>) {
        self.source = source
    }

    deinit {
        source.cancel()
    }
}
