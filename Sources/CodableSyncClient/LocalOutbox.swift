import CodableSQLite
import CodableSyncProtocol
import Foundation

/// The device's side, in its own SQLite file: the outbox every local commit writes in the same
/// transaction (triggers on the synced tables, so a crash between commit and push loses nothing,
/// whichever connection or process wrote), and the sync state (the device's id, the server version
/// pulled last).
///
/// ```
/// codablesync_outbox(seq INTEGER PRIMARY KEY AUTOINCREMENT, tbl, id, deleted, fields)
/// codablesync_state(key PRIMARY KEY, value)   -- 'device', 'pulled', 'applying', 'token', 'token_upto', 'acknowledged',
///                                             -- 'epoch', 'restart'
/// codablesync_skipped(tbl, id, version)       -- server changes a pull left alone for a local one
/// codablesync_deferred(tbl, id, version)      -- pulled deletes local rows did not let go of yet
/// codablesync_undecodable(tbl, id, version, value, error)   -- pulled rows this app cannot decode
/// codablesync_refused(tbl, id, reason, message, value, server_value)   -- changes the server refused
/// codablesync_tables(tbl, columns)            -- the synced tables, and the columns their triggers name
/// codablesync_seen(tbl, id)                   -- rows pulled while starting over
/// ```
///
/// Rows written while applying pulled changes are not local changes: the triggers skip them while
/// `applying` is 1, which only the pull's own transaction ever sees.
struct LocalOutbox: Sendable {
    let db: SQLite.Database
    /// The tables this sync knows. Entries of other tables are left in the outbox for the sync
    /// that knows them (an app and its widget, each with its own models, on one file).
    let tables: [String]
    /// Whose state this sync keeps (see ``key(_:)``), decided by ``install(_:)``.
    private let scope = Locked("")

    init(db: SQLite.Database, tables: [String]) {
        self.db = db
        self.tables = tables
    }

    /// The name under which this sync keeps a state value. Several syncs of one file with
    /// different models (an app and its widget) each keep their own device id, pushes and pulled
    /// version: the sync whose models include every model synced before keeps the plain names
    /// (`pulled`; an app version that adds a model stays that sync), another one its own
    /// (`pulled@Note`).
    func key(_ name: String) -> String {
        let scope = scope.withLock { $0 }
        return scope.isEmpty ? name : name + "@" + scope
    }

    /// This sync's state value `name` (``key(_:)``).
    func stateValue(_ name: String) async throws -> String? {
        try await db.read("SELECT value FROM codablesync_state WHERE key = :key", arguments: ["key": .text(key(name))]).first?["value"]?.stringValue
    }

    func setState(_ name: String, _ value: StoredValue) async throws {
        _ = try await db.write("INSERT OR REPLACE INTO codablesync_state (key, value) VALUES (:key, :value)",
                               arguments: ["key": .text(key(name)), "value": value])
    }

    func removeState(_ names: [String]) async throws {
        for name in names {
            _ = try await db.write("DELETE FROM codablesync_state WHERE key = :key", arguments: ["key": .text(key(name))])
        }
    }

    /// `tbl IN ('Note', 'Folder')`: the entries of this sync's tables.
    private var ownEntries: String {
        "tbl IN (" + (tables.isEmpty ? "NULL" : tables.map { StoredValue.text($0).description }.joined(separator: ", ")) + ")"
    }

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
        try await db.write { _ in
            for model in models { try model.prepareLocal(db) }
            _ = try db.execute(raw: """
                CREATE TABLE IF NOT EXISTS codablesync_outbox (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT, tbl TEXT NOT NULL, id NOT NULL, deleted INTEGER NOT NULL);
                CREATE TABLE IF NOT EXISTS codablesync_state (key TEXT PRIMARY KEY, value);
                CREATE TABLE IF NOT EXISTS codablesync_skipped (
                    tbl TEXT NOT NULL, id NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (tbl, id));
                CREATE TABLE IF NOT EXISTS codablesync_deferred (
                    tbl TEXT NOT NULL, id NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (tbl, id));
                INSERT OR IGNORE INTO codablesync_state (key, value) VALUES ('applying', 0);
                \(Self.undecodableTable);
                \(Self.refusedTable);
                \(Self.tablesTable);
                \(Self.seenTable);
                """)
            // Outboxes made before changes named their fields.
            if !(try db.columns(in: "codablesync_outbox").contains { $0.name == "fields" }) {
                _ = try db.execute(raw: "ALTER TABLE codablesync_outbox ADD COLUMN fields TEXT")
            }
            let mine = tables.sorted()
            let recorded = try db.read("SELECT value FROM codablesync_state WHERE key = 'tables'").first?["value"]?.stringValue
                .map { Set($0.split(separator: ",").map(String.init)) }
            if let recorded, !recorded.isSubset(of: mine) {
                scope.withLock { $0 = mine.joined(separator: ",") }
            } else {
                _ = try db.write("INSERT OR REPLACE INTO codablesync_state (key, value) VALUES ('tables', :tables)",
                                 arguments: ["tables": .text(mine.joined(separator: ","))])
            }
            _ = try db.write(
                "INSERT OR IGNORE INTO codablesync_state (key, value) VALUES (:pulled, 0), (:deviceKey, :device)",
                arguments: ["pulled": .text(key("pulled")), "deviceKey": .text(key("device")), "device": .text(UUID().uuidString)])
            for model in models { try installTriggers(model) }
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
        let names = ["device", "token", "token_upto", "acknowledged"]
        for row in try await db.read(
            "SELECT key, value FROM codablesync_state WHERE key IN (?, ?, ?, ?)", arguments: names.map { .text(key($0)) }) {
            if let stored = row["key"]?.stringValue, let name = names.first(where: { key($0) == stored }), let value = row["value"] {
                values[name] = value
            }
        }
        guard let device = values["device"]?.stringValue else { throw SyncError(.corruptState, "codablesync_state has no device id") }
        return State(device: device, token: values["token"]?.stringValue, tokenUpTo: values["token_upto"]?.int64Value,
                     acknowledged: values["acknowledged"]?.stringValue)
    }

    /// Records a new push's token and the last entry it carries, before it is sent: if its answer
    /// is lost, the same push (those entries, that token) is sent again, so the server recognises it.
    func recordToken(upTo seq: Int64) async throws -> String {
        let token = UUID().uuidString
        try await db.inTransaction { _ in
            try await setState("token", .text(token))
            try await setState("token_upto", .integer(seq))
        }
        return token
    }

    /// Forgets an unanswered push whose entries are all gone (nothing left to send again).
    func forgetToken() async throws {
        try await removeState(["token", "token_upto"])
    }

    /// Removes this sync's entries up to `seq` that name no row of its models (an id that is not
    /// one): nothing to send.
    func discard(upTo seq: Int64) async throws {
        _ = try await db.write("DELETE FROM codablesync_outbox WHERE seq <= :seq AND \(ownEntries)", arguments: ["seq": .integer(seq)])
    }

    /// The server answered the push `token` of the changes up to `seq` (of `rows`): removes
    /// them, and records the answer (and the device's new id, for a copy), in one transaction.
    /// Refused changes are kept aside with their reasons (``recordRefused(_:)``); the other rows
    /// are up to date with the server again, and a refusal of theirs is over.
    func pushed(upTo seq: Int64, rows: [(table: String, id: String)], refused: [Refused], token: String, newDevice: String?) async throws {
        let refusedRows = Set(refused.map { SyncedModel.Row(table: $0.table, id: $0.id) })
        try await db.inTransaction { tx in
            _ = try await tx.write("DELETE FROM codablesync_outbox WHERE seq <= :seq AND \(ownEntries)", arguments: ["seq": .integer(seq)])
            for row in rows where !refusedRows.contains(SyncedModel.Row(table: row.table, id: row.id)) {
                // A row kept aside (undecodable) is now this device's value on the server too.
                for list in ["codablesync_skipped", "codablesync_refused", "codablesync_undecodable"] {
                    _ = try await tx.write(
                        "DELETE FROM \(list) WHERE tbl = :table AND id = :id", arguments: ["table": .text(row.table), "id": .text(row.id)])
                }
            }
            try await recordRefused(refused)
            try await removeState(["token", "token_upto"])
            try await setState("acknowledged", .text(token))
            if let newDevice { try await setState("device", .text(newDevice)) }
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

    /// The oldest pending changes of this sync's tables, at most `limit`, up to entry `upTo` when
    /// given.
    func pending(limit: Int, upTo: Int64? = nil) async throws -> [Entry] {
        try await db.read(
            "SELECT seq, tbl, id, deleted, fields FROM codablesync_outbox WHERE seq <= :upTo AND \(ownEntries) ORDER BY seq LIMIT :limit",
            arguments: ["limit": .integer(Int64(limit)), "upTo": .integer(upTo ?? Int64.max)]
        ).map { row in
            guard let seq = row["seq"]?.int64Value, let table = row["tbl"]?.stringValue,
                  let id = row["id"]?.stringValue, let deleted = row["deleted"]?.int64Value else {
                throw SyncError(.corruptState, "an outbox row is not (seq, tbl, id, deleted): \(row)")
            }
            let fields = row["fields"]?.stringValue.map { Set($0.split(separator: ",").map(String.init)) }
            return Entry(seq: seq, table: table, id: id, deleted: deleted != 0, fields: fields)
        }
    }

    /// The ids of `table` with changes not pushed yet, or refused (pulls leave them alone: they
    /// are pushed later, so the server will order them after what is pulled now).
    func pendingIDs(in table: String) async throws -> Set<String> {
        Set(try await db.read(
            "SELECT id FROM codablesync_outbox WHERE tbl = :table UNION SELECT id FROM codablesync_refused WHERE tbl = :table",
            arguments: ["table": .text(table)]
        ).compactMap { $0["id"]?.stringValue })
    }

    /// Rows whose latest local change not pushed yet is a delete: a pulled value's links to them
    /// are left out (the delete wins over a stale copy of a graph, here as on the server).
    func pendingDeletes() async throws -> Set<SyncedModel.Row> {
        Set(try await db.read("""
            SELECT tbl, id FROM codablesync_outbox o
            WHERE deleted = 1 AND seq = (SELECT max(seq) FROM codablesync_outbox WHERE tbl = o.tbl AND id = o.id)
            """).compactMap { row in
            guard let table = row["tbl"]?.stringValue, let id = row["id"]?.stringValue else { return nil }
            return SyncedModel.Row(table: table, id: id)
        })
    }

    /// The server version pulled last.
    func pulledVersion() async throws -> Int64 {
        try await db.read("SELECT value FROM codablesync_state WHERE key = :key", arguments: ["key": .text(key("pulled"))]).first?["value"]?.int64Value ?? 0
    }

    /// Runs `body` as the application of pulled changes: in one transaction that also records
    /// `version` as pulled (when given), with the outbox triggers off.
    @discardableResult
    func applying<R: Sendable>(upTo version: Int64?, _ body: @escaping @Sendable () async throws -> R) async throws -> R {
        try await db.inTransaction { tx in
            _ = try await tx.write("UPDATE codablesync_state SET value = 1 WHERE key = 'applying'")
            let result = try await body()
            if let version {
                _ = try await tx.write(
                    "UPDATE codablesync_state SET value = :version WHERE key = :key", arguments: ["key": .text(key("pulled")), "version": .integer(version)])
            }
            _ = try await tx.write("UPDATE codablesync_state SET value = 0 WHERE key = 'applying'")
            return result
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
        for id in ids { try await requeue(table: table, id: id, deleted: false) }
    }
}
