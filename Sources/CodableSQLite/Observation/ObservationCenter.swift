import Dispatch
import Foundation

/// What an observer is told after a commit.
enum ObservedChange: Sendable {
    /// This database's writer committed these changes.
    case local(DatabaseChanges)
    /// Another connection or process committed; what it changed is unknown.
    case external
}

/// Something that wants to know about commits: a live query, a change-batch sequence.
protocol DatabaseObserver: AnyObject, Sendable {
    /// What the observer reads; `nil` for everything.
    var region: DatabaseRegion? { get }
    /// Called after a commit that touches ``region`` (or any external commit), on the thread that
    /// committed or on the poller's queue: must only schedule work.
    func databaseChanged(_ change: ObservedChange)
    /// The database was released: the observation ends.
    func databaseClosed()
}

/// The live queries of one database: kept with the database by Core's attachment hook.
///
/// While at least one observer is registered, the writer collects what its transactions change
/// (``ChangeTracker``) and, for a file database, a timer checks every 50 ms whether another
/// connection or process committed (`PRAGMA data_version` on the writer, only when the writer is
/// free). With no observer, neither runs: writes cost what they cost before.
final class ObservationCenter: TransactionObserver, @unchecked Sendable {  // all mutable state is guarded by `lock`
    private struct Entry {
        weak var observer: (any DatabaseObserver)?
        /// What the observer reads, as last told; `nil` for everything.
        var region: DatabaseRegion?
    }

    private weak var database: SQLite.Database?
    private let lock = NSLock()
    private var entries: [ObjectIdentifier: Entry] = [:]
    /// The observers that read each table, so that a commit costs nothing to observers of other
    /// tables however many there are.
    private var readersByTable: [String: Set<ObjectIdentifier>] = [:]
    /// Observers whose region is not known yet (or is everything).
    private var readersOfEverything: Set<ObjectIdentifier> = []
    private var isTracking = false
    private var poller: DispatchSourceTimer?
    private var lastDataVersion: Int64?
    private let queue = DispatchQueue(label: "CodableSQLite.observation")

    /// How often other connections' commits are looked for.
    static let pollInterval: DispatchTimeInterval = .milliseconds(50)

    init(database: SQLite.Database) {
        self.database = database
    }

    /// The database is being released (it owns the center): every observation ends.
    deinit {
        poller?.cancel()
        for entry in entries.values { entry.observer?.databaseClosed() }
    }

    /// How many observers are registered (for tests).
    var observerCount: Int { lock.withLock { entries.values.filter { $0.observer != nil }.count } }

    /// Whether the writer collects changes (for tests).
    var isTrackingChanges: Bool { lock.withLock { isTracking } }

    /// Registers `observer`; from now on, no commit it should hear of is missed. Waits for the
    /// writer the first time, to start collecting changes between two transactions.
    func add(_ observer: any DatabaseObserver) throws {
        let region = observer.region
        let needsTracking = lock.withLock { () -> Bool in
            let identifier = ObjectIdentifier(observer)
            entries[identifier] = Entry(observer: observer, region: region)
            index(identifier, region: region)
            return !isTracking
        }
        guard needsTracking, let database else { return }
        try database.startTrackingChanges()
        // The baseline for other connections' commits, taken before the observer's first read.
        let version = database.externalDataVersion()
        lock.withLock {
            isTracking = true
            lastDataVersion = version
            startPollingLocked()
        }
    }

    /// The observer reads another region now (a live query learns its region from its first read).
    func update(_ observer: any DatabaseObserver, region: DatabaseRegion?) {
        lock.withLock {
            let identifier = ObjectIdentifier(observer)
            guard entries[identifier] != nil else { return }
            unindex(identifier)
            entries[identifier]?.region = region
            index(identifier, region: region)
        }
    }

    private func index(_ identifier: ObjectIdentifier, region: DatabaseRegion?) {
        guard let region else {
            readersOfEverything.insert(identifier)
            return
        }
        for table in region.tableNames { readersByTable[table, default: []].insert(identifier) }
    }

    private func unindex(_ identifier: ObjectIdentifier) {
        readersOfEverything.remove(identifier)
        guard let region = entries[identifier]?.region else { return }
        for table in region.tableNames {
            readersByTable[table]?.remove(identifier)
            if readersByTable[table]?.isEmpty == true { readersByTable[table] = nil }
        }
    }

    /// Unregisters `observer`; the last one out stops the tracking and the timer.
    func remove(_ observer: any DatabaseObserver) {
        remove(ObjectIdentifier(observer))
    }

    private func remove(_ identifier: ObjectIdentifier) {
        let stop = lock.withLock { () -> Bool in
            unindex(identifier)
            entries[identifier] = nil
            for (other, entry) in entries where entry.observer == nil {
                unindex(other)
                entries[other] = nil
            }
            guard entries.isEmpty, isTracking else { return false }
            isTracking = false
            poller?.cancel()
            poller = nil
            lastDataVersion = nil
            return true
        }
        guard stop, let database else { return }
        // Off the caller's thread: it may be the writer's, in the middle of a commit.
        queue.async { [weak self] in
            guard let self else { return }
            // Someone may have started observing again meanwhile: asked while holding the
            // writer, so that an observer registering now either is seen here or starts
            // tracking after this (checked before taking the writer, a new observer's tracking
            // could be stopped right after it started).
            try? database.stopTrackingChanges(unless: { lock.withLock { !entries.isEmpty } })
        }
    }

    /// Tells every observer whose region the change touches.
    /// What a commit of this database's writer changed (Core's transaction-observer channel).
    func changesDidCommit(_ changes: DatabaseChanges) {
        publish(.local(changes))
    }

    private func publish(_ change: ObservedChange) {
        let candidates = lock.withLock { () -> [(any DatabaseObserver, DatabaseRegion?)] in
            switch change {
            case .external:
                return entries.values.compactMap { entry in entry.observer.map { ($0, nil) } }
            case .local(let changes):
                var identifiers = readersOfEverything
                for table in changes.tables.keys {
                    if let readers = readersByTable[table] { identifiers.formUnion(readers) }
                }
                return identifiers.compactMap { identifier in
                    entries[identifier].flatMap { entry in entry.observer.map { ($0, entry.region) } }
                }
            }
        }
        for (observer, region) in candidates {
            if case .local(let changes) = change, let region, !changes.touches(region) { continue }
            observer.databaseChanged(change)
        }
    }

    private func startPollingLocked() {
        guard poller == nil, let database, database.writer.isFileBacked else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: Self.pollInterval, leeway: .milliseconds(10))
        timer.setEventHandler { [weak self] in self?.poll() }
        poller = timer
        timer.resume()
    }

    private func poll() {
        guard let version = database?.externalDataVersion() else { return }
        let changed = lock.withLock { () -> Bool in
            defer { lastDataVersion = version }
            // No baseline (the writer was busy when observing started): refresh to be sure.
            return lastDataVersion.map { $0 != version } ?? true
        }
        if changed { publish(.external) }
    }
}

extension SQLite.Database {
    /// The live queries of this database.
    var observations: ObservationCenter {
        attachment(ObservationCenter.self) { database in
            let center = ObservationCenter(database: database)
            database.addTransactionObserver(center)   // hears what each commit changed
            return center
        }
    }
}
