import CodableSQLite
import CodableSyncProtocol
import Foundation

/// How pulled values are saved on the device, in the pull's transaction, so that no row stops the
/// others:
/// - A value's links to rows this device deleted and has not pushed yet are left out (a delete
///   wins over a stale copy of a graph, here as on the server); a value that cannot be without
///   one waits aside until the delete reaches the server.
/// - A value that meets a unique value another local row holds is saved again once the batch's
///   other saves and deletes are done (a delete, or a swap, may free it). If it still clashes and
///   that local row is a change the server refused and never had, the local row makes room (its
///   value stays with its refusal); otherwise the pulled value waits aside, tried every round.
extension SQLite.Sync {
    /// A pulled row's latest change: its value (`nil`: a delete), as JSON and decoded.
    struct PulledRow: Sendable {
        let version: Int64
        let json: String?
        let value: (any Model & Sendable)?
    }

    /// Saves pulled `rows` of `model` (none with local changes). Returns the rows that met a unique
    /// value another local row holds (for ``applyClashing(_:_:)``) and those that wait aside.
    func applySaves(_ model: SyncedModel, _ rows: [String: PulledRow]) async throws
        -> (clashing: [String: PulledRow], aside: [LocalOutbox.Undecodable]) {
        guard !rows.isEmpty else { return ([:], []) }
        let deletedHere = try await outbox.pendingDeletes()
        var values: [String: any Model & Sendable] = [:]
        var aside: [LocalOutbox.Undecodable] = []
        for (id, row) in rows {
            guard let value = row.value else { continue }
            let gone = Set(model.related(value)).intersection(deletedHere)
            if gone.isEmpty {
                values[id] = value
            } else if let without = model.droppingLinks(value, gone) {
                values[id] = without
            } else {
                let names = gone.map { "\($0.table) \($0.id)" }.sorted().joined(separator: ", ")
                aside.append(LocalOutbox.Undecodable(
                    table: model.table, id: id, version: row.version, value: row.json ?? "",
                    error: "it cannot be without \(names), which this device deleted (kept aside until that delete reaches the server)"))
            }
        }
        let clashing = try await saveTolerantly(model, values)
        try await saved(model, values.keys.filter { !clashing.contains($0) })
        return (rows.filter { clashing.contains($0.key) }, aside)
    }

    /// Saves again the rows that met a unique value another local row held; a local row the
    /// server refused and never had makes room; the rest wait aside.
    func applyClashing(_ model: SyncedModel, _ rows: [String: PulledRow]) async throws -> [LocalOutbox.Undecodable] {
        let values = rows.compactMapValues(\.value)
        var clashing = try await saveTolerantly(model, values)
        if !clashing.isEmpty {
            let db = outbox.db, outbox = outbox
            // Refused, never on the server, and not changed here since (a later edit is the app's
            // answer to the refusal, and is pushed).
            let changedSince = Set(try await db.read(
                "SELECT id FROM codablesync_outbox WHERE tbl = :table", arguments: ["table": .text(model.table)]
            ).compactMap { $0["id"]?.stringValue.flatMap(model.canonicalID) })
            let neverOnServer = try await outbox.refused()
                .filter { $0.table == model.table && $0.serverValue == nil && !changedSince.contains($0.id) }.map(\.id)
            for id in clashing {
                guard let value = values[id] else { continue }
                for culprit in neverOnServer where culprit != id {
                    let madeRoom = try? await db.inTransaction { _ -> Bool in
                        guard try await model.deleteLocal(db, [culprit]).isEmpty else { return false }
                        try await model.saveLocal(db, [value])
                        return true
                    }
                    if madeRoom == true {
                        clashing.remove(id)
                        break
                    }
                }
            }
        }
        try await saved(model, values.keys.filter { !clashing.contains($0) })
        return clashing.compactMap { id in
            rows[id].map { row in
                LocalOutbox.Undecodable(
                    table: model.table, id: id, version: row.version, value: row.json ?? "",
                    error: "a unique value of it is held here by another row, with a local change (kept aside until that changes)")
            }
        }
    }

    /// Saves `values`, all at once or else one by one (each in a savepoint); returns the ids of
    /// those that met a unique value another local row holds.
    private func saveTolerantly(_ model: SyncedModel, _ values: [String: any Model & Sendable]) async throws -> Set<String> {
        let db = outbox.db
        guard !values.isEmpty else { return [] }
        do {
            try await db.inTransaction { _ in try await model.saveLocal(db, Array(values.values)) }
            return []
        } catch ModelError.Code.uniqueViolation where values.count > 1 {
            var clashing: Set<String> = []
            for (id, value) in values { clashing.formUnion(try await saveTolerantly(model, [id: value])) }
            return clashing
        } catch ModelError.Code.uniqueViolation {
            return Set(values.keys)
        }
    }

    /// Rows now as the server has them: a pulled delete deferred for them no longer holds, and
    /// they are up to date again (a row kept aside was behind).
    private func saved(_ model: SyncedModel, _ ids: [String]) async throws {
        guard !ids.isEmpty else { return }
        try await outbox.undefer(table: model.table, ids: ids)
        try await outbox.remove(ids, of: model.table, from: "codablesync_skipped")
    }
}
