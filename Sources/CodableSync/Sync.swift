#if Postgres
@_exported import CodablePostgres
@_exported import CodableSQLite
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
        }

        /// A row two devices changed: the pushing device's value won, this one lost.
        public struct Conflict: Sendable, CustomStringConvertible {
            /// The model type's name.
            public let model: String
            /// The row's id, as text.
            public let id: String
            /// The value that lost, or `nil` when the losing change was a delete.
            public let losingValue: (any Model & Sendable)?

            /// `Note 6F1C…: the server's value lost to this device's`
            public var description: String {
                "\(model) \(id): " + (losingValue == nil ? "a delete lost to this device's change" : "the server's value lost to this device's")
            }
        }

        /// The sync engine's own failures, with a matchable code.
        public struct Error: Swift.Error, Sendable, CustomStringConvertible {
            /// A short stable name, such as `unsyncableModel`.
            public struct Code: Hashable, Sendable, CustomStringConvertible {
                public let name: String
                init(_ name: String) { self.name = name }
                /// A model that cannot be synced: ids the database assigns, or not UUID/String.
                public static let unsyncableModel = Code("unsyncableModel")
                /// The sync tables hold something the engine did not write.
                public static let corruptState = Code("corruptState")
                /// An argument out of range, such as a `batchSize` of 0.
                public static let invalidArgument = Code("invalidArgument")
                /// `run()` or `sync()` called while another is running.
                public static let alreadyRunning = Code("alreadyRunning")
                public var description: String { name }
                /// Whether `error` is a ``SQLite/Sync/Error`` with this code.
                public static func ~= (code: Code, error: any Swift.Error) -> Bool { (error as? SQLite.Sync.Error)?.code == code }
            }

            public let code: Code
            public let message: String
            init(_ code: Code, _ message: String) {
                self.code = code
                self.message = message
            }
            public var description: String { "sync: \(message)" }
        }

        let models: [SyncedModel]
        let outbox: LocalOutbox
        let log: ServerLog
        /// This device's id (made once per database file).
        public let deviceID: String
        /// How many rows one push or pull round carries at most.
        public let batchSize: Int
        /// How long ``run()`` waits between rounds when nothing wakes it.
        public let pollInterval: Duration
        let serverInstalled = Locked(false)
        let isRunning = Locked(false)
        let subscribers = Locked<[UUID: AsyncStream<State>.Continuation]>([:])

        /// Prepares `local` for sync (the outbox, the triggers on each model's table); the server is
        /// prepared on the first round.
        ///
        /// - Throws: ``Error/Code/unsyncableModel`` for a model whose ids the database assigns or
        ///   that are neither `UUID` nor `String`, naming it; `SQLite.Error` from `local`.
        public init(
            local: SQLite.Database, server: Postgres.Database, models: [any (Model & Sendable).Type],
            batchSize: Int = 500, pollInterval: Duration = .seconds(2)
        ) throws {
            guard batchSize > 0 else { throw Error(.invalidArgument, "batchSize must be at least 1, not \(batchSize)") }
            let synced = try models.map { try SyncedModel($0) }
            let types = Set(synced.map(\.type))
            for model in synced {
                if let missing = model.targets.first(where: { !types.contains($0.type) }) {
                    throw Error(.unsyncableModel, """
                        \(model.name) cannot be synced without \(missing.name), which its relationships lead to: \
                        add \(missing.name) to the synced models.
                        """)
                }
            }
            self.models = synced
            self.batchSize = batchSize
            self.pollInterval = pollInterval
            outbox = LocalOutbox(db: local)
            log = ServerLog(db: server)
            deviceID = try outbox.install(self.models)
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
        public func sync() async throws {
            try claim()
            defer { isRunning.withLock { $0 = false } }
            try await round()
        }

        /// Syncs until the task is cancelled: a round now, then one after each local commit to a
        /// synced model, and at least every ``pollInterval``. A failed round (the server is
        /// down) is reported as ``State/offline(_:)`` and tried again, waiting longer each time
        /// (up to 30 s).
        public func run() async throws {
            try claim()
            defer { isRunning.withLock { $0 = false } }
            let woken = Locked(false)
            await withTaskGroup(of: Void.self) { group in
                for model in models {
                    group.addTask { [outbox] in
                        // Wakes the loop after each local commit to the table (its own pulls too,
                        // which cost one round that finds nothing). Registering waits for the
                        // writer, which a transaction may hold: on a thread of its own, never on
                        // one of the cooperative pool's (which that transaction needs to finish).
                        let changes = await withCheckedContinuation { continuation in
                            DispatchQueue.global().async { continuation.resume(returning: outbox.db.changes(in: model.table)) }
                        }
                        do {
                            for try await _ in changes { woken.withLock { $0 = true } }
                        } catch {}
                    }
                }
                var failures = 0
                while !Task.isCancelled {
                    do {
                        try await self.round()
                        failures = 0
                    } catch where !(error is CancellationError) {
                        failures += 1
                        self.publish(.offline(error))
                    } catch {
                        break
                    }
                    let wait: Duration = failures == 0 ? self.pollInterval : .seconds(min(30, 1 << min(failures, 5)))
                    await Self.wait(until: woken, orFor: wait)
                }
                group.cancelAll()
            }
            try Task.checkCancellation()
        }

        private func claim() throws {
            let claimed = isRunning.withLock { running -> Bool in
                if running { return false }
                running = true
                return true
            }
            guard claimed else { throw Error(.alreadyRunning, "a sync of this database is already running") }
        }

        /// Waits until `woken` is set (and clears it), for `duration` at most, looking every 50 ms.
        private static func wait(until woken: Locked<Bool>, orFor duration: Duration) async {
            let deadline = ContinuousClock.now + duration
            while !Task.isCancelled, ContinuousClock.now < deadline {
                if woken.withLock({ flag in defer { flag = false }; return flag }) { return }
                try? await Task.sleep(for: .milliseconds(50))
            }
        }

        private func round() async throws {
            let installed = serverInstalled.withLock { $0 }
            if !installed {
                try await log.install(models)
                serverInstalled.withLock { $0 = true }
            }
            while try await pushBatch() {}
            while try await pullBatch() {}
            publish(.idle)
        }
    }
}
#endif
