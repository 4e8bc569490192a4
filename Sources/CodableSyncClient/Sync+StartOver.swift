import CodableSQLite
import CodableSyncProtocol
import Foundation

/// A device starts over when the server's history is no longer the one it pulled from:
///
/// - **The server was restored** (another epoch, or the device is ahead of its log): the device
///   pushes every row it has again (the server lost some with what came after its backup, and
///   has older values of others) and pulls everything again; the rows only the server has come
///   down. Rows deleted after the backup come back (nobody remembers those deletes).
/// - **It was offline past the tombstone horizon** (the server forgot deletes it never pulled):
///   the device pulls everything again, and deletes the rows the server did not send.
///
/// Either way its changes not pushed yet (and refused ones) are kept, and pushed as usual. The
/// rows a pull sends while starting over are noted (`codablesync_seen`), so the last pull knows
/// which local rows the server did not have.
extension SQLite.Sync {
    /// How a device starts over (the state's `restart` value).
    enum StartOver: String {
        /// The server lost rows and changes: upload every row.
        case upload
        /// The server forgot deletes: delete the rows it did not send.
        case deleteMissing
    }

    /// Starts over if `result` says the server's history changed; `true` when it did (the pulled
    /// version is 0 again, and the pull goes on from there).
    func startOverIfNeeded(after version: Int64, known: String?, horizon knownHorizon: Int64?, _ result: SyncPullResult) async throws -> Bool {
        var how: StartOver?
        if let epoch = result.epoch, epoch != known {
            // No epoch yet: this device's first pull (or a server from before epochs).
            if known == nil { try await outbox.setState("epoch", .text(epoch)) } else { how = .upload }
        }
        if result.ahead == true { how = .upload }
        // Behind the horizon: it moved past this device's version since the last answer applied,
        // so deletes of rows it may have were forgotten. (A device paging from 0, new or starting
        // over, is below a horizon that was there when it began: not behind.) While starting
        // over, it begins again; an upload it owed stays owed.
        if how == nil, version > 0, let horizon = result.horizon, horizon > version, horizon > (knownHorizon ?? 0) { how = .deleteMissing }
        guard let how else { return false }
        try await outbox.startOver(how, epoch: result.epoch)
        publish(.startingOver(how == .upload ? .serverRestored : .offlineTooLong))
        return true
    }

    /// While applying the last pull of a start over: the rows of each model the server did not
    /// send (and that have no local change) are uploaded or deleted, as the start over says (an
    /// upload queued every row when it began, so a row here was made since by none of its pushes).
    func finishStartOver(_ how: StartOver) async throws {
        let db = outbox.db
        var missing: [(SyncedModel, [String])] = []
        for model in models {
            let seen = try await outbox.seen(in: model.table)
            let pending = Set(try await outbox.pendingIDs(in: model.table).compactMap(model.canonicalID))
            let local = try await db.read("SELECT \(ModelReflection.quotedID) AS id FROM \(SQLName.quoted(model.table))")
                .compactMap { $0["id"]?.stringValue.flatMap(model.canonicalID) }
            let ids = local.filter { !seen.contains($0) && !pending.contains($0) }
            if !ids.isEmpty { missing.append((model, ids)) }
        }
        switch how {
        case .upload:
            for (model, ids) in missing { try await outbox.keep(table: model.table, ids: ids) }
        case .deleteMissing:
            // A row that local changes still need stays, and is pushed back (as for a pulled
            // delete that lost).
            for (model, ids) in try await SyncedModel.deleteInPasses(missing, { model, ids in try await model.deleteLocal(db, ids) }) {
                try await outbox.keep(table: model.table, ids: ids)
            }
        }
        try await outbox.endStartOver()
    }

    /// Why a device starts over.
    public enum StartingOver: Sendable, Hashable {
        /// The server's history is not the one this device pulled from (restored from a backup,
        /// a replica promoted): everything is pulled again, and the rows the server lacks are
        /// uploaded.
        case serverRestored
        /// This device last pulled before the server's tombstone horizon: everything is pulled
        /// again, and the rows the server no longer has are deleted here.
        case offlineTooLong
        /// The server no longer remembers this device's pushes (the file is a copy of an old
        /// one, or the device was offline past the server's retention): it goes on under a new
        /// device id, pulls everything again and deletes the rows the server no longer has; its
        /// changes not pushed yet are kept and pushed.
        case forgotten
    }
}

extension LocalOutbox {
    static let seenTable = "CREATE TABLE IF NOT EXISTS codablesync_seen (tbl TEXT NOT NULL, id NOT NULL, PRIMARY KEY (tbl, id))"

    /// Back to version 0, in one transaction: the start over's kind, the new epoch; what the old
    /// history's versions named (rows left alone, deletes waiting, rows kept aside) is forgotten,
    /// as the pulls bring them again. An upload the start over already owed stays owed.
    func startOver(_ how: SQLite.Sync.StartOver, epoch: String?) async throws {
        let current = try await stateValue("restart").flatMap(SQLite.Sync.StartOver.init(rawValue:))
        try await db.inTransaction { _ in
            try await setState("restart", .text((current == .upload ? .upload : how).rawValue))
            if let epoch { try await setState("epoch", .text(epoch)) }
            _ = try await db.write("UPDATE codablesync_state SET value = 0 WHERE key = :key", arguments: ["key": .text(key("pulled"))])
            if how == .upload {
                // Every row this device has goes up again: the restored server lacks some, and
                // has older values of others. (Pulls leave rows with changes to push alone.)
                for table in tables {
                    _ = try await db.write(
                        "INSERT INTO codablesync_outbox (tbl, id, deleted) SELECT :table, \(ModelReflection.quotedID), 0 FROM \(SQLName.quoted(table))",
                        arguments: ["table": .text(table)])
                }
            }
            _ = try await db.execute(raw: """
                DELETE FROM codablesync_seen; DELETE FROM codablesync_skipped; DELETE FROM codablesync_deferred;
                DELETE FROM codablesync_undecodable;
                """)
        }
    }

    /// ``startOver(_:epoch:)`` (deleting what the server does not send) under a new device id,
    /// without a push in flight or answered: the server forgot this device's pushes.
    func startOverAsNewDevice() async throws {
        try await db.inTransaction { _ in
            try await startOver(.deleteMissing, epoch: nil)
            try await setState("device", .text(UUID().uuidString))
            try await removeState(["token", "token_upto", "acknowledged"])
        }
    }

    /// The start over in progress, if any.
    func startingOver() async throws -> SQLite.Sync.StartOver? {
        try await stateValue("restart").flatMap(SQLite.Sync.StartOver.init(rawValue:))
    }

    /// While applying a pull of a start over: the rows it sent.
    func markSeen(_ rows: [SyncedModel.Row]) async throws {
        for row in rows {
            _ = try await db.write("INSERT OR IGNORE INTO codablesync_seen (tbl, id) VALUES (:table, :id)", arguments: ["table": .text(row.table), "id": .text(row.id)])
        }
    }

    func seen(in table: String) async throws -> Set<String> {
        Set(try await db.read("SELECT id FROM codablesync_seen WHERE tbl = :table", arguments: ["table": .text(table)]).compactMap { $0["id"]?.stringValue })
    }

    func endStartOver() async throws {
        _ = try await db.execute(raw: "DELETE FROM codablesync_seen")
        try await removeState(["restart"])
    }
}
