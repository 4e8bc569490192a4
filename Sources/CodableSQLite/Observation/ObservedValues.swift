extension SQLite {
    /// A live query: an `AsyncSequence` whose first element is the query's current value and
    /// whose next elements are its new values, one after each committed transaction that changed
    /// what the query reads.
    ///
    /// ```swift
    /// for try await open in db.observe([Task].self, using: "SELECT * FROM tasks WHERE isCompleted = 0 ORDER BY dueDate") {
    ///     print(open.count, "open tasks")
    /// }
    /// ```
    ///
    /// - **Precise.** The query is read again only after a commit that wrote a table and column it
    ///   reads (SQLite's authorizer tells which, when the query is prepared), including rows
    ///   changed by triggers, foreign-key actions, `INSERT OR REPLACE`, UPSERT and `DELETE FROM t`
    ///   without a `WHERE`. A rolled-back transaction never counts.
    /// - **Every writer.** Commits by this database object are seen at once; commits by another
    ///   `SQLite.Database` on the same file or by another process (the `sqlite3` tool, a second
    ///   copy of the app) within about 50 ms.
    /// - **Newest value only.** A consumer slower than the commits gets the newest value, never a
    ///   backlog, and always the final state. When `Value` is `Equatable`, a value equal to the
    ///   previous one is not repeated. Bursts are coalesced: 10,000 commits in a row cost a few reads.
    /// - **Errors end it.** A read that fails (the table was dropped) throws from the loop.
    /// - **Lifetime.** Leaving the loop, or cancelling its task, stops the observation and removes
    ///   what it installed. An observation never keeps the database alive.
    ///
    /// Iterating starts the observation; each iteration is an observation of its own.
    ///
    /// (Named `Observation` before: that name hid Apple's Observation module inside the `SQLite`
    /// namespace.)
    ///
    /// Sendable: it only describes the query; the running observation belongs to its iterator.
    public struct ObservedValues<Value: Sendable>: AsyncSequence, Sendable {
        public typealias Element = Value

        let makeQuery: @Sendable () -> LiveQuery<Value>

        /// Starts the observation.
        public func makeAsyncIterator() -> Iterator {
            let query = makeQuery()
            query.start()
            return Iterator(lifetime: Lifetime(query: query))
        }

        /// Produces the observation's values.
        ///
        /// Not `Sendable`: it belongs to the loop that iterates it.
        public struct Iterator: AsyncIteratorProtocol {
            let lifetime: Lifetime

            /// The newest value not yet seen, waiting for a commit when there is none; `nil` when
            /// the observation ended or the task was cancelled.
            public mutating func next() async throws -> Value? {
                try await lifetime.query.next()
            }
        }

        /// Stops the observation when the iterator goes away.
        final class Lifetime {
            let query: LiveQuery<Value>

            init(query: LiveQuery<Value>) {
                self.query = query
            }

            deinit {
                query.cancel()
            }
        }
    }
}

@available(*, unavailable, message: "An iterator belongs to the loop that iterates it")
extension SQLite.ObservedValues.Iterator: Sendable {}
