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
    ///
    /// A push whose answer was lost is sent again as it was (its token, the entries up to its
    /// last one), so that the server recognises it; then new pushes go on.
    func pushBatch() async throws -> Bool {
        let state = try await outbox.state()
        var resend = state.token.flatMap { token in state.tokenUpTo.map { (token: token, upTo: $0) } }
        var entries = try await outbox.pending(limit: batchSize, upTo: resend?.upTo)
        if resend != nil, entries.isEmpty {
            try await outbox.forgetToken()
            resend = nil
            entries = try await outbox.pending(limit: batchSize)
        }
        guard let last = entries.last else { return false }
        publish(.pushing(entries.count))
        // The latest entry of each row decides (its current value, or its delete); the row's last
        // entry number says whether an earlier send of this push included it.
        // With the fields the row's entries changed: `nil` once one entry may have changed any.
        var latest: [String: [String: (seq: Int64, fields: Set<String>?)]] = [:]
        for entry in entries {
            guard let model = model(of: entry.table), let id = model.canonicalID(entry.id) else { continue }
            var fields = entry.fields
            if let earlier = latest[model.table]?[id] {
                fields = earlier.fields.flatMap { earlierFields in entry.fields.map { earlierFields.union($0) } }
            }
            latest[model.table, default: [:]][id] = (entry.seq, fields)
        }
        let pulled = try await outbox.pulledVersion()
        var changes: [SyncChange] = []
        var rows: [(table: String, id: String)] = []
        for model in models {
            guard let rowsOfModel = latest[model.table] else { continue }
            // A row deleted after its last entry was read is a delete too.
            let values = try await model.localValues(outbox.db, Array(rowsOfModel.keys))
            let skipped = try await outbox.skipped(in: model.table)
            for (id, entry) in rowsOfModel.sorted(by: { $0.value.seq < $1.value.seq }) {
                // A server change a pull left alone for this row is overwritten by this push.
                let base = skipped[id].map { min(pulled, $0 - 1) } ?? pulled
                changes.append(SyncChange(
                    table: model.table, id: id, value: try values[id].map(model.encode), seq: entry.seq, version: base,
                    fields: entry.fields?.sorted()))
                rows.append((model.table, id))
            }
        }
        guard !changes.isEmpty else {
            // Entries of tables this sync does not know (any more): nothing to send.
            try await outbox.discard(upTo: last.seq)
            if resend != nil { try await outbox.forgetToken() }
            return true
        }
        let token: String
        if let resend { token = resend.token } else { token = try await outbox.recordToken(upTo: last.seq) }
        let result = try await transport.push(SyncPush(device: state.device, token: token, acknowledged: state.acknowledged, changes: changes))
        try await outbox.pushed(upTo: last.seq, rows: rows, token: token, newDevice: result.device)
        for conflict in result.conflicts {
            guard let model = model(of: conflict.table) else { continue }
            // The changes are pushed already: a losing value this app cannot decode (a newer app
            // version's) is still reported, as its JSON.
            let value = conflict.lostHere ? nil : conflict.value.flatMap { try? model.decode($0, conflict.id) }
            publish(.conflict(Conflict(model: model.name, id: conflict.id, losingValue: value, lostHere: conflict.lostHere,
                                       wasMerged: conflict.merged, losingJSON: conflict.lostHere ? nil : conflict.value)))
        }
        // After a push sent again, the entries made since come next.
        return resend != nil || entries.count == batchSize
    }

    /// Pulls and applies the next server changes (one batch); `false` when there were none.
    func pullBatch() async throws -> Bool {
        let after = try await outbox.pulledVersion()
        let device = try await outbox.state().device
        let result = try await transport.pull(SyncPull(device: device, after: after, limit: batchSize))
        guard result.version > after else { return false }
        if !result.changes.isEmpty { publish(.pulling(result.changes.count)) }
        // The latest change of each row (its value now, or its delete), with its version. A value
        // this app's model cannot decode (a newer app version's) is kept aside; the pull goes on.
        var latest: [String: [String: (version: Int64, value: (any Model & Sendable)?)]] = [:]
        var undecodable: [LocalOutbox.Undecodable] = []
        for change in result.changes {
            guard let model = model(of: change.table), let id = model.canonicalID(change.id) else { continue }
            let version = change.version ?? result.version
            do {
                latest[model.table, default: [:]][id] = (version, try change.value.map { try model.decode($0, id) })
            } catch {
                latest[model.table]?[id] = nil
                undecodable.append(LocalOutbox.Undecodable(table: model.table, id: id, version: version, value: change.value ?? "", error: "\(error)"))
            }
        }
        let db = outbox.db, outbox = outbox, models = models, updates = latest, keptAside = undecodable
        try await outbox.applying(upTo: result.version) {
            try await outbox.keepAside(keptAside)
            // The device's copy of such a row is now behind the server's: a push of it overwrites
            // a change this device never saw, and reports it (as for a change a pull left alone).
            for row in keptAside { try await outbox.skip(table: row.table, ids: [row.id: row.version]) }
            var deletions: [(SyncedModel, [String])] = []
            for model in models {
                guard let rows = updates[model.table] else { continue }
                // A readable change of a row kept aside replaces it.
                try await outbox.forgetAside(table: model.table, ids: Array(rows.keys))
                // Rows changed here and not pushed yet stay as they are: their push reaches the
                // server after these changes, so it wins (and reports them as overwritten). Read
                // in the transaction, so that no local commit can come between the check and the
                // write.
                let pending = Set(try await outbox.pendingIDs(in: model.table).compactMap(model.canonicalID))
                let left = rows.filter { pending.contains($0.key) }
                if !left.isEmpty { try await outbox.skip(table: model.table, ids: left.mapValues(\.version)) }
                let saves = rows.filter { !pending.contains($0.key) && $0.value.value != nil }
                if !saves.isEmpty {
                    try await model.saveLocal(db, saves.compactMap(\.value.value))
                    try await outbox.undefer(table: model.table, ids: Array(saves.keys))
                    // Up to date again (a row kept aside was behind).
                    try await outbox.remove(Array(saves.keys), of: model.table, from: "codablesync_skipped")
                }
                deletions.append((model, rows.filter { !pending.contains($0.key) && $0.value.value == nil }.map(\.key)))
            }
            // Deletes after every save (see Postgres.SyncServer.push), in passes. A row that local
            // rows still refer to waits: a later batch may change those rows.
            let kept = try await SyncedModel.deleteInPasses(deletions) { model, ids in try await model.deleteLocal(db, ids) }
            for (model, ids) in kept {
                try await outbox.deferDeletes(table: model.table, ids: Dictionary(uniqueKeysWithValues: ids.compactMap { id in
                    updates[model.table]?[id].map { (id, $0.version) }
                }))
            }
        }
        for row in undecodable {
            publish(.undecodable(UndecodableRow(model: model(of: row.table)?.name ?? row.table, id: row.id, version: row.version, error: row.error)))
        }
        return result.more
    }

    /// Once every batch is applied: pulled deletes that local rows did not let go of are tried
    /// again. A row still needed is needed by a local change not pushed yet: it stays, and is
    /// pushed back (its delete lost, which that push reports).
    func retryDeferredDeletes() async throws {
        let deferred = try await outbox.deferred()
        guard !deferred.isEmpty else { return }
        let db = outbox.db, outbox = outbox, models = models
        try await outbox.applying(upTo: nil) {
            let kept = try await SyncedModel.deleteInPasses(models.compactMap { model in deferred[model.table].map { (model, Array($0.keys)) } }) { model, ids in
                try await model.deleteLocal(db, ids)
            }
            for (model, ids) in kept {
                try await outbox.keep(table: model.table, ids: ids)
                try await outbox.skip(table: model.table, ids: Dictionary(uniqueKeysWithValues: ids.compactMap { id in
                    deferred[model.table]?[id].map { (id, $0) }
                }))
            }
            try await outbox.clearDeferred()
        }
    }

}
#endif
