@_exported import CodableSQLite
@_exported import CodableSyncProtocol
import Foundation

extension SQLite {
    /// Keeps a device's SQLite models in step with a PostgreSQL server, offline first: the app
    /// reads and writes its local database as always, and every device converges with the server
    /// when it is connected.
    ///
    /// ```swift
    /// let local = try SQLite.Database(path: "notes.sqlite")
    /// let server = try await Postgres.Database(url: "postgres://app@sync.example.com/app")
    /// let sync = try SQLite.Sync(local: local, server: server, models: [Note.self, Folder.self])
    /// Task { for await state in sync.states { print(state) } }
    /// try await sync.run()          // push and pull as changes happen, until cancelled
    /// ```
    ///
    /// - **Push:** every local commit that changes a synced model also writes which rows it
    ///   changed into an outbox, in the same transaction (triggers, whichever connection or
    ///   process writes). A push sends the rows' current values (or deletes) to the server in one
    ///   server transaction, oldest first, in batches, then clears those outbox entries. A push the
    ///   server already applied (the device lost the answer) is not applied twice.
    /// - **Pull:** the server logs the latest change of every row with a version. A device pulls
    ///   the changes after the version it pulled last, reads those rows, and applies them in one
    ///   local transaction that records the new version. Deletes travel as tombstones.
    ///   Relationships travel with their owners (a value is saved with its graph), and a cascade on
    ///   the server reaches every device as the deletes it caused.
    /// - **Conflicts:** the last writer wins, by the order in which changes reach the server. A row
    ///   with local changes not pushed yet is left alone by pulls: its push will reach the server
    ///   later, so it wins. A push that overwrites another device's change reports the losing
    ///   value on ``states`` as ``State/conflict(_:)``.
    /// - **Refusals:** a change the server refuses for good (a constraint, a value too large, a
    ///   unique value another device took first) is refused alone; the device keeps it with its
    ///   reason (``State/refused(_:)``, ``refusedChanges()``, ``resolve(_:_:)``) and goes on.
    ///
    /// Synced models need ids a device makes up alone: `UUID` or `String`. A model whose id the
    /// database assigns is refused, naming it (two devices offline would both take id 7).
    ///
    /// Sendable: its state is guarded by locks; one ``run()`` or ``sync()`` works at a time.
    public final class Sync: Sendable {
        /// Where a sync is.
        public enum State: Sendable {
            /// Everything is pushed and pulled.
            case idle
            /// Sending this many local changes.
            case pushing(Int)
            /// Applying this many server changes.
            case pulling(Int)
            /// The server cannot be reached, or a round failed; ``run()`` tries again.
            case offline(any Swift.Error)
            /// A push overwrote another device's change to the same row.
            case conflict(Conflict)
            /// A pulled row this app's model cannot decode was kept aside; the pull went on
            /// (see ``UndecodableRow``, ``undecodableRows()``).
            case undecodable(UndecodableRow)
            /// The server refused a change of this device for good, with the reason; the device
            /// keeps it until the app resolves it (see ``refusedChanges()``). The other changes
            /// went on.
            case refused(RefusedChange)
            /// The server dropped a pushed value's link to a row another writer had deleted,
            /// rather than create that row again; the value was saved without it.
            case linkDropped(SyncDroppedLink)
            /// The device starts over: it pulls everything again, keeping its own changes (see
            /// ``StartingOver``).
            case startingOver(StartingOver)
        }

        /// A row two writers changed, and the value that lost.
        ///
        /// Usually this device's push overwrote another device's (or a server-side writer's)
        /// change, and ``losingValue`` is what that writer had written. When ``lostHere`` is
        /// `true`, this device's delete lost instead: other rows still refer to the row, so the
        /// server (or this device, for a pulled delete) kept it, and ``losingValue`` is `nil`.
        public struct Conflict: Sendable, CustomStringConvertible {
            /// The model type's name.
            public let model: String
            /// The row's id, as text.
            public let id: String
            /// The value that lost, or `nil` when the losing change was a delete.
            public let losingValue: (any Model & Sendable)?
            /// Whether the change that lost is this device's (a delete the server refused).
            public let lostHere: Bool
            /// Whether the server merged the two changes (a ``SyncMergeable`` model): the row is
            /// now their merge, and ``losingValue`` is the other writer's value before it.
            public let wasMerged: Bool
            /// The value that lost as the server sent it (its model's JSON form), `nil` for a
            /// delete: there also when this app's model cannot decode it (a newer app version's
            /// value), where ``losingValue`` is `nil`.
            public let losingJSON: String?

            /// `Note 6F1C…: the server's value lost to this device's`
            public var description: String {
                if lostHere { return "\(model) \(id): this device's delete lost (other rows still refer to it)" }
                if wasMerged { return "\(model) \(id): merged with another writer's change" }
                if losingValue == nil, losingJSON != nil {
                    return "\(model) \(id): the server's value (which this app cannot decode) lost to this device's"
                }
                return "\(model) \(id): " + (losingValue == nil ? "a delete lost to this device's change" : "the server's value lost to this device's")
            }
        }

        /// The sync's failures (``SyncError``, the protocol's own error, the same on the device,
        /// the server and the wire), in this file and its extensions.
        typealias Error = SyncError

        let models: [SyncedModel]
        let outbox: LocalOutbox
        /// The server, directly or behind the app's own API.
        package let transport: any SyncTransport
        /// How many rows one push or pull round carries at most (a push no more than
        /// ``SyncPush/maximumChanges``, which the server takes).
        package let batchSize: Int
        /// How long ``run()`` waits between rounds when nothing wakes it.
        package let pollInterval: Duration
        let localInstalled = Locked(false)
        let isRunning = Locked(false)
        let subscribers = Locked<[UUID: AsyncStream<State>.Continuation]>([:])

        /// Syncs `local` through `transport`: the app's own API in front of a
        /// ``Postgres/SyncServer`` (see ``SyncTransport``).
        ///
        /// - Throws: ``Error/Code/unsyncableModel`` for a model whose ids the database assigns,
        ///   that are neither `UUID` nor `String`, or whose relationships lead to a model that is
        ///   not synced, naming it; ``Error/Code/invalidArgument`` for a `batchSize` below 1.
        public convenience init(
            local: SQLite.Database, transport: some SyncTransport, models: [any (Model & Sendable).Type],
            batchSize: Int = 500, pollInterval: Duration = .seconds(2)
        ) throws {
            try self.init(local: local, synced: SyncedModel.all(models), transport: transport, batchSize: batchSize, pollInterval: pollInterval)
        }

        package init(local: SQLite.Database, synced: [SyncedModel], transport: any SyncTransport, batchSize: Int, pollInterval: Duration) throws {
            guard batchSize > 0 else { throw Error(.invalidArgument, "batchSize must be at least 1, not \(batchSize)") }
            models = synced
            outbox = LocalOutbox(db: local, tables: synced.map(\.table))
            self.transport = transport
            self.batchSize = batchSize
            self.pollInterval = pollInterval
        }

        /// This device's id: made once per database file, and made again when the server finds
        /// the file is a copy of another device's (a file copied to a second device, or restored
        /// from a backup).
        public var deviceID: String {
            get async throws {
                try await prepareLocal()
                return try await outbox.state().device
            }
        }

        /// The states of this sync from now on, for as long as the loop iterates.
        public var states: AsyncStream<State> {
            let (stream, continuation) = AsyncStream<State>.makeStream(bufferingPolicy: .bufferingNewest(64))
            let key = UUID()
            subscribers.withLock { $0[key] = continuation }
            continuation.onTermination = { [weak self] _ in _ = self?.subscribers.withLock { $0.removeValue(forKey: key) } }
            return stream
        }

        func publish(_ state: State) {
            for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(state) }
        }

        /// One round: pushes every pending local change, then pulls every server change, in
        /// batches. Throws what failed; nothing is lost (the next round starts where this one
        /// stopped).
        ///
        /// - Throws: ``Error/Code/alreadyRunning`` while another ``run()`` or ``sync()`` of this
        ///   database file works (in this process or another); what the server or `local` threw.
        public func sync() async throws {
            let claim = try claim()
            defer { claim.release() }
            try await round()
        }

        /// Syncs until the task is cancelled: a round now, then one after each local commit that
        /// changes a synced model, after each server commit to one (when the transport signals them, as
        /// ``Postgres/SyncServer`` does with `LISTEN`/`NOTIFY`), and at least every
        /// ``pollInterval``. A failed round (the server is down) is reported as
        /// ``State/offline(_:)`` and tried again, waiting longer each time (up to 30 s).
        ///
        /// - Throws: `CancellationError` when cancelled; ``Error/Code/alreadyRunning``; what
        ///   preparing `local` threw (the server being unreachable is not an error: see above).
        public func run() async throws {
            let claim = try claim()
            defer { claim.release() }
            try await prepareLocal()
            let (wakeups, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            // Following the outbox before the first round, so that no local change is missed:
            // every local commit to a synced table (or its link tables) writes it, pulls do not.
            // Registering waits for the writer, which a transaction may hold: on a thread of its
            // own, never on one of the cooperative pool's (which that transaction needs to finish).
            // The feed crosses from that thread to this task through a lock, not as the
            // continuation's value: ThreadSanitizer sees a lock's ordering, and not a
            // continuation's (RELIABILITY.md, Known limits).
            let outbox = outbox
            let registered = Locked<ObservedValues<ChangeBatch<Int64>>?>(nil)
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().async {
                    let feed = outbox.db.changes(in: "codablesync_outbox")
                    registered.withLock { $0 = feed }
                    continuation.resume()
                }
            }
            guard let localChanges = registered.withLock({ $0 }) else {
                throw Error(.corruptState, "the outbox's change feed was not registered")
            }
            wake.yield(())
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    // After each commit that changed the outbox (a push that empties it too, which
                    // costs one round that finds nothing).
                    do {
                        for try await _ in localChanges { wake.yield(()) }
                    } catch {}
                }
                group.addTask { [transport] in
                    // After each server commit; a lost (or not yet reached) signal source is
                    // asked again, and a round follows each time it is back (a commit may have
                    // come meanwhile).
                    var delay = Duration.seconds(1)
                    while !Task.isCancelled {
                        do {
                            guard let signals = try await transport.serverChanges() else { return }
                            wake.yield(())
                            delay = .seconds(1)
                            for try await _ in signals { wake.yield(()) }
                        } catch {}
                        try? await Task.sleep(for: delay)
                        delay = min(delay * 2, .seconds(30))
                    }
                }
                group.addTask { [pollInterval] in
                    while !Task.isCancelled {
                        try? await Task.sleep(for: pollInterval)
                        wake.yield(())
                    }
                }
                var failures = 0
                for await _ in wakeups {
                    do {
                        try await self.round()
                        failures = 0
                    } catch where !Task.isCancelled {
                        failures += 1
                        self.publish(.offline(error))
                        try? await Task.sleep(for: .seconds(min(30, 1 << min(failures, 5))))
                    } catch {
                        break
                    }
                }
                group.cancelAll()
            }
            try Task.checkCancellation()
        }

        /// The right to sync this database file: one ``run()`` or ``sync()`` at a time, in this
        /// process (a flag) and across processes and instances (a lock on a file next to the
        /// database, `<path>.sync-lock`, which the system releases if the process dies).
        private func claim() throws -> Claim {
            let claimed = isRunning.withLock { running -> Bool in
                if running { return false }
                running = true
                return true
            }
            guard claimed else { throw Error(.alreadyRunning, "a sync of this database is already running") }
            do {
                return Claim(flag: isRunning, file: try FileClaim(databasePath: outbox.db.path))
            } catch {
                isRunning.withLock { $0 = false }
                throw error
            }
        }

        func prepareLocal() async throws {
            guard !localInstalled.withLock({ $0 }) else { return }
            try await outbox.install(models)
            localInstalled.withLock { $0 = true }
        }

        /// Pushes, then pulls, whatever the push did: a push the server refuses (a value it
        /// cannot decode, a failed merge) must not stop this device from receiving changes. Its
        /// error is thrown after the pull.
        private func round() async throws {
            try await prepareLocal()
            try await outbox.refreshTriggers(models)
            var pushError: (any Swift.Error)?
            do {
                while try await pushBatch() {}
            } catch {
                try Task.checkCancellation()
                pushError = error
            }
            while try await pullBatch() {}
            try await retryDeferredDeletes()
            try await retryUndecodable()
            if let pushError { throw pushError }
            publish(.idle)
        }
    }
}
