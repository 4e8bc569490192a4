#if Postgres
import Foundation

extension Postgres.Database: ObservableModelStore {
    /// Observes the values a filter matches, in its order: now, and after each commit (by any
    /// client of the server) that changes the model's table.
    ///
    /// ```swift
    /// for try await adults in db.observe(Filter(\Person.age, is: .greater(than: 17)).sort(by: \.name)) {
    ///     print(adults.map(\.name))
    /// }
    /// ```
    ///
    /// A read that fails because a connection was lost is tried again (after 50 ms, doubling up
    /// to 2 s) until the server answers: a restarted server pauses an observation, it does not
    /// end it. Any other failure ends it with that error.
    ///
    /// The first iteration creates the triggers that notify the table's changes (see "Observing
    /// changes" in the CodablePostgres overview) and opens the database's listening connection.
    /// It creates no table: a missing table reads as empty, and its creation by any client of
    /// the library reads again.
    public func observe<T: Model & Sendable>(_ filter: Filter<T>) -> ObservedValues<[T]> {
        liveQuery(T.self, when: { _ in true }) { database in try await database.get(with: filter) }
    }

    /// Observes the value with this id (`nil` while there is none). Commits that change other
    /// rows of the table do not read it again.
    ///
    /// ```swift
    /// for try await billy in db.observe(Person.self, id: billyID) { print(billy?.name ?? "gone") }
    /// ```
    public func observe<T: Model & Sendable>(_ type: T.Type, id: T.ID) -> ObservedValues<T?> where T.ID: Sendable {
        // The model's own table and link tables name the rows by its ids; a related table's
        // commit may change any value that links its rows.
        let schema = try? ModelReflection.of(T.self)
        let byID = Set([schema?.table].compactMap { $0 } + (schema?.relationships.filter(\.isToMany).map(\.linkTable) ?? []))
        return liveQuery(T.self, when: { !byID.contains($0.table) || $0.mayChange(id: id) }) { database in try await database.get(T.self, id: id) }
    }

    /// Observes how many values a filter matches.
    ///
    /// ```swift
    /// for try await n in db.observe(count: Filter(\Person.age, is: .less(than: 18))) { print(n, "minors") }
    /// ```
    public func observe<T: Model & Sendable>(count filter: Filter<T>) -> ObservedValues<Int> {
        liveQuery(T.self, when: { _ in true }) { database in try await database.count(with: filter) }
    }

    /// The ids each committed transaction (by any client of the server) inserts, updates and
    /// deletes, one batch per commit that changed the model's table, in commit order. Live when
    /// this returns: it waits for the table's triggers and the listening connection.
    ///
    /// ```swift
    /// for try await batch in try await db.changes(to: Person.self) {
    ///     print(batch.inserted, batch.updated, batch.deleted)   // Set<UUID>
    /// }
    /// ```
    ///
    /// A batch has `ChangeBatch.isComplete` `false` (and may name no ids) when the rows changed
    /// cannot be named: `TRUNCATE`, a statement that changed more than 1,000 rows, or a listening
    /// connection that was lost and is back.
    public func changes<T: Model & Sendable>(to type: T.Type) async throws -> ObservedValues<ChangeBatch<T.ID>> where T.ID: Sendable {
        let schema = try ModelReflection.of(T.self)
        let feed = BatchFeed<T.ID>(table: schema.table, listener: listener)
        do {
            if try await !startNotifying(T.self).hasTable {
                // The table does not exist yet: its creation is announced (see untilComplete).
                feed.untilComplete { [weak self] in
                    guard let started = try await self?.startNotifying(T.self) else { return (true, false) }
                    return (started.hasTable, started.madeTriggers)
                }
            }
            try await listener.subscribe(feed)
            // Created while this began listening (its announcement may have gone before): checked
            // again now that nothing more can be missed.
            feed.checkCreation()
        } catch {
            feed.cancel()
            throw error
        }
        return ObservedValues(running: feed)
    }

    /// Makes the model's table, and every table its values are read from (link tables, related
    /// models'), notify their changes, as far as they exist: an observation creates no model
    /// table. For a missing one it sets the schema up for observation, so that its creation (by
    /// any instance) makes it notify at once and is announced on the listening channel. Returns
    /// the tables to follow, the missing ones included, whether the model's own table exists,
    /// whether they all exist and notify, and whether this call made triggers (rows written
    /// before then were not named).
    @discardableResult
    func startNotifying<T: Model>(_ type: T.Type) async throws -> (tables: Set<String>, hasTable: Bool, isComplete: Bool, madeTriggers: Bool) {
        let names = Set(try ModelReflection.graphTables(of: T.self))
        guard let table = try await session.readTable(for: T.self) else {
            try await transaction { session in try await ChangeNotifications.setUp(model: T.self, in: self, on: session) }
            return (names, false, false, false)
        }
        let made = try await ChangeNotifications.install(on: table, in: self)
        return (names, true, Set(table.graphTables) == names, made)
    }

    /// A live query of `read` that reads again after the commits `when` accepts (and after a lost
    /// listening connection came back).
    func liveQuery<T: Model & Sendable, Value: Sendable>(
        _ type: T.Type, when: @escaping @Sendable (ChangeNotifications.TableCommit) -> Bool,
        read: @escaping @Sendable (Postgres.Database) async throws -> Value
    ) -> ObservedValues<Value> {
        ObservedValues { [weak self] in
            let subscription = Subscription(when: when, listener: self?.listener)
            let loop = RereadLoop(read: { [weak self] in
                // A lost connection is not the end: the pool and the listener open new ones (and
                // the listener's return reads again anyway), so the read is tried again.
                var delay = Duration.milliseconds(50)
                while true {
                    guard let self else { throw RereadLoop<Value>.Ended() }
                    do {
                        // Listening first, then the first read: no commit between the two is missed.
                        // Until every table exists, each read tries again (a creation is announced).
                        if subscription.needsRegistering {
                            var started = try await startNotifying(T.self)
                            subscription.follow(started.tables)
                            try await listener.subscribe(subscription)
                            if !started.isComplete {
                                // A table created while this began listening (its announcement
                                // may have gone before): made to notify now, before the read.
                                started = try await startNotifying(T.self)
                                subscription.follow(started.tables)
                            }
                            if started.isComplete { subscription.registered() }
                        }
                        return try await read(self)
                    } catch let error as Postgres.Error where error.code == .connection {
                        try await Task.sleep(for: delay)
                        delay = min(delay * 2, .seconds(2))
                    }
                }
            }, onEnd: { subscription.end() })
            subscription.onChange({ [weak loop] in loop?.changed() }, onClose: { [weak loop] in loop?.finish(with: nil) })
            return loop
        }
    }
}

/// A live query's place among the listener's subscribers: it tells the query's loop to read
/// again after the commits that may change its value.
private final class Subscription: ChangeSubscriber, @unchecked Sendable {  // mutable state is guarded by `lock`
    private let lock = NSLock()
    private var followed: Set<String> = []
    private var isRegistered = false
    private var changed: (@Sendable () -> Void)?
    private var closed: (@Sendable () -> Void)?
    private let when: @Sendable (ChangeNotifications.TableCommit) -> Bool
    /// Strong: the listener lets go of its subscribers when they end or it stops.
    private let listener: Listener?

    init(when: @escaping @Sendable (ChangeNotifications.TableCommit) -> Bool, listener: Listener?) {
        self.when = when
        self.listener = listener
    }

    var tables: Set<String> { lock.withLock { followed } }
    var wantsWholeTransactions: Bool { false }
    /// Whether the listener has yet to confirm that it listens for this subscription.
    var needsRegistering: Bool { lock.withLock { !isRegistered } }

    func registered() {
        lock.withLock { isRegistered = true }
    }

    func follow(_ tables: Set<String>) {
        lock.withLock { followed = tables }
    }

    func onChange(_ action: @escaping @Sendable () -> Void, onClose: @escaping @Sendable () -> Void) {
        lock.withLock {
            changed = action
            closed = onClose
        }
    }

    func committed(_ commit: ChangeNotifications.TableCommit) {
        if when(commit) { lock.withLock { changed }?() }
    }

    func resumed() {
        lock.withLock { changed }?()
    }

    func databaseClosed() {
        lock.withLock { closed }?()
    }

    func end() {
        listener?.unsubscribe(self)
    }
}

/// The batches behind ``Postgres/Database/changes(to:)``: one per committed transaction that
/// changed the table, each waiting for the consumer.
private final class BatchFeed<ID: Decodable & Hashable & Sendable>: ChangeSubscriber, ObservationSource, Sendable {
    let table: String
    var tables: Set<String> { [table] }
    var wantsWholeTransactions: Bool { true }
    private let listener: Listener
    private let mailbox = Mailbox<ChangeBatch<ID>>(.everyElement)
    /// While the table is missing: what makes it notify once it exists (whether it all does now,
    /// and whether it made triggers then).
    private let completion = Locked<(@Sendable () async throws -> (isComplete: Bool, madeTriggers: Bool))?>(nil)

    init(table: String, listener: Listener) {
        self.table = table
        self.listener = listener
    }

    func untilComplete(_ complete: @escaping @Sendable () async throws -> (isComplete: Bool, madeTriggers: Bool)) {
        completion.withLock { $0 = complete }
    }

    func committed(_ commit: ChangeNotifications.TableCommit) {
        // While the table is missing, a commit naming no rows of it is its creation, announced.
        guard completion.withLock({ $0 }) != nil, commit.statements.allSatisfy({ $0.kind == "*" }) else {
            mailbox.put(commit.batch(as: ID.self))
            return
        }
        checkCreation()
    }

    /// While the table is missing: whether it exists now. Its creator made it notify when the
    /// schema was set up for observation (this sequence did that); else the triggers are made
    /// now, and a batch that names no ids stands for the rows written before them.
    func checkCreation() {
        guard let complete = completion.withLock({ $0 }) else { return }
        Task { [weak self] in
            // A lost connection is not the end (as for live queries): tried again.
            var delay = Duration.milliseconds(50)
            while let feed = self, !feed.mailbox.isClosed {
                do {
                    let (exists, madeTriggers) = try await complete()
                    if exists { feed.completion.withLock { $0 = nil } }
                    if madeTriggers { feed.mailbox.put(ChangeBatch(inserted: [], updated: [], deleted: [], isComplete: false)) }
                    return
                } catch let error as Postgres.Error where error.code == .connection {
                    try? await Task.sleep(for: delay)
                    delay = min(delay * 2, .seconds(2))
                } catch {
                    _ = feed.mailbox.close(with: error)
                    return
                }
            }
        }
    }

    func resumed() {
        checkCreation()
        mailbox.put(ChangeBatch(inserted: [], updated: [], deleted: [], isComplete: false))
    }

    func databaseClosed() {
        mailbox.close(with: nil)
    }

    func start() {}

    func next() async throws -> ChangeBatch<ID>? {
        try await mailbox.take { [weak self] in self?.cancel() }
    }

    func cancel() {
        guard mailbox.close(with: nil) else { return }
        listener.unsubscribe(self)
    }
}
#endif
