#if Postgres
import CodablePostgres
import CodableSyncProtocol
import Foundation

/// One push applied on the server, in its transaction, with one outcome per change: applied (over
/// another writer's change: a conflict), or refused for good with a reason. A refused change never
/// holds back the others.
///
/// 1. Each value is decoded with the server's model (one it cannot decode is refused).
/// 2. Rows another writer changed since the device's base version are conflicts; a
///    ``SyncMergeable`` model's rows are merged (a failed merge is refused).
/// 3. Links to rows another writer deleted are dropped from the values (a delete wins over a
///    stale copy of a graph); a value that cannot be without such a row is refused.
/// 4. The changes are applied in the device's order (its outbox entries): runs of saves and runs
///    of deletes, so a delete that frees a unique value comes before the save that takes it.
///    Each run is tried in a savepoint; one that fails for good is halved until the changes that
///    fail are found, and those alone are refused.
struct ServerPush {
    /// A row's latest change in the push.
    struct Change {
        let model: SyncedModel
        let id: String
        let seq: Int64
        /// The server version the device had pulled when it made the change.
        let base: Int64
        let json: String?
        let fields: Set<String>?
        /// The keys the device's model has (`nil`: the value is whole).
        let keys: Set<String>?
        /// The value to save (decoded, then merged or without dropped links); `nil` for a delete.
        var value: (any Model & Sendable)?
        var row: SyncedModel.Row { SyncedModel.Row(table: model.table, id: id) }
        var isDelete: Bool { json == nil }
    }

    let tx: Postgres.Transaction
    let log: ServerLog
    let models: [SyncedModel]
    /// The device the changes are from (a copy's new id).
    let device: String
    /// The account the push is on behalf of (``ServerScopes``); `nil`: a trusted caller, unscoped.
    let account: String?
    /// Rows the push may create, with the account each becomes (``authorize(_:)``).
    var claimed: [SyncedModel.Row: String] = [:]
    /// The rows each change's save may create inside its value (related values at any depth
    /// that the server does not have), by the change's row: claimed only when it is applied.
    var created: [SyncedModel.Row: Set<SyncedModel.Row>] = [:]
    /// Rows the account may read: only their refusals carry the server's value.
    var readable: Set<SyncedModel.Row> = []
    /// The newest version whose tombstone the server forgot: a change made over an older one may
    /// link rows deleted since without a trace but their absence.
    let horizon: Int64
    private(set) var conflicts: [SyncedModel.Row: SyncConflict] = [:]
    var refused: [SyncedModel.Row: (reason: SyncRefusal.Reason, message: String)] = [:]
    private(set) var droppedLinks: [SyncDroppedLink] = []
    /// Rows the server stores otherwise than the device pushed them (a merge, links dropped):
    /// logged again, after the push's own entries.
    private var rewritten: Set<SyncedModel.Row> = []
    /// Deletes other rows still needed, by table, tried again at the end.
    private var waitingDeletes: [String: [String]] = [:]

    init(tx: Postgres.Transaction, log: ServerLog, models: [SyncedModel], device: String, account: String? = nil, horizon: Int64) {
        self.tx = tx
        self.log = log
        self.models = models
        self.device = device
        self.account = account
        self.horizon = horizon
    }

    /// Applies `changes` (each row's latest, oldest entry first) and returns the answer.
    mutating func apply(_ changes: [Change]) async throws -> SyncPushResult {
        try await lockRows(changes)
        var changes = try await decode(changes)
        try await authorize(changes)
        changes = try await findConflicts(changes)
        changes = try await dropLinksToDeletedRows(changes)
        var run: [Change] = []
        for change in changes where refused[change.row] == nil {
            if let first = run.first, first.isDelete != change.isDelete {
                try await applyRun(run)
                run = []
            }
            run.append(change)
        }
        try await applyRun(run)
        try await retryWaitingDeletes()
        // A save that met a unique value the push itself frees later (a row whose latest change
        // comes after it, a swap) goes once more, now that every other change is applied.
        let clashing = changes.filter { refused[$0.row]?.reason == .uniqueClash }
        for change in clashing { refused[change.row] = nil }
        try await applyRun(clashing)
        if account != nil {
            // Only what was written: a refused change's new rows stay no one's.
            let written = Set(changes.filter { refused[$0.row] == nil }.flatMap { change in
                [change.row] + (created[change.row] ?? [])
            })
            let scopes = ServerScopes(models: models)
            for owner in Set(claimed.values) {
                try await scopes.claim(tx, account: owner, rows: claimed.filter { $0.value == owner && written.contains($0.key) }.map { serverRow($0.key) })
            }
        }
        let applied = rewritten.filter { refused[$0] == nil }
        // Rows stored as pushed are not sent back to this device (deletes the foreign keys kept
        // were logged again already, by no device); those stored otherwise are logged again, for
        // every device (this one too).
        let asPushed = changes.filter { refused[$0.row] == nil && !rewritten.contains($0.row) }
        for model in models {
            try await log.markPushed(
                tx, table: model.table, ids: asPushed.filter { $0.model.table == model.table }.map { model.serverText($0.id) }, device: device)
            try await log.relog(tx, table: model.table, ids: applied.filter { $0.table == model.table }.map { model.serverText($0.id) })
        }
        return SyncPushResult(
            conflicts: changes.compactMap { refused[$0.row] == nil ? conflicts[$0.row] : nil },
            refused: try await refusals(in: changes), droppedLinks: droppedLinks.filter { refused[SyncedModel.Row(table: $0.table, id: $0.id)] == nil })
    }

    /// Locks the stored rows the push changes, until it commits (tables and ids in one order, so
    /// that two pushes lock them alike): a push to the same rows waits for this one, then sees its
    /// committed values and log entries (its conflicts and merges are decided on them). Pushes to
    /// other rows go on in parallel.
    private func lockRows(_ changes: [Change]) async throws {
        for model in models.sorted(by: { $0.table < $1.table }) {
            let ids = changes.filter { $0.model.table == model.table }.map { model.serverText($0.id) }
            guard !ids.isEmpty else { continue }
            let id = ModelReflection.quotedID
            _ = try await tx.textRows("""
                SELECT 1::text FROM \(SQLName.quoted(model.table)) WHERE \(id) = ANY($1::text[]::\(model.serverIDType)[]) ORDER BY \(id) FOR UPDATE
                """, [ServerLog.arrayLiteral(ids)])
        }
    }

    /// A row named by its canonical id, as the server's tables name it (`id::text`).
    func serverRow(_ row: SyncedModel.Row) -> SyncedModel.Row {
        SyncedModel.Row(table: row.table, id: models.first { $0.table == row.table }?.serverText(row.id) ?? row.id)
    }

    /// Refuses a change; a change refused already keeps its first reason (a `forbidden` one is
    /// never replaced by one that would tell the server's value).
    mutating func refuse(_ change: Change, _ reason: SyncRefusal.Reason, _ message: String) {
        if refused[change.row] == nil { refused[change.row] = (reason, message) }
    }

    /// Decodes each value with the server's model; one it cannot decode is refused. A value from
    /// a device whose model lacks keys the server's has (an older app version) keeps the stored
    /// row's values of those keys.
    private mutating func decode(_ changes: [Change]) async throws -> [Change] {
        var stored: [SyncedModel.Row: [String: Any]] = [:]
        for model in models {
            let older = changes.filter { change in
                change.model.table == model.table && change.json != nil && change.keys.map { !Set(model.keys).isSubset(of: $0) } == true
            }
            guard !older.isEmpty else { continue }
            for (id, value) in try await model.serverValues(tx, older.map(\.id)) {
                stored[.init(table: model.table, id: id)] = try JSONSerialization.jsonObject(with: Data(model.encode(value).utf8)) as? [String: Any]
            }
        }
        return changes.map { change in
            var change = change
            guard var json = change.json else { return change }
            do {
                if let keys = change.keys, let row = stored[change.row],
                   var pushed = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] {
                    for (key, value) in row where !keys.contains(key) && pushed[key] == nil { pushed[key] = value }
                    json = String(decoding: try JSONSerialization.data(withJSONObject: pushed), as: UTF8.self)
                }
                change.value = try change.model.decode(json, change.id)
            } catch {
                refuse(change, .undecodable, "the server cannot decode the pushed \(change.model.name) \(change.id): \(error)")
            }
            return change
        }
    }

    /// Records the rows other writers changed after each change's base version (the push
    /// overwrites them), and merges ``SyncMergeable`` models' values with the server's.
    private mutating func findConflicts(_ changes: [Change]) async throws -> [Change] {
        var changes = changes
        for model in models {
            let indices = changes.indices.filter { changes[$0].model.table == model.table && refused[changes[$0].row] == nil }
            guard !indices.isEmpty else { continue }
            let lost = try await log.overwritten(
                tx, table: model.table, rows: indices.map { (model.serverText(changes[$0].id), changes[$0].base) }, device: device)
            let losing = try await model.serverValues(tx, lost.filter { !$0.deleted }.compactMap { model.canonicalID($0.id) })
            for (serverID, deleted) in lost {
                let id = model.canonicalID(serverID) ?? serverID
                guard let index = indices.first(where: { changes[$0].id == id }) else { continue }
                var conflict = SyncConflict(table: model.table, id: id, value: try deleted ? nil : losing[id].map(model.encode))
                // Both changed the row: a mergeable model keeps the merge of the two.
                if let merge = model.merge, let mine = changes[index].value, let current = losing[id] {
                    do {
                        changes[index].value = try merge(mine, current, changes[index].fields)
                        conflict.merged = true
                        rewritten.insert(changes[index].row)
                    } catch {
                        refuse(changes[index], .mergeFailed, "\(model.name).merge failed for \(id): \(error)")
                    }
                }
                conflicts[changes[index].row] = conflict
            }
        }
        return changes
    }

    /// A delete wins over a stale copy of a graph: a pushed value's links to rows another writer
    /// deleted (the log keeps their tombstones) are dropped, unless this push saves the row itself
    /// (an edit of a deleted row wins, as a conflict). A change made over a version before the
    /// tombstone horizon drops its links to rows the server does not have, too: their tombstones
    /// may be forgotten. A value that cannot be without one is refused.
    private mutating func dropLinksToDeletedRows(_ changes: [Change]) async throws -> [Change] {
        let saved = Set(changes.filter { !$0.isDelete }.map(\.row))
        var linked: [String: Set<String>] = [:], linkedFromBeforeHorizon: [String: Set<String>] = [:]
        for change in changes {
            guard let value = change.value else { continue }
            for row in change.model.related(value) where !saved.contains(row) {
                linked[row.table, default: []].insert(row.id)
                if change.base < horizon { linkedFromBeforeHorizon[row.table, default: []].insert(row.id) }
            }
        }
        var deleted: Set<SyncedModel.Row> = [], missing: Set<SyncedModel.Row> = []
        for (table, ids) in linked {
            guard let model = models.first(where: { $0.table == table }) else { continue }
            let rows = try await tx.textRows(
                "SELECT id FROM codablesync_changes WHERE tbl = $1 AND deleted AND id = ANY($2::text[])",
                [table, ServerLog.arrayLiteral(ids.map(model.serverText))])
            for row in rows { if let id = row.first.flatMap({ $0 }).flatMap(model.canonicalID) { deleted.insert(.init(table: table, id: id)) } }
            if let old = linkedFromBeforeHorizon[table] {
                let present = try await model.serverValues(tx, Array(old))
                for id in old where present[id] == nil { missing.insert(.init(table: table, id: id)) }
            }
        }
        guard !deleted.isEmpty || !missing.isEmpty else { return changes }
        var changes = changes
        for index in changes.indices where refused[changes[index].row] == nil {
            guard let value = changes[index].value else { continue }
            let gone = Set(changes[index].model.related(value)).intersection(changes[index].base < horizon ? deleted.union(missing) : deleted)
            guard !gone.isEmpty else { continue }
            let model = changes[index].model, id = changes[index].id
            guard let without = model.droppingLinks(value, gone) else {
                let names = gone.map { "\($0.table) \($0.id)" }.sorted().joined(separator: ", ")
                refuse(changes[index], .relatedDeleted, "\(model.name) \(id) cannot be saved without \(names), which another writer deleted")
                continue
            }
            changes[index].value = without
            rewritten.insert(changes[index].row)
            droppedLinks += gone.sorted { ($0.table, $0.id) < ($1.table, $1.id) }.map {
                SyncDroppedLink(table: model.table, id: id, relatedTable: $0.table, relatedID: $0.id)
            }
        }
        return changes
    }

    /// Applies a run of saves or of deletes; the changes that fail for good are refused.
    private mutating func applyRun(_ run: [Change]) async throws {
        guard let first = run.first else { return }
        let failures = first.isDelete ? try await delete(run) : try await save(run)
        for (change, error) in failures {
            guard let reason = SyncRefusal.reason(for: error) else { throw error }
            // On behalf of an account, without PostgreSQL's DETAIL: it may quote another
            // account's row (the key a unique value clashed with).
            let server = (error as? Postgres.Error).map { account == nil ? $0.message : $0.summary } ?? "\(error)"
            refuse(change, reason, "the server refused \(change.model.name) \(change.id): \(server)")
        }
    }

    /// Saves `changes` in a savepoint; when that fails for good, each half in one of its own, down
    /// to the single changes that fail, which it returns with their errors.
    private func save(_ changes: [Change]) async throws -> [(Change, any Swift.Error)] {
        let models = models
        do {
            try await tx.inTransaction { savepoint in
                for model in models {
                    let values = changes.filter { $0.model.table == model.table }.compactMap(\.value)
                    if !values.isEmpty { try await model.saveServer(savepoint, values) }
                }
            }
            return []
        } catch where SyncRefusal.reason(for: error) != nil {
            guard changes.count > 1 else { return [(changes[0], error)] }
            let half = changes.count / 2
            return try await save(Array(changes[..<half])) + save(Array(changes[half...]))
        }
    }

    /// Deletes rows in passes (a row other deleted rows refer to goes once they are gone). What
    /// stays waits for the push's later saves (a row that referred to it may be one of them,
    /// changed before the delete but saved with its latest value after it).
    private mutating func delete(_ changes: [Change]) async throws -> [(Change, any Swift.Error)] {
        let tx = tx
        let deletions = models.map { model in (model, changes.filter { $0.model.table == model.table }.map(\.id)) }
        let kept: [(SyncedModel, [String])]
        do {
            kept = try await tx.inTransaction { savepoint in
                try await SyncedModel.deleteInPasses(deletions) { model, ids in try await model.deleteServer(savepoint, ids) }
            }
        } catch where SyncRefusal.reason(for: error) != nil && changes.count > 1 {
            // A server rule refused one of them: each alone.
            var failed: [(Change, any Swift.Error)] = []
            for change in changes { failed += try await delete([change]) }
            return failed
        } catch where SyncRefusal.reason(for: error) != nil {
            return [(changes[0], error)]
        }
        for (model, ids) in kept { waitingDeletes[model.table, default: []] += ids }
        return []
    }

    /// Once every run is applied: the deletes that waited are tried again. What stays is needed
    /// by rows that stay: kept, logged again, and reported as a lost delete.
    private mutating func retryWaitingDeletes() async throws {
        guard !waitingDeletes.isEmpty else { return }
        let tx = tx
        let waiting = models.compactMap { model in waitingDeletes[model.table].map { (model, $0) } }
        let kept: [(SyncedModel, [String])]
        do {
            kept = try await tx.inTransaction { savepoint in
                try await SyncedModel.deleteInPasses(waiting) { model, ids in try await model.deleteServer(savepoint, ids) }
            }
        } catch where SyncRefusal.reason(for: error) != nil {
            // A rule of the server's refused one of them: what it refuses stays, as a lost delete.
            kept = waiting
        }
        for (model, ids) in kept {
            try await log.relog(tx, table: model.table, ids: ids.map(model.serverText))
            let current = try await model.serverValues(tx, ids)
            for id in ids {
                conflicts[.init(table: model.table, id: id)] = SyncConflict(
                    table: model.table, id: id, value: try current[id].map(model.encode), lostHere: true)
            }
        }
    }

    /// The refused changes, each with the row as the server keeps it.
    private func refusals(in changes: [Change]) async throws -> [SyncRefusal] {
        var refusals: [SyncRefusal] = []
        for model in models {
            let ids = changes.filter { $0.model.table == model.table && refused[$0.row] != nil }.map(\.id)
            guard !ids.isEmpty else { continue }
            // A row the account may not read is not told, not even whether it exists.
            let readable = ids.filter { id in
                let row = SyncedModel.Row(table: model.table, id: id)
                return account == nil || (self.readable.contains(row) && refused[row]?.reason != .forbidden)
            }
            let current = try await model.serverValues(tx, readable)
            for id in ids {
                guard let (reason, message) = refused[.init(table: model.table, id: id)] else { continue }
                refusals.append(SyncRefusal(table: model.table, id: id, reason: reason, message: message, serverValue: try current[id].map(model.encode)))
            }
        }
        return refusals
    }
}

extension SyncRefusal {
    /// The reason for a PostgreSQL error that applying the change again would meet again, `nil`
    /// for one that may pass later (a lost connection, a deadlock, a serialization failure, a
    /// table the server lacks): that fails the whole push, which the device sends again.
    static func reason(for error: any Swift.Error) -> Reason? {
        // A value the engine cannot store (a date past the year 9999, a NaN date): the value's
        // fault, refused alone, never the server's (found by Schemathesis: a 500).
        if error is EncodingError { return .invalidValue }
        guard let error = error as? Postgres.Error, error.code == .server, let state = error.sqlState else { return nil }
        switch state {
        case "23514": return .checkViolation
        case "23502": return .notNull
        case "23505": return .uniqueClash
        case "23503": return .foreignKey
        case "22001", "22003", "54000": return .tooLarge
        case "P0001": return .serverRule
        case _ where state.hasPrefix("22"): return .invalidValue
        case _ where state.hasPrefix("23"): return .constraint
        default: return nil
        }
    }
}
#endif
