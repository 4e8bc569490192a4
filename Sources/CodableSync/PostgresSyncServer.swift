#if Postgres
import CodablePostgres
import CodableSQLite
import Foundation

extension Postgres {
    /// The server side of sync, on PostgreSQL: applies devices' pushes and answers their pulls
    /// (``SyncTransport``). Devices that reach the server directly use it through
    /// `SQLite.Sync(local:server:models:)`; behind an app's own API, the server-side app serves
    /// its two calls:
    ///
    /// ```swift
    /// let syncServer = try Postgres.SyncServer(database: postgres, models: [Note.self, Folder.self])
    /// router.post("sync/push") { request in try await syncServer.push(request.decode(SyncPush.self)) }
    /// router.post("sync/pull") { request in try await syncServer.pull(request.decode(SyncPull.self)) }
    /// ```
    ///
    /// It creates what it needs on first use, idempotently and safely while other servers do the
    /// same: the models' tables, a change log (`codablesync_changes`, one entry per changed row
    /// with a version, filled by triggers whoever writes), and the pushes applied per device
    /// (`codablesync_devices`). Server-side code may write the synced tables as it likes: its
    /// changes reach every device.
    ///
    /// Sendable: immutable, apart from a lock-guarded "installed" flag.
    public struct SyncServer: SyncTransport {
        let models: [SyncedModel]
        let log: ServerLog
        private let installed = Locked(false)
        /// The most changes one pull answers with.
        public static let pullLimit = 10_000

        /// - Throws: `SQLite.Sync.Error.Code.unsyncableModel` for a model that cannot be synced,
        ///   naming it (see ``SQLite/Sync``).
        public init(database: Postgres.Database, models: [any (Model & Sendable).Type]) throws {
            self.models = try SyncedModel.all(models)
            log = ServerLog(db: database)
        }

        init(database: Postgres.Database, synced: [SyncedModel]) {
            models = synced
            log = ServerLog(db: database)
        }

        func install() async throws {
            guard !installed.withLock({ $0 }) else { return }
            try await log.install(models)
            installed.withLock { $0 = true }
        }

        private func model(of change: SyncChange) throws -> (SyncedModel, id: String) {
            guard let model = models.first(where: { $0.table == change.table }) else {
                throw SQLite.Sync.Error(.invalidArgument, "a change names the table \(change.table), which is not a synced model's here")
            }
            guard let id = model.canonicalID(change.id) else {
                throw SQLite.Sync.Error(.invalidArgument, "a change of \(model.name) names \(change.id), which is not one of its ids")
            }
            return (model, id)
        }

        /// Applies a push in one transaction, with one outcome per change (see ``SyncPushResult``):
        /// in the device's order, as runs of saves and runs of deletes (a delete that frees a
        /// unique value comes before the save that takes it); a related value inside a graph is
        /// only created when missing, and never when another writer deleted it (the link is
        /// dropped, and the answer says so); deletes as row deletes (what a delete rule did on
        /// the device travels as changes of its own). A change that fails for good (a constraint,
        /// a value too large, a unique value taken, a value the server cannot decode) is refused
        /// alone, with its reason; the others are applied. A push applied before (the same
        /// token), sent again at any time and in any order, changes nothing and gets its first
        /// answer again: the server keeps every push's token and answer (`codablesync_pushes`).
        ///
        /// - Throws: `SQLite.Sync.Error.Code.invalidArgument` for a change of a table or id that
        ///   is not a synced model's, or without its entry number (a malformed request, refused
        ///   whole); `Postgres.Error` for a failure that may pass (the connection, a deadlock).
        ///   Nothing is applied then.
        public func push(_ push: SyncPush) async throws -> SyncPushResult {
            try await apply(push, account: nil)
        }

        /// ``push(_:)``, on behalf of `account` when given (see ``push(_:as:)``).
        func apply(_ push: SyncPush, account: String?) async throws -> SyncPushResult {
            try await install()
            var latest: [SyncedModel.Row: ServerPush.Change] = [:]
            for change in push.changes {
                let (model, id) = try model(of: change)
                guard let seq = change.seq else {
                    throw SQLite.Sync.Error(.invalidArgument, "a pushed change of \(model.name) \(id) has no outbox entry number (seq)")
                }
                let row = SyncedModel.Row(table: model.table, id: id)
                if let known = latest[row], known.seq > seq { continue }
                latest[row] = ServerPush.Change(
                    model: model, id: id, seq: seq, base: change.version ?? 0, json: change.value, fields: change.fields.map(Set.init),
                    keys: change.keys.map(Set.init))
            }
            guard let upTo = push.changes.compactMap(\.seq).max() else { return SyncPushResult() }
            let ordered = latest.values.sorted { $0.seq < $1.seq }
            let models = models, log = log
            return try await log.db.inTransaction { tx -> SyncPushResult in
                let start = try await log.beginPush(tx, push, upTo: upTo, account: account)
                if let answer = start.answer { return answer }
                var application = ServerPush(
                    tx: tx, log: log, models: models, device: start.device, account: account, horizon: try await log.horizon(tx))
                var result = try await application.apply(ordered.filter { $0.seq > start.previous })
                if let refusal = result.refused.first, push.keepsRefused != true {
                    throw SQLite.Sync.Error(.changeRefused, "\(refusal.message) (\(refusal.reason)); nothing of this push is applied")
                }
                result.device = start.isNewDevice ? start.device : nil
                try await log.recordAnswer(tx, token: push.token, result)
                return result
            }
        }

        /// The changes after `pull.after`, oldest first, at most `pull.limit`, with each row's
        /// value as it is now (a row that is gone is a delete; a value newer than its log entry
        /// comes again with its later entry).
        ///
        /// At most ``pullLimit`` changes, whatever the request asks: a client behind an app's API
        /// cannot make the server read everything at once.
        ///
        /// - Throws: `SQLite.Sync.Error.Code.invalidArgument` for a limit below 1.
        public func pull(_ pull: SyncPull) async throws -> SyncPullResult {
            try await answer(pull, account: nil)
        }

        /// ``pull(_:)``, on behalf of `account` when given (see ``pull(_:as:)``).
        func answer(_ pull: SyncPull, account: String?) async throws -> SyncPullResult {
            guard pull.limit > 0 else { throw SQLite.Sync.Error(.invalidArgument, "a pull's limit must be at least 1, not \(pull.limit)") }
            try await install()
            let limit = min(pull.limit, Self.pullLimit)
            // The log first, then the epoch and horizon: a compaction that commits in between
            // moves the horizon this answer gives, so the device starts over rather than miss
            // the deletes it forgot.
            var entries = try await log.changes(after: pull.after, limit: limit, scoped: account.map { (ServerScopes(models: models), $0) })
            // An answer that saw the whole log ends at its newest version.
            let top = entries.last?.isTop == true ? entries.removeLast().version : nil
            let (epoch, horizon, ahead) = try await log.epoch(after: pull.after, deviceEpoch: pull.epoch)
            let behind = pull.after > 0 && pull.after < horizon
            if behind || ahead {
                // A device from before start-overs would take the empty answer as "nothing new".
                guard pull.startsOver == true else {
                    let why = behind ? "before the tombstone horizon \(horizon)" : "ahead of this server's log (restored from a backup)"
                    throw SQLite.Sync.Error(.startOverNeeded, """
                        device \(pull.device) pulled up to version \(pull.after), \(why): it must pull everything again, which \
                        this version of the app cannot; update it, or give it a new database file
                        """)
                }
                return SyncPullResult(changes: [], version: pull.after, more: false, epoch: epoch, horizon: horizon, ahead: ahead)
            }
            guard let last = entries.last else {
                return SyncPullResult(changes: [], version: max(pull.after, top ?? 0), more: false, epoch: epoch, horizon: horizon)
            }
            // Each entry's model and canonical id (entries of tables not synced here are left out).
            let resolved = entries.compactMap { entry -> (model: SyncedModel, id: String, version: Int64, isRemoval: Bool)? in
                guard let model = models.first(where: { $0.table == entry.table }), let id = model.canonicalID(entry.id) else { return nil }
                return (model, id, entry.version, entry.isRemoval)
            }
            var values: [String: [String: any Model & Sendable]] = [:]
            for model in models {
                let wanted = Set(resolved.filter { $0.model.table == model.table && !$0.isRemoval }.map(\.id))
                if !wanted.isEmpty { values[model.table] = try await model.serverValues(log.db, Array(wanted)) }
            }
            let changes = try resolved.map { entry in
                // A removal (a revoked share) is a delete on the device, whatever the row is here.
                SyncChange(table: entry.model.table, id: entry.id,
                           value: entry.isRemoval ? nil : try values[entry.model.table]?[entry.id].map(entry.model.encode), version: entry.version)
            }
            return SyncPullResult(
                changes: changes, version: max(last.version, top ?? 0), more: entries.count == limit, epoch: epoch, horizon: horizon)
        }

        /// A signal after each commit to a synced table (`LISTEN`/`NOTIFY`, on the database's
        /// listening connection).
        public func serverChanges() async throws -> AsyncThrowingStream<Void, any Swift.Error>? {
            try await install()
            return try await log.db.commitSignals(for: models.map(\.modelType))
        }
    }
}
#endif
