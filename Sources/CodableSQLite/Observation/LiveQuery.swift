import Foundation

/// One running observation of a query on SQLite: registered with the database's
/// ``ObservationCenter`` (with the region the query reads), it tells its ``RereadLoop`` to read
/// again after each commit that touches that region.
///
/// - The first value is read once the observer is registered, so no commit between the two is
///   missed.
/// - The region is learned with each read (SQLite's authorizer) and kept up to date in the center.
final class LiveQuery<Value: Sendable>: DatabaseObserver, ObservationSource, @unchecked Sendable {  // mutable state is guarded by `lock`
    typealias Fetch = @Sendable (SQLite.Database) async throws -> (Value, DatabaseRegion?)

    private let lock = NSLock()
    private weak var database: SQLite.Database?
    private var currentRegion: DatabaseRegion?
    private var isRegistered = false
    private let loop: RereadLoop<Value>

    init(database: SQLite.Database?, region: DatabaseRegion?, fetch: @escaping Fetch) {
        self.database = database
        self.currentRegion = region
        let box = WeakBox<LiveQuery>()
        loop = RereadLoop(read: {
            guard let query = box.object else { throw RereadLoop<Value>.Ended() }
            return try await query.read(with: fetch)
        }, onEnd: {
            box.object?.unregister()
        })
        box.object = self
    }

    var region: DatabaseRegion? { lock.withLock { currentRegion } }
    var readCount: Int { loop.readCount }

    func start() { loop.start() }
    func next() async throws -> Value? { try await loop.next() }
    func cancel() { loop.cancel() }

    func databaseChanged(_ change: ObservedChange) { loop.changed() }
    func databaseClosed() { loop.finish(with: nil) }

    private func read(with fetch: Fetch) async throws -> Value {
        guard let database else { throw RereadLoop<Value>.Ended() }
        try await registerIfNeeded(with: database)
        let (value, region) = try await fetch(database)
        let regionChanged = lock.withLock { () -> Bool in
            guard let region, region != currentRegion else { return false }
            currentRegion = region
            return true
        }
        if regionChanged, let region { database.observations.update(self, region: region) }
        return value
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

    private func unregister() {
        let registered = lock.withLock { isRegistered }
        if registered { database?.observations.remove(self) }
    }
}
