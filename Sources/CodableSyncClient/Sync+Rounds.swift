import CodableSQLite
import CodableSyncProtocol
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
        // Sent again whole, whatever the batch size is now: a part of it under its token would
        // get the whole push's answer, and the rest would be sent again as new changes.
        // A push carries at most what the protocol takes (SyncPush.maximumChanges).
        let pushSize = min(batchSize, SyncPush.maximumChanges)
        var entries = try await outbox.pending(limit: resend == nil ? pushSize : Int.max, upTo: resend?.upTo)
        if resend != nil, entries.isEmpty {
            try await outbox.forgetToken()
            resend = nil
            entries = try await outbox.pending(limit: pushSize)
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
                // (Versions are 1 or more, as answers are checked; one kept by an older version
                // of this code is clamped rather than trusted.)
                let base = skipped[id].map { min(pulled, max($0, 1) - 1) } ?? pulled
                changes.append(SyncChange(
                    table: model.table, id: id, value: try values[id].map(model.encode), seq: entry.seq, version: base,
                    fields: entry.fields?.sorted(), keys: values[id] == nil ? nil : model.keys))
                rows.append((model.table, id))
            }
        }
        guard !changes.isEmpty else {
            // Entries naming no row of this sync's models: nothing to send.
            try await outbox.discard(upTo: last.seq)
            if resend != nil { try await outbox.forgetToken() }
            return true
        }
        let token: String
        if let resend { token = resend.token } else { token = try await outbox.recordToken(upTo: last.seq) }
        let push = SyncPush(device: state.device, token: token, acknowledged: state.acknowledged, changes: changes)
        let result: SyncPushResult
        do {
            result = try await transport.push(push)
        } catch SyncError.Code.startOverNeeded {
            // The server no longer remembers this device's pushes (a copy of an old file, or
            // offline past its retention): everything is pulled again under a new device id; the
            // changes not pushed yet stay, and go as the new device's.
            try await outbox.startOverAsNewDevice()
            publish(.startingOver(.forgotten))
            return true
        }
        // Nothing of an answer that breaks the protocol is applied: the push stays recorded under
        // its token, and is sent again.
        try result.validate(for: push)
        // Refused changes stay here with their reasons, the device's value as it was sent.
        let sent = Dictionary(changes.map { (SyncedModel.Row(table: $0.table, id: $0.id), $0.value) }, uniquingKeysWith: { _, last in last })
        let refused = result.refused.compactMap { refusal -> (model: SyncedModel, row: LocalOutbox.Refused)? in
            guard let model = model(of: refusal.table), let id = model.canonicalID(refusal.id) else { return nil }
            return (model, LocalOutbox.Refused(
                table: model.table, id: id, reason: refusal.reason.name, message: refusal.message,
                value: sent[SyncedModel.Row(table: model.table, id: id)] ?? nil, serverValue: refusal.serverValue))
        }
        try await outbox.pushed(upTo: last.seq, rows: rows, refused: refused.map(\.row), token: token, newDevice: result.device)
        for (model, row) in refused { publish(.refused(RefusedChange(row, of: model))) }
        for link in result.droppedLinks { publish(.linkDropped(link)) }
        for conflict in result.conflicts {
            guard let model = model(of: conflict.table) else { continue }
            // The changes are pushed already: a losing value this app cannot decode (a newer app
            // version's) is still reported, as its JSON.
            let value = conflict.lostHere ? nil : conflict.value.flatMap { try? model.decode($0, conflict.id) }
            publish(.conflict(Conflict(model: model.name, id: conflict.id, losingValue: value, lostHere: conflict.lostHere,
                                       wasMerged: conflict.merged, losingJSON: conflict.lostHere ? nil : conflict.value)))
        }
        // After a push sent again, the entries made since come next.
        return resend != nil || entries.count == pushSize
    }

    /// Pulls and applies the next server changes (one batch); `false` when there were none.
    func pullBatch() async throws -> Bool {
        let after = try await outbox.pulledVersion()
        let device = try await outbox.state().device
        let epoch = try await outbox.stateValue("epoch")
        // While starting over, every row comes again, this device's own pushes too: the rows the
        // pages do not bring are deleted (or uploaded) at the end.
        let restarting = try await outbox.startingOver()
        let horizon = try await outbox.stateValue("horizon").flatMap { Int64($0) }
        let result = try await transport.pull(SyncPull(
            device: device, after: after, limit: batchSize, epoch: epoch, startsOver: true, horizon: horizon,
            restarting: restarting != nil ? true : nil))
        // Before anything of it is applied (its epoch included).
        try result.validate(after: after, limit: batchSize)
        if try await startOverIfNeeded(after: after, known: epoch, horizon: horizon, result) { return true }
        // A server from before `SyncPull.horizon` answers a start over's page below its horizon as
        // it would a device behind it: nothing, no more, the same version. That is not the last
        // page (whose version reaches the horizon): nothing is applied, and the start over waits
        // for an updated server rather than deleting the rows it has not received.
        if restarting != nil, after > 0, result.changes.isEmpty, !result.more, result.version == after, let top = result.horizon, top > after {
            return false
        }
        guard result.version > after || restarting != nil else { return false }
        if !result.changes.isEmpty { publish(.pulling(result.changes.count)) }
        // The latest change of each row (its value now, or its delete), with its version. A value
        // this app's model cannot decode (a newer app version's) is kept aside; the pull goes on.
        var latest: [String: [String: PulledRow]] = [:]
        var undecodable: [LocalOutbox.Undecodable] = []
        for change in result.changes {
            guard let model = model(of: change.table), let id = model.canonicalID(change.id) else { continue }
            let version = change.version ?? result.version
            do {
                latest[model.table, default: [:]][id] = PulledRow(version: version, json: change.value, value: try change.value.map { try model.decode($0, id) })
            } catch {
                latest[model.table]?[id] = nil
                undecodable.append(LocalOutbox.Undecodable(table: model.table, id: id, version: version, value: change.value ?? "", error: "\(error)"))
            }
        }
        let outbox = outbox, models = models, updates = latest, decodingFailures = undecodable
        let sent = result.changes.compactMap { change in
            model(of: change.table).flatMap { model in model.canonicalID(change.id).map { SyncedModel.Row(table: model.table, id: $0) } }
        }
        let keptAside = try await outbox.applying(upTo: max(result.version, after)) { () -> [LocalOutbox.Undecodable] in
            var keptAside = decodingFailures
            // The horizon known from now on: one that moves past a later pull's version means
            // deletes this device never received were forgotten.
            if let horizon = result.horizon { try await outbox.setState("horizon", .text(String(horizon))) }
            if restarting != nil { try await outbox.markSeen(sent) }
            var deletions: [(SyncedModel, [String])] = []
            var clashing: [(SyncedModel, [String: PulledRow])] = []
            for model in models {
                guard let rows = updates[model.table] else { continue }
                // A readable change of a row kept aside replaces it.
                try await outbox.forgetAside(table: model.table, ids: Array(rows.keys))
                // Rows changed here and not pushed yet (or refused) stay as they are: their push
                // reaches the server after these changes, so it wins (and reports them as
                // overwritten). Read in the transaction, so that no local commit can come between
                // the check and the write.
                let pending = Set(try await outbox.pendingIDs(in: model.table).compactMap(model.canonicalID))
                let left = rows.filter { pending.contains($0.key) }
                if !left.isEmpty {
                    try await outbox.skip(table: model.table, ids: left.mapValues(\.version))
                    try await outbox.updateRefused(table: model.table, serverValues: left.mapValues(\.json))
                }
                let saves = rows.filter { !pending.contains($0.key) && $0.value.value != nil }
                let (unsaved, aside) = try await self.applySaves(model, saves)
                keptAside += aside
                if !unsaved.isEmpty { clashing.append((model, unsaved)) }
                deletions.append((model, rows.filter { !pending.contains($0.key) && $0.value.value == nil }.map(\.key)))
            }
            // Deletes after every save, in passes (see ServerPush). A row that local rows still
            // refer to waits: a later batch may change those rows.
            let kept = try await SyncedModel.deleteInPasses(deletions) { model, ids in try await model.deleteLocal(outbox.db, ids) }
            for (model, ids) in kept {
                try await outbox.deferDeletes(table: model.table, ids: Dictionary(uniqueKeysWithValues: ids.compactMap { id in
                    updates[model.table]?[id].map { (id, $0.version) }
                }))
            }
            // Saves that met a unique value another local row held, once the deletes (and the
            // other saves) freed it; what still clashes makes room or waits aside.
            for (model, rows) in clashing { keptAside += try await self.applyClashing(model, rows) }
            try await outbox.keepAside(keptAside)
            // The device's copy of such a row is now behind the server's: a push of it overwrites
            // a change this device never saw, and reports it (as for a change a pull left alone).
            for row in keptAside { try await outbox.skip(table: row.table, ids: [row.id: row.version]) }
            if let restarting, !result.more { try await self.finishStartOver(restarting) }
            return keptAside
        }
        for row in keptAside {
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
