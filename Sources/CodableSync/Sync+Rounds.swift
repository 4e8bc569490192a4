#if Postgres
import CodablePostgres
import CodableSQLite
import Foundation

extension SQLite.Sync {
    /// The model of a table, when it is synced.
    func model(of table: String) -> SyncedModel? {
        models.first { $0.table == table }
    }

    /// Pushes the oldest pending local changes (one batch); `false` when there were none.
    func pushBatch() async throws -> Bool {
        let entries = try await outbox.pending(limit: batchSize)
        guard let last = entries.last else { return false }
        publish(.pushing(entries.count))
        // The latest entry of each row decides (its current value, or its delete); the row's last
        // entry number says whether a push the server already has included it.
        var latest: [String: [String: (deleted: Bool, seq: Int64)]] = [:]
        for entry in entries {
            guard let model = model(of: entry.table), let id = model.canonicalID(entry.id) else { continue }
            latest[model.table, default: [:]][id] = (entry.deleted, entry.seq)
        }
        var writes: [(model: SyncedModel, values: [(seq: Int64, id: String, value: any Model & Sendable)], deletes: [(seq: Int64, id: String)])] = []
        for model in models {
            guard let rows = latest[model.table] else { continue }
            let saved = try await model.localValues(outbox.db, rows.filter { !$0.value.deleted }.map(\.key))
            // A row deleted after its last entry was read is a delete too.
            let values = saved.compactMap { id, value in rows[id].map { ($0.seq, id, value) } }
            let deletes = rows.filter { saved[$0.key] == nil }.map { ($0.value.seq, $0.key) }
            writes.append((model, values, deletes))
        }
        let pulled = try await outbox.pulledVersion()
        let device = deviceID
        let log = log
        let conflicts = try await log.db.inTransaction { tx -> [Conflict] in
            // Entries up to `previous` reached the server before (the device lost the answer):
            // sending them again could overwrite what others wrote since.
            guard let previous = try await log.beginPush(tx, device: device, upTo: last.seq) else { return [] }
            var conflicts: [Conflict] = []
            // Every save first, then every delete: a value moved away from a deleted one is saved
            // before the delete, whatever the models' order.
            for (model, values, deletes) in writes {
                let values = values.filter { $0.seq > previous }
                let deletes = deletes.filter { $0.seq > previous }.map(\.id)
                let ids = (values.map(\.id) + deletes).map(model.serverText)
                let lost = try await log.overwritten(tx, table: model.table, ids: ids, after: pulled, device: device)
                if !lost.isEmpty {
                    let losing = try await model.serverValues(tx, lost.filter { !$0.deleted }.compactMap { model.canonicalID($0.id) })
                    for (id, deleted) in lost {
                        let canonical = model.canonicalID(id) ?? id
                        conflicts.append(Conflict(model: model.name, id: canonical, losingValue: deleted ? nil : losing[canonical]))
                    }
                }
                if !values.isEmpty { try await model.saveServer(tx, values.map(\.value)) }
            }
            for (model, _, deletes) in writes {
                let deletes = deletes.filter { $0.seq > previous }.map(\.id)
                if !deletes.isEmpty { try await model.deleteServer(tx, deletes) }
            }
            return conflicts
        }
        for conflict in conflicts { publish(.conflict(conflict)) }
        try await outbox.remove(upTo: last.seq)
        return entries.count == batchSize
    }

    /// Pulls and applies the next server changes (one batch); `false` when there were none.
    func pullBatch() async throws -> Bool {
        let after = try await outbox.pulledVersion()
        let changes = try await log.changes(after: after, limit: batchSize)
        guard let last = changes.last else { return false }
        publish(.pulling(changes.count))
        var rows: [String: Set<String>] = [:]
        for change in changes {
            guard let model = model(of: change.table), let id = model.canonicalID(change.id) else { continue }
            rows[model.table, default: []].insert(id)
        }
        // The rows as they are now (newer than the log entries read, perhaps: later entries bring
        // the same values again); a row the server no longer has was deleted.
        var fetched: [(model: SyncedModel, values: [String: any Model & Sendable], deletes: [String])] = []
        for model in models {
            guard let ids = rows[model.table] else { continue }
            let current = try await model.serverValues(log.db, Array(ids))
            fetched.append((model, current, ids.filter { current[$0] == nil }))
        }
        let db = outbox.db, outbox = outbox, updates = fetched
        try await outbox.applying(upTo: last.version) {
            var deletions: [(SyncedModel, [String])] = []
            for (model, values, deletes) in updates {
                // Rows changed here and not pushed yet stay as they are: their push reaches the
                // server after these changes, so it wins. Read in the transaction, so that no
                // local commit can come between the check and the write.
                let pending = Set(try await outbox.pendingIDs(in: model.table).compactMap(model.canonicalID))
                let deletes = deletes.filter { !pending.contains($0) }
                let values = values.filter { !pending.contains($0.key) }.map(\.value)
                if !values.isEmpty { try await model.saveLocal(db, values) }
                deletions.append((model, deletes))
            }
            // Deletes after every save (see pushBatch).
            for (model, deletes) in deletions where !deletes.isEmpty { try await model.deleteLocal(db, deletes) }
        }
        return changes.count == batchSize
    }
}
#endif
