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

        private func install() async throws {
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

        /// Applies a push in one transaction: the saves first (a related value inside a graph is
        /// only created when missing), then the deletes (as row deletes: what a delete rule did on
        /// the device travels as changes of its own). A push applied before (the same token),
        /// sent again at any time and in any order, changes nothing and gets its first answer
        /// again: the server keeps every push's token and answer (`codablesync_pushes`).
        ///
        /// - Throws: `SQLite.Sync.Error.Code.invalidArgument` for a change of a table or id that
        ///   is not a synced model's, or without its entry number; `DecodingError` for a value
        ///   that is not its model's JSON; `Postgres.Error`. Nothing is applied then.
        public func push(_ push: SyncPush) async throws -> SyncPushResult {
            try await install()
            var rows: [String: [String: (seq: Int64, base: Int64, value: (any Model & Sendable)?, fields: Set<String>?)]] = [:]
            for change in push.changes {
                let (model, id) = try model(of: change)
                guard let seq = change.seq else {
                    throw SQLite.Sync.Error(.invalidArgument, "a pushed change of \(model.name) \(id) has no outbox entry number (seq)")
                }
                let value = try change.value.map { try model.decode($0, id) }
                if let known = rows[model.table]?[id], known.seq > seq { continue }
                rows[model.table, default: [:]][id] = (seq, change.version ?? 0, value, change.fields.map(Set.init))
            }
            guard let upTo = push.changes.compactMap(\.seq).max() else { return SyncPushResult() }
            let models = models, log = log
            return try await log.db.inTransaction { tx -> SyncPushResult in
                let start = try await log.beginPush(tx, push, upTo: upTo)
                if let answer = start.answer { return answer }
                var result = SyncPushResult(device: start.isNewDevice ? start.device : nil)
                for model in models {
                    guard let changes = rows[model.table]?.filter({ $0.value.seq > start.previous }), !changes.isEmpty else { continue }
                    let lost = try await log.overwritten(
                        tx, table: model.table, rows: changes.map { (model.serverText($0.key), $0.value.base) }, device: start.device)
                    let losing = try await model.serverValues(tx, lost.filter { !$0.deleted }.compactMap { model.canonicalID($0.id) })
                    var pushed = changes.compactMapValues(\.value)
                    var merged: [String] = []
                    for (serverID, deleted) in lost {
                        let id = model.canonicalID(serverID) ?? serverID
                        var conflict = SyncConflict(table: model.table, id: id, value: try deleted ? nil : losing[id].map(model.encode))
                        // Both changed the row: a mergeable model keeps the merge of the two.
                        if let merge = model.merge, let mine = pushed[id], let current = losing[id] {
                            pushed[id] = try merge(mine, current, changes[id]?.fields ?? nil)
                            conflict.merged = true
                            merged.append(id)
                        }
                        result.conflicts.append(conflict)
                    }
                    if !pushed.isEmpty { try await model.saveServer(tx, Array(pushed.values)) }
                    // A merge is no one device's value: logged as the server's own change, so
                    // that a later push of this device's stale copy meets it as a conflict (and
                    // is merged again) rather than replacing it.
                    try await log.relog(tx, table: model.table, ids: merged.map(model.serverText))
                }
                // Deletes in passes, until one deletes nothing more: a row other deleted rows
                // refer to goes once they are gone, whatever the models' order. What stays is
                // needed by rows that stay: kept, logged again, and reported.
                let deletes = models.map { model in
                    (model, (rows[model.table] ?? [:]).filter { $0.value.seq > start.previous && $0.value.value == nil }.map(\.key))
                }
                for (model, kept) in try await SyncedModel.deleteInPasses(deletes, { model, ids in try await model.deleteServer(tx, ids) }) {
                    try await log.relog(tx, table: model.table, ids: kept.map(model.serverText))
                    let current = try await model.serverValues(tx, kept)
                    for id in kept {
                        result.conflicts.removeAll { $0.table == model.table && $0.id == id }
                        result.conflicts.append(SyncConflict(table: model.table, id: id, value: try current[id].map(model.encode), lostHere: true))
                    }
                }
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
            guard pull.limit > 0 else { throw SQLite.Sync.Error(.invalidArgument, "a pull's limit must be at least 1, not \(pull.limit)") }
            try await install()
            let limit = min(pull.limit, Self.pullLimit)
            let entries = try await log.changes(after: pull.after, limit: limit)
            guard let last = entries.last else { return SyncPullResult(changes: [], version: pull.after, more: false) }
            // Each entry's model and canonical id (entries of tables not synced here are left out).
            let resolved = entries.compactMap { entry -> (model: SyncedModel, id: String, version: Int64)? in
                guard let model = models.first(where: { $0.table == entry.table }), let id = model.canonicalID(entry.id) else { return nil }
                return (model, id, entry.version)
            }
            var values: [String: [String: any Model & Sendable]] = [:]
            for model in models {
                let wanted = Set(resolved.filter { $0.model.table == model.table }.map(\.id))
                if !wanted.isEmpty { values[model.table] = try await model.serverValues(log.db, Array(wanted)) }
            }
            let changes = try resolved.map { entry in
                SyncChange(table: entry.model.table, id: entry.id, value: try values[entry.model.table]?[entry.id].map(entry.model.encode),
                           version: entry.version)
            }
            return SyncPullResult(changes: changes, version: last.version, more: entries.count == limit)
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
