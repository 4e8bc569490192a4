#if Postgres
import CodableSQLite
import Foundation

/// The device's side, in its own SQLite file: the outbox every local commit writes in the same
/// transaction (triggers on the synced tables, so a crash between commit and push loses nothing,
/// whichever connection or process wrote), and the sync state (the device's id, the server version
/// pulled last).
///
/// ```
/// codablesync_outbox(seq INTEGER PRIMARY KEY AUTOINCREMENT, tbl, id, deleted)
/// codablesync_state(key PRIMARY KEY, value)   -- 'device', 'pulled', 'applying'
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
    }

    /// Creates the outbox and the state, and installs the triggers of each model's table (which
    /// it creates first when no value was saved yet). Idempotent.
    func install(_ models: [SyncedModel]) throws -> String {
        for model in models { try model.prepareLocal(db) }
        // One transaction: no commit of another connection or process can come between a
        // trigger's removal and its new version.
        return try db.inTransaction {
            _ = try db.execute(raw: """
                CREATE TABLE IF NOT EXISTS codablesync_outbox (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT, tbl TEXT NOT NULL, id NOT NULL, deleted INTEGER NOT NULL);
                CREATE TABLE IF NOT EXISTS codablesync_state (key TEXT PRIMARY KEY, value);
                INSERT OR IGNORE INTO codablesync_state (key, value) VALUES ('pulled', 0), ('applying', 0);
                """)
            _ = try db.write(
                "INSERT OR IGNORE INTO codablesync_state (key, value) VALUES ('device', :device)",
                arguments: ["device": .text(UUID().uuidString)])
            for model in models { try installTriggers(model) }
            guard case .text(let device)? = try db.read("SELECT value FROM codablesync_state WHERE key = 'device'").first?["value"] else {
                throw SQLite.Sync.Error(.corruptState, "codablesync_state has no device id")
            }
            return device
        }
    }

    private func installTriggers(_ model: SyncedModel) throws {
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
        // it saves, the related values of a graph included. The triggers are made again each
        // time, so they know the columns the table has now.
        let changed = try db.columns(in: model.table)
            .map { "OLD.\(SQLName.quoted($0.name)) IS NOT NEW.\(SQLName.quoted($0.name))" }
            .joined(separator: " OR ")
        var sql = ""
        for (event, row, deleted) in [("INSERT", "NEW", 0), ("UPDATE", "NEW", 0), ("DELETE", "OLD", 1)] {
            let trigger = SQLName.quoted("codablesync_\(model.table)_\(event.lowercased())")
            let condition = event == "UPDATE" ? "\(skip) AND (\(changed))" : skip
            sql += """
                DROP TRIGGER IF EXISTS \(trigger);
                CREATE TRIGGER \(trigger) AFTER \(event) ON \(table) \(condition) BEGIN
                    INSERT INTO codablesync_outbox (tbl, id, deleted) VALUES (\(literal), \(row).\(ModelReflection.quotedID), \(deleted));
                END;

                """
        }
        // A link row of a to-many relationship written or removed (a value saved with other
        // related values, or a related value deleted) changes its owner.
        for link in model.links {
            for (event, row) in [("INSERT", "NEW"), ("DELETE", "OLD")] {
                let trigger = SQLName.quoted("codablesync_\(link)_\(event.lowercased())")
                sql += """
                    DROP TRIGGER IF EXISTS \(trigger);
                    CREATE TRIGGER \(trigger) AFTER \(event) ON \(SQLName.quoted(link)) \(skip) BEGIN
                        INSERT INTO codablesync_outbox (tbl, id, deleted) VALUES (\(literal), \(row)."owner", 0);
                    END;

                    """
            }
        }
        _ = try db.execute(raw: sql)
    }

    /// The oldest pending changes, at most `limit`.
    func pending(limit: Int) async throws -> [Entry] {
        try await db.read(
            "SELECT seq, tbl, id, deleted FROM codablesync_outbox ORDER BY seq LIMIT :limit",
            arguments: ["limit": .integer(Int64(limit))]
        ).map { row in
            guard let seq = row["seq"]?.int64Value, let table = row["tbl"]?.stringValue,
                  let id = row["id"]?.stringValue, let deleted = row["deleted"]?.int64Value else {
                throw SQLite.Sync.Error(.corruptState, "an outbox row is not (seq, tbl, id, deleted): \(row)")
            }
            return Entry(seq: seq, table: table, id: id, deleted: deleted != 0)
        }
    }

    /// The ids of `table` with changes not pushed yet (pulls leave them alone: they are pushed
    /// later, so the server will order them after what is pulled now).
    func pendingIDs(in table: String) async throws -> Set<String> {
        Set(try await db.read(
            "SELECT DISTINCT id FROM codablesync_outbox WHERE tbl = :table", arguments: ["table": .text(table)]
        ).compactMap { $0["id"]?.stringValue })
    }

    /// Removes the changes up to `seq`, once the server has them.
    func remove(upTo seq: Int64) async throws {
        _ = try await db.write("DELETE FROM codablesync_outbox WHERE seq <= :seq", arguments: ["seq": .integer(seq)])
    }

    /// The server version pulled last.
    func pulledVersion() async throws -> Int64 {
        try await db.read("SELECT value FROM codablesync_state WHERE key = 'pulled'").first?["value"]?.int64Value ?? 0
    }

    /// Runs `body` as the application of pulled changes: in one transaction that also records
    /// `version` as pulled, with the outbox triggers off.
    func applying(upTo version: Int64, _ body: @escaping @Sendable () async throws -> Void) async throws {
        try await db.inTransaction { tx in
            _ = try await tx.write("UPDATE codablesync_state SET value = 1 WHERE key = 'applying'")
            try await body()
            _ = try await tx.write(
                "UPDATE codablesync_state SET value = :version WHERE key = 'pulled'", arguments: ["version": .integer(version)])
            _ = try await tx.write("UPDATE codablesync_state SET value = 0 WHERE key = 'applying'")
        }
    }
}
#endif
