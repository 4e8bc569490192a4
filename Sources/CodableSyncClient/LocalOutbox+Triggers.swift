import CodableSQLite
import CodableSyncProtocol
import Foundation

/// The triggers that fill the outbox, on each synced table and its link tables: made when a sync
/// prepares the file, and again at any round that finds them missing or naming other columns than
/// the table has (a migration added, removed or rebuilt columns, or rebuilt the table).
///
/// Their update trigger names the table's columns (an update that changes nothing is no change),
/// so SQLite refuses `ALTER TABLE … DROP COLUMN` on a synced table while they are there: a
/// migration that drops a column drops the table's `codablesync_` triggers first, or rebuilds the
/// table; the next round makes them again, and queues no row as changed.
extension LocalOutbox {
    static let tablesTable = "CREATE TABLE IF NOT EXISTS codablesync_tables (tbl TEXT PRIMARY KEY, columns TEXT NOT NULL)"

    static func columnList(_ columns: [String]) -> String { columns.joined(separator: ",") }

    /// Makes the triggers of the models whose triggers are missing or name other columns than
    /// their tables have now, in one transaction. Two reads when nothing changed.
    func refreshTriggers(_ models: [SyncedModel]) async throws {
        let triggers = Set(try await db.read("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'codablesync\\_%' ESCAPE '\\'")
            .compactMap { $0["name"]?.stringValue })
        var recorded: [String: String] = [:]
        for row in try await db.read("SELECT tbl, columns FROM codablesync_tables") {
            if let table = row["tbl"]?.stringValue, let columns = row["columns"]?.stringValue { recorded[table] = columns }
        }
        var stale: [SyncedModel] = []
        for model in models {
            let columns = try await db.read("SELECT name FROM pragma_table_info(:table)", arguments: ["table": .text(model.table)])
                .compactMap { $0["name"]?.stringValue }
            let names = ["insert", "update", "delete"].map { "codablesync_\(model.table)_\($0)" }
                + model.links.flatMap { link in ["insert", "delete"].map { "codablesync_\(link)_\($0)" } }
            if recorded[model.table] != Self.columnList(columns) || !names.allSatisfy(triggers.contains) { stale.append(model) }
        }
        guard !stale.isEmpty else { return }
        let outbox = self, models = stale
        try await db.write { _ in
            for model in models {
                try model.prepareLocal(outbox.db)
                try outbox.installTriggers(model)
            }
        }
    }

    func installTriggers(_ model: SyncedModel) throws {
        let table = SQLName.quoted(model.table)
        let literal = StoredValue.text(model.table).description
        let skip = "WHEN (SELECT value FROM codablesync_state WHERE key = 'applying') IS NOT 1"
        let columns = try db.columns(in: model.table).map(\.name)
        // Rows saved before the table was synced are local changes, pushed once: when the table
        // is synced for the first time, not each time its triggers are made again (a migration
        // that rebuilt the table took them away; its rows are no local changes).
        let isNew = try db.read("SELECT 1 FROM codablesync_tables WHERE tbl = :table", arguments: ["table": .text(model.table)]).isEmpty
        // (Files synced before that table: the insert trigger says the table was synced.)
        let wasSynced = try !db.read(
            "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = :name",
            arguments: ["name": .text("codablesync_\(model.table)_insert")]
        ).isEmpty
        if isNew, !wasSynced {
            _ = try db.write("INSERT INTO codablesync_outbox (tbl, id, deleted) SELECT \(literal), \(ModelReflection.quotedID), 0 FROM \(table)")
        }
        _ = try db.write(
            "INSERT OR REPLACE INTO codablesync_tables (tbl, columns) VALUES (:table, :columns)",
            arguments: ["table": .text(model.table), "columns": .text(Self.columnList(columns))])
        // An update that changes nothing is not a change: the model layer upserts every value
        // it saves, the related values of a graph included. An update names the columns it
        // changed (`,text,done,`), for merges. The triggers are made again whenever the table's
        // columns change, so they know the columns the table has now.
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
}
