#if Postgres
@_exported import CodablePostgres
@_exported import CodableSyncProtocol
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
        /// The server's failures: ``SyncError``, the protocol's error, which a device receives
        /// with the same code.
        typealias Error = SyncError

        let models: [SyncedModel]
        let log: ServerLog
        private let installed = Locked(false)
        /// The most changes one pull answers with.
        package static let pullLimit = 10_000
        /// How long one statement of a push or a pull may run on PostgreSQL (30 s), waits for the
        /// log's lock included: a request that takes longer fails (503, try again) instead of
        /// holding a connection and the lock from every other account.
        static let statementTimeoutMilliseconds = 30_000

        /// - Throws: `SyncError.Code.unsyncableModel` for a model that cannot be synced,
        ///   naming it (see ``SQLite/Sync``).
        public init(database: Postgres.Database, models: [any (Model & Sendable).Type]) throws {
            self.models = try SyncedModel.all(models)
            log = ServerLog(db: database)
        }

        package init(database: Postgres.Database, synced: [SyncedModel]) {
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
                throw SyncError(.invalidArgument, "a change names the table \(change.table), which is not a synced model's here")
            }
            guard let id = model.canonicalID(change.id) else {
                throw SyncError(.invalidArgument, "a change of \(model.name) names \(change.id), which is not one of its ids")
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
        /// - Throws: `SyncError.Code.invalidArgument` for a change of a table or id that
        ///   is not a synced model's, or without its entry number, or a request over the protocol's
        ///   sizes (more than ``SyncPush/maximumChanges`` changes, see ``SyncPush/validate()``): a
        ///   malformed request, refused whole; `Postgres.Error` for a failure that may pass (the connection, a deadlock).
        ///   Nothing is applied then.
        public func push(_ push: SyncPush) async throws -> SyncPushResult {
            try await apply(push, account: nil)
        }

        /// ``push(_:)``, on behalf of `account` when given (see ``transport(for:)``).
        func apply(_ push: SyncPush, account: String?) async throws -> SyncPushResult {
            try push.validate()
            try await install()
            var latest: [SyncedModel.Row: ServerPush.Change] = [:]
            for change in push.changes {
                let (model, id) = try model(of: change)
                guard let seq = change.seq else {
                    throw SyncError(.invalidArgument, "a pushed change of \(model.name) \(id) has no outbox entry number (seq)")
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
            // Pushes run in parallel: two that lock rows in different orders (through related
            // values, foreign keys) may deadlock, and PostgreSQL ends one of them. Nothing of it
            // was applied; it runs again (a few times), as its device would send it again.
            return try await Self.retryingDeadlocks {
              try await log.db.inTransaction { tx -> SyncPushResult in
                try await tx.execute("SET LOCAL statement_timeout = \(Self.statementTimeoutMilliseconds)")
                let start = try await log.beginPush(tx, push, upTo: upTo, account: account)
                if let answer = start.answer { return try await replay(answer, tx: tx, account: account) }
                var application = ServerPush(
                    tx: tx, log: log, models: models, device: start.device, account: account, horizon: try await log.horizon(tx))
                var result = try await application.apply(ordered.filter { $0.seq > start.previous })
                if let refusal = result.refused.first, push.keepsRefused != true {
                    throw SyncError(.changeRefused, "\(refusal.message) (\(refusal.reason)); nothing of this push is applied")
                }
                result.device = start.isNewDevice ? start.device : nil
                try await log.recordAnswer(tx, token: push.token, result)
                return result
              }
            }
        }

        /// Runs `body` again when PostgreSQL ended its transaction for a deadlock or a
        /// serialization failure (40P01, 40001), up to 4 times; then throws that error (a 503: try
        /// again).
        static func retryingDeadlocks<T>(_ body: () async throws -> T) async throws -> T {
            var attempt = 0
            while true {
                do {
                    return try await body()
                } catch let error as Postgres.Error where ["40P01", "40001"].contains(error.sqlState ?? "") && attempt < 3 {
                    attempt += 1
                    try Task.checkCancellation()
                }
            }
        }

        /// A push's first answer given again: the values it carried are read again, as they are
        /// now, for the rows the account may read now (the ledger keeps none).
        private func replay(_ stored: ServerLog.StoredAnswer, tx: Postgres.Transaction, account: String?) async throws -> SyncPushResult {
            var answer = stored.answer
            let valuedConflicts = stored.valuedConflicts.filter { answer.conflicts.indices.contains($0) }
            let valuedRefusals = stored.valuedRefusals.filter { answer.refused.indices.contains($0) }
            let rows = valuedConflicts.map { (answer.conflicts[$0].table, answer.conflicts[$0].id) }
                + valuedRefusals.map { (answer.refused[$0].table, answer.refused[$0].id) }
            guard !rows.isEmpty else { return answer }
            var readable: Set<SyncedModel.Row>?
            if let account {
                let serverRows = rows.compactMap { row in models.first { $0.table == row.0 }.map { SyncedModel.Row(table: row.0, id: $0.serverText(row.1)) } }
                let access = try await ServerScopes(models: models).access(tx, account: account, rows: serverRows.map { ($0.table, $0.id) })
                readable = Set(access.inScope.keys)
            }
            var values: [SyncedModel.Row: String] = [:]
            for model in models {
                let ids = rows.filter { $0.0 == model.table }.map(\.1).filter { readable?.contains(.init(table: model.table, id: model.serverText($0))) ?? true }
                guard !ids.isEmpty else { continue }
                for (id, value) in try await model.serverValues(tx, ids) { values[.init(table: model.table, id: id)] = try model.encode(value) }
            }
            for index in valuedConflicts {
                answer.conflicts[index].value = values[.init(table: answer.conflicts[index].table, id: answer.conflicts[index].id)]
            }
            for index in valuedRefusals {
                answer.refused[index].serverValue = values[.init(table: answer.refused[index].table, id: answer.refused[index].id)]
            }
            return answer
        }

        /// The changes after `pull.after`, oldest first, at most `pull.limit`, with each row's
        /// value as it is now (a row that is gone is a delete; a value newer than its log entry
        /// comes again with its later entry).
        ///
        /// At most 10,000 changes, whatever the request asks: a client behind an app's API
        /// cannot make the server read everything at once.
        ///
        /// - Throws: `SyncError.Code.invalidArgument` for a malformed request: a limit below
        ///   1, a negative version, sizes over the protocol's (`SyncPull.validate()`).
        public func pull(_ pull: SyncPull) async throws -> SyncPullResult {
            try await answer(pull, account: nil)
        }

        /// ``pull(_:)``, on behalf of `account` when given (see ``transport(for:)``). The log, the
        /// epoch, the horizon and the values are read in one snapshot (a read-only repeatable-read
        /// transaction): a compaction or a push that commits meanwhile is wholly in a later answer.
        func answer(_ pull: SyncPull, account: String?) async throws -> SyncPullResult {
            try pull.validate()
            try await install()
            let limit = min(pull.limit, Self.pullLimit)
            let models = models, log = log
            return try await log.db.inTransaction { tx -> SyncPullResult in
                try await tx.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                try await tx.execute("SET LOCAL statement_timeout = \(Self.statementTimeoutMilliseconds)")
                // After version 0, the device's own pushes are left out (it has them); from 0 (a
                // new device) and for a device starting over (which must see every row, on every
                // page of its pull) nothing is.
                let restarting = pull.restarting == true
                var entries = try await log.changes(
                    after: pull.after, limit: limit, scoped: account.map { (ServerScopes(models: models), $0) },
                    excludingOrigin: pull.after > 0 && !restarting ? pull.device : nil, in: tx)
                // An answer that saw the whole log ends at its newest version.
                let top = entries.last?.isTop == true ? entries.removeLast().version : nil
                let (epoch, horizon, ahead) = try await log.epoch(after: pull.after, deviceEpoch: pull.epoch, in: tx)
                // Behind: the horizon moved past the device's version since the answer it last
                // applied (a device paging from 0, new or starting over, is below a horizon
                // that was there when it began: that is not being behind).
                let behind = pull.after > 0 && pull.after < horizon && horizon > (pull.horizon ?? 0)
                if behind || ahead {
                    // A device from before start-overs would take the empty answer as "nothing new".
                    guard pull.startsOver == true else {
                        let why = behind ? "before the tombstone horizon \(horizon)" : "ahead of this server's log (restored from a backup)"
                        throw SyncError(.startOverNeeded, """
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
                var values: [String: [String: String]] = [:]
                for model in models {
                    let wanted = Set(resolved.filter { $0.model.table == model.table && !$0.isRemoval }.map(\.id))
                    if !wanted.isEmpty { values[model.table] = try await model.serverJSON(tx, Array(wanted)) }
                }
                let changes = resolved.map { entry in
                    // A removal (a revoked share) is a delete on the device, whatever the row is here.
                    SyncChange(table: entry.model.table, id: entry.id,
                               value: entry.isRemoval ? nil : values[entry.model.table]?[entry.id], version: entry.version)
                }
                return SyncPullResult(
                    changes: changes, version: max(last.version, top ?? 0), more: entries.count == limit, epoch: epoch, horizon: horizon)
            }
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
