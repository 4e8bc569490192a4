#if Postgres
import CodableSQLite
import Foundation

/// The device's side, in its own SQLite file: the outbox every local commit writes in the same
/// transaction (triggers on the synced tables, so a crash between commit and push loses nothing,
/// whichever connection or process wrote), and the sync state (the device's id, the server version
/// pulled last).
///
/// ```
/// codablesync_outbox(seq INTEGER PRIMARY KEY AUTOINCREMENT, tbl, id, deleted, fields)
/// codablesync_state(key PRIMARY KEY, value)   -- 'device', 'pulled', 'applying', 'token', 'token_upto', 'acknowledged'
/// codablesync_skipped(tbl, id, version)       -- server changes a pull left alone for a local one
/// codablesync_deferred(tbl, id, version)      -- pulled deletes local rows did not let go of yet
/// codablesync_undecodable(tbl, id, version, value, error)   -- pulled rows this app cannot decode
/// ```
///
/// Rows written while applying pulled changes are not local changes: the triggers skip them while
/// `applying` is 1, which only the pull's own transaction ever sees.
struct LocalOutbox: Sendable {
    let db: SQLite.Database

    /// One pending local change.
    struct Entry: Sendable {
        let seq: Int64
        let table: String
        let id: String
        let deleted: Bool
        /// The properties the change changed (`nil`: any of them, for a new row).
        let fields: Set<String>?
    }

    /// Creates the outbox and the state, and installs the triggers of each model's table (which
    /// it creates first when no value was saved yet). Idempotent; one transaction, so that no
    /// commit of another connection or process comes between a trigger's removal and its new
    /// version. On the writer's own thread, off the cooperative pool.
    func install(_ models: [SyncedModel]) async throws {
        let db = db
        try await db.inTransaction {
            for model in models { try model.prepareLocal(db) }
            _ = try db.execute(raw: """
                CREATE TABLE IF NOT EXISTS codablesync_outbox (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT, tbl TEXT NOT NULL, id NOT NULL, deleted INTEGER NOT NULL);
                CREATE TABLE IF NOT EXISTS codablesync_state (key TEXT PRIMARY KEY, value);
                CREATE TABLE IF NOT EXISTS codablesync_skipped (
                    tbl TEXT NOT NULL, id NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (tbl, id));
                CREATE TABLE IF NOT EXISTS codablesync_deferred (
                    tbl TEXT NOT NULL, id NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (tbl, id));
                INSERT OR IGNORE INTO codablesync_state (key, value) VALUES ('pulled', 0), ('applying', 0);
                \(Self.undecodableTable);
                """)
            // Outboxes made before changes named their fields.
            if !(try db.columns(in: "codablesync_outbox").contains { $0.name == "fields" }) {
                _ = try db.execute(raw: "ALTER TABLE codablesync_outbox ADD COLUMN fields TEXT")
            }
            _ = try db.write(
                "INSERT OR IGNORE INTO codablesync_state (key, value) VALUES ('device', :device)",
                arguments: ["device": .text(UUID().uuidString)])
            for model in models { try LocalOutbox(db: db).installTriggers(model) }
        }
    }

    /// The sync state: the device's id, the token of a push sent and not answered yet (with the
    /// last outbox entry it carried), the token of the last push answered.
    struct State {
        let device: String
        let token: String?
        let tokenUpTo: Int64?
        let acknowledged: String?
    }

    func state() async throws -> State {
        var values: [String: StoredValue] = [:]
        for row in try await db.read(
            "SELECT key, value FROM codablesync_state WHERE key IN ('device', 'token', 'token_upto', 'acknowledged')") {
            if let key = row["key"]?.stringValue, let value = row["value"] { values[key] = value }
        }
        guard let device = values["device"]?.stringValue else { throw SQLite.Sync.Error(.corruptState, "codablesync_state has no device id") }
        return State(device: device, token: values["token"]?.stringValue, tokenUpTo: values["token_upto"]?.int64Value,
                     acknowledged: values["acknowledged"]?.stringValue)
    }

    /// Records a new push's token and the last entry it carries, before it is sent: if its answer
    /// is lost, the same push (those entries, that token) is sent again, so the server recognises it.
    func recordToken(upTo seq: Int64) async throws -> String {
        let token = UUID().uuidString
        try await db.inTransaction { tx in
            _ = try await tx.write("INSERT OR REPLACE INTO codablesync_state (key, value) VALUES ('token', :token)", arguments: ["token": .text(token)])
            _ = try await tx.write("INSERT OR REPLACE INTO codablesync_state (key, value) VALUES ('token_upto', :seq)", arguments: ["seq": .integer(seq)])
        }
        return token
    }

    /// Forgets an unanswered push whose entries are all gone (nothing left to send again).
    func forgetToken() async throws {
        _ = try await db.write("DELETE FROM codablesync_state WHERE key IN ('token', 'token_upto')")
    }

    /// Removes entries up to `seq` that carry no change the server knows (tables no longer synced).
    func discard(upTo seq: Int64) async throws {
        _ = try await db.write("DELETE FROM codablesync_outbox WHERE seq <= :seq", arguments: ["seq": .integer(seq)])
    }

    /// The server answered the push `token` of the changes up to `seq` (of `rows`): removes
    /// them, and records the answer (and the device's new id, for a copy), in one transaction.
    func pushed(upTo seq: Int64, rows: [(table: String, id: String)], token: String, newDevice: String?) async throws {
        try await db.inTransaction { tx in
            _ = try await tx.write("DELETE FROM codablesync_outbox WHERE seq <= :seq", arguments: ["seq": .integer(seq)])
            for row in rows {
                _ = try await tx.write(
                    "DELETE FROM codablesync_skipped WHERE tbl = :table AND id = :id", arguments: ["table": .text(row.table), "id": .text(row.id)])
            }
            _ = try await tx.write("DELETE FROM codablesync_state WHERE key IN ('token', 'token_upto')")
            _ = try await tx.write(
                "INSERT OR REPLACE INTO codablesync_state (key, value) VALUES ('acknowledged', :token)", arguments: ["token": .text(token)])
            if let newDevice {
                _ = try await tx.write("UPDATE codablesync_state SET value = :device WHERE key = 'device'", arguments: ["device": .text(newDevice)])
            }
        }
    }

    /// The server versions of changes pulls left alone for rows of `table` changed here, by id:
    /// another writer's change at or after it is overwritten by this device's push.
    func skipped(in table: String) async throws -> [String: Int64] {
        var versions: [String: Int64] = [:]
        for row in try await db.read("SELECT id, version FROM codablesync_skipped WHERE tbl = :table", arguments: ["table": .text(table)]) {
            if let id = row["id"]?.stringValue, let version = row["version"]?.int64Value { versions[id] = version }
        }
        return versions
    }

    func installTriggers(_ model: SyncedModel) throws {
        let table = SQLName.quoted(model.table)
        let literal = StoredValue.text(model.table).description
        let skip = "WHEN (SELECT value FROM codablesync_state WHERE key = 'applying') IS NOT 1"
        // Rows saved before the table was synced are local changes, pushed once.
        let insertTrigger = "codablesync_\(model.table)_insert"
        let isNew = try db.read(
            "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = :name", arguments: ["name": .text(insertTrigger)]
        ).isEmpty
        if isNew {
            _ = try db.write("INSERT INTO codablesync_outbox (tbl, id, deleted) SELECT \(literal), \(ModelReflection.quotedID), 0 FROM \(table)")
        }
        // An update that changes nothing is not a change: the model layer upserts every value
        // it saves, the related values of a graph included. An update names the columns it
        // changed (`,text,done,`), for merges. The triggers are made again each time, so they
        // know the columns the table has now.
        let columns = try db.columns(in: model.table).map(\.name)
        let changed = columns.map { "OLD.\(SQLName.quoted($0)) IS NOT NEW.\(SQLName.quoted($0))" }.joined(separator: " OR ")
        let fields = "',' || " + columns.map {
            "(CASE WHEN OLD.\(SQLName.quoted($0)) IS NOT NEW.\(SQLName.quoted($0)) THEN \(StoredValue.text($0 + ",").description) ELSE '' END)"
        }.joined(separator: " || ")
        var sql = ""
        for (event, row, deleted) in [("INSERT", "NEW", 0), ("UPDATE", "NEW", 0), ("DELETE", "OLD", 1)] {
            let trigger = SQLName.quoted("codablesync_\(model.table)_\(event.lowercased())")
            let condition = event == "UPDATE" ? "\(skip) AND (\(changed))" : skip
            sql += """
                DROP TRIGGER IF EXISTS \(trigger);
                CREATE TRIGGER \(trigger) AFTER \(event) ON \(table) \(condition) BEGIN
                    INSERT INTO codablesync_outbox (tbl, id, deleted, fields)
                    VALUES (\(literal), \(row).\(ModelReflection.quotedID), \(deleted), \(event == "UPDATE" ? fields : "NULL"));
                END;

                """
        }
        // A link row of a to-many relationship written or removed (a value saved with other
        // related values, or a related value deleted) changes its owner, in that property.
        for link in model.links {
            let field = StoredValue.text(",\(model.linkFields[link] ?? link),").description
            for (event, row) in [("INSERT", "NEW"), ("DELETE", "OLD")] {
                let trigger = SQLName.quoted("codablesync_\(link)_\(event.lowercased())")
                sql += """
                    DROP TRIGGER IF EXISTS \(trigger);
                    CREATE TRIGGER \(trigger) AFTER \(event) ON \(SQLName.quoted(link)) \(skip) BEGIN
                        INSERT INTO codablesync_outbox (tbl, id, deleted, fields) VALUES (\(literal), \(row)."owner", 0, \(field));
                    END;

                    """
            }
        }
        _ = try db.execute(raw: sql)
    }

    /// The oldest pending changes, at most `limit`, up to entry `upTo` when given.
    func pending(limit: Int, upTo: Int64? = nil) async throws -> [Entry] {
        try await db.read(
            "SELECT seq, tbl, id, deleted, fields FROM codablesync_outbox WHERE seq <= :upTo ORDER BY seq LIMIT :limit",
            arguments: ["limit": .integer(Int64(limit)), "upTo": .integer(upTo ?? Int64.max)]
        ).map { row in
            guard let seq = row["seq"]?.int64Value, let table = row["tbl"]?.stringValue,
                  let id = row["id"]?.stringValue, let deleted = row["deleted"]?.int64Value else {
                throw SQLite.Sync.Error(.corruptState, "an outbox row is not (seq, tbl, id, deleted): \(row)")
            }
            let fields = row["fields"]?.stringValue.map { Set($0.split(separator: ",").map(String.init)) }
            return Entry(seq: seq, table: table, id: id, deleted: deleted != 0, fields: fields)
        }
    }

    /// The ids of `table` with changes not pushed yet (pulls leave them alone: they are pushed
    /// later, so the server will order them after what is pulled now).
    func pendingIDs(in table: String) async throws -> Set<String> {
        Set(try await db.read(
            "SELECT DISTINCT id FROM codablesync_outbox WHERE tbl = :table", arguments: ["table": .text(table)]
        ).compactMap { $0["id"]?.stringValue })
    }

    /// The server version pulled last.
    func pulledVersion() async throws -> Int64 {
        try await db.read("SELECT value FROM codablesync_state WHERE key = 'pulled'").first?["value"]?.int64Value ?? 0
    }

    /// Runs `body` as the application of pulled changes: in one transaction that also records
    /// `version` as pulled (when given), with the outbox triggers off.
    func applying(upTo version: Int64?, _ body: @escaping @Sendable () async throws -> Void) async throws {
        try await db.inTransaction { tx in
            _ = try await tx.write("UPDATE codablesync_state SET value = 1 WHERE key = 'applying'")
            try await body()
            if let version {
                _ = try await tx.write(
                    "UPDATE codablesync_state SET value = :version WHERE key = 'pulled'", arguments: ["version": .integer(version)])
            }
            _ = try await tx.write("UPDATE codablesync_state SET value = 0 WHERE key = 'applying'")
        }
    }

    /// While applying: the server's change of a row (at `version`) was left alone, because the
    /// row has local changes. The first such version is kept: from it on, other writers' changes
    /// are what this device's push overwrites.
    func skip(table: String, ids: [String: Int64]) async throws {
        try await record(ids, of: table, in: "INSERT OR IGNORE INTO codablesync_skipped")
    }

    /// Writes rows of `table` with their server versions into a (tbl, id, version) table.
    private func record(_ versions: [String: Int64], of table: String, in insert: String) async throws {
        for (id, version) in versions {
            _ = try await db.write(
                "\(insert) (tbl, id, version) VALUES (:table, :id, :version)",
                arguments: ["table": .text(table), "id": .text(id), "version": .integer(version)])
        }
    }

    /// While applying: pulled deletes of rows that local rows still refer to. They are tried
    /// again once every batch is applied (a later batch may change those rows); a delete is
    /// forgotten when a later batch saves the row.
    func deferDeletes(table: String, ids: [String: Int64]) async throws {
        try await record(ids, of: table, in: "INSERT OR REPLACE INTO codablesync_deferred")
    }

    /// While applying: rows a batch saved, whose deferred deletes no longer hold.
    func undefer(table: String, ids: [String]) async throws {
        try await remove(ids, of: table, from: "codablesync_deferred")
    }

    /// Removes the rows of `table` among `ids` from one of the sync's lists of rows (a table whose
    /// rows are named by `tbl` and `id`).
    func remove(_ ids: [String], of table: String, from list: String) async throws {
        for chunk in ids.chunked(500) {
            let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            _ = try await db.write(
                "DELETE FROM \(list) WHERE tbl = ? AND id IN (\(placeholders))",
                arguments: [StoredValue.text(table)] + chunk.map { StoredValue.text($0) })
        }
    }

    /// The deferred deletes, by table: id and version.
    func deferred() async throws -> [String: [String: Int64]] {
        var found: [String: [String: Int64]] = [:]
        for row in try await db.read("SELECT tbl, id, version FROM codablesync_deferred") {
            if let table = row["tbl"]?.stringValue, let id = row["id"]?.stringValue, let version = row["version"]?.int64Value {
                found[table, default: [:]][id] = version
            }
        }
        return found
    }

    /// While applying: forgets every deferred delete (they were tried again).
    func clearDeferred() async throws {
        _ = try await db.write("DELETE FROM codablesync_deferred")
    }

    /// While applying: rows the server deleted that stay here, because local rows changed here
    /// still refer to them. They are pushed back as local changes, so the server and every device
    /// get them again.
    func keep(table: String, ids: [String]) async throws {
        for id in ids {
            _ = try await db.write(
                "INSERT INTO codablesync_outbox (tbl, id, deleted) VALUES (:table, :id, 0)", arguments: ["table": .text(table), "id": .text(id)])
        }
    }
}
#endif
