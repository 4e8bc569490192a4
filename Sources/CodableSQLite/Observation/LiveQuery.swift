import Foundation

/// One running observation of a query: it re-reads the query after each commit that touches what
/// the query reads, and hands the newest value to its consumer.
///
/// - The first value is read as soon as the observer is registered, so no commit between the two
///   is missed.
/// - Reads are coalesced: commits that arrive while a read runs cause one more read after it, so
///   10,000 commits in a burst cost a few reads, and the last read always follows the last commit.
/// - The consumer gets the newest value only (a slow consumer never sees a backlog of stale ones);
///   a value equal to the last one delivered (when the values are `Equatable`) is not delivered.
/// - A failing read ends the observation with that error.
final class LiveQuery<Value: Sendable>: DatabaseObserver, @unchecked Sendable {  // mutable state is guarded by `lock`
    typealias Fetch = @Sendable (SQLite.Database) async throws -> (Value, DatabaseRegion?)

    private let lock = NSLock()
    private weak var database: SQLite.Database?
    private let fetch: Fetch
    private var currentRegion: DatabaseRegion?
    private var isReading = false
    private var readAgain = false
    private var reader: Task<Void, Never>?
    private var lastDelivered: Value?
    private let mailbox = Mailbox<Value>(.newestOnly)
    private var isFinished: Bool { mailbox.isClosed }
    /// How many times the query was read (for tests of precision).
    private var reads = 0
    var readCount: Int { lock.withLock { reads } }

    init(database: SQLite.Database?, region: DatabaseRegion?, fetch: @escaping Fetch) {
        self.database = database
        self.currentRegion = region
        self.fetch = fetch
    }

    deinit {
        reader?.cancel()
    }

    var region: DatabaseRegion? { lock.withLock { currentRegion } }

    private var isRegistered = false

    /// Starts observing: registers with the database (off the caller's thread) and reads the
    /// first value.
    func start() {
        scheduleRead()
    }

    /// Registers with the database once, before the first read, so that no commit between the
    /// two is missed. Starting to track changes waits for the writer: it runs on the writer's
    /// queue, never on the caller's thread.
    private func registerIfNeeded(with database: SQLite.Database) async throws {
        guard !lock.withLock({ isRegistered }) else { return }
        let center = database.observations
        try await database.performWrite { [self] _ in try center.add(self) }
        lock.withLock { isRegistered = true }
    }

    func databaseChanged(_ change: ObservedChange) {
        scheduleRead()
    }

    func databaseClosed() {
        finish(with: nil)
    }

    /// Stops observing: the consumer's next call returns `nil`, and nothing stays registered.
    func cancel() {
        finish(with: nil)
    }

    // MARK: Reading

    private func scheduleRead() {
        let start = lock.withLock { () -> Bool in
            guard !isFinished else { return false }
            if isReading {
                readAgain = true
                return false
            }
            isReading = true
            return true
        }
        guard start else { return }
        let task = Task { [weak self] in
            guard let self else { return }
            await readUntilCurrent()
        }
        lock.withLock { reader = task }
    }

    private func readUntilCurrent() async {
        while true {
            lock.withLock { readAgain = false }
            guard let database else { return finish(with: nil) }
            do {
                try await registerIfNeeded(with: database)
                lock.withLock { reads += 1 }
                let (value, region) = try await fetch(database)
                deliver(value, region: region)
            } catch {
                if Task.isCancelled { return }
                return finish(with: error)
            }
            let done = lock.withLock { () -> Bool in
                if readAgain && !isFinished { return false }
                isReading = false
                return true
            }
            if done { return }
        }
    }

    private func deliver(_ value: Value, region: DatabaseRegion?) {
        let regionChanged = lock.withLock { () -> Bool in
            guard let region, region != currentRegion else { return false }
            currentRegion = region
            return true
        }
        if regionChanged, let region { database?.observations.update(self, region: region) }
        let isNew = lock.withLock { () -> Bool in
            if let last = lastDelivered, areEqual(last, value) { return false }
            lastDelivered = value
            return true
        }
        if isNew { mailbox.put(value) }
    }

    private func finish(with error: (any Error)?) {
        guard mailbox.close(with: error) else { return }
        let (task, registered) = lock.withLock { (reader, isRegistered) }
        task?.cancel()
        if registered { database?.observations.remove(self) }
    }

    // MARK: Consuming

    /// The next value: the newest one not yet consumed, waiting for it if needed; `nil` once the
    /// observation ended or the calling task was cancelled.
    func next() async throws -> Value? {
        try await mailbox.take { [weak self] in self?.cancel() }
    }
}

/// Whether two values are equal, when their type is `Equatable` (checked at run time, so that
/// observations of any value type skip repeated equal values without asking for a constraint).
func areEqual<Value>(_ first: Value, _ second: Value) -> Bool {
    guard let first = first as? any Equatable else { return false }
    func isEqual<E: Equatable>(_ value: E) -> Bool { (second as? E) == value }
    return isEqual(first)
}
