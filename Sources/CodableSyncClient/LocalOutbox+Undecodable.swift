import CodableSQLite
import CodableSyncProtocol
import Foundation

/// Pulled rows this device's models cannot decode (a newer app version's value: an enum case this
/// version does not know, a property it cannot read), kept aside row by row so that pulls go on:
///
/// ```
/// codablesync_undecodable(tbl, id, version, value, error)   -- PRIMARY KEY (tbl, id)
/// ```
///
/// A later pulled change of the row (one this version can read, or its delete) replaces it; every
/// round decodes the kept rows again, so an app version whose models read them applies them.
extension LocalOutbox {
    /// One row kept aside: the server's value (JSON) and why it could not be decoded.
    struct Undecodable: Sendable {
        let table: String
        let id: String
        let version: Int64
        let value: String
        let error: String
    }

    static let undecodableTable = """
        CREATE TABLE IF NOT EXISTS codablesync_undecodable (
            tbl TEXT NOT NULL, id NOT NULL, version INTEGER NOT NULL, value TEXT NOT NULL, error TEXT NOT NULL,
            PRIMARY KEY (tbl, id))
        """

    /// Keeps `rows` aside (in the pull's transaction), replacing what was kept for the same rows.
    func keepAside(_ rows: [Undecodable]) async throws {
        for row in rows {
            _ = try await db.write(
                "INSERT OR REPLACE INTO codablesync_undecodable (tbl, id, version, value, error) VALUES (:table, :id, :version, :value, :error)",
                arguments: ["table": .text(row.table), "id": .text(row.id), "version": .integer(row.version),
                            "value": .text(row.value), "error": .text(row.error)])
        }
    }

    /// Forgets the rows of `table` kept aside among `ids` (a readable change of theirs arrived).
    func forgetAside(table: String, ids: [String]) async throws {
        try await remove(ids, of: table, from: "codablesync_undecodable")
    }

    /// Every row kept aside, oldest server version first.
    func keptAside() async throws -> [Undecodable] {
        try await db.read("SELECT tbl, id, version, value, error FROM codablesync_undecodable ORDER BY version").map { row in
            guard let table = row["tbl"]?.stringValue, let id = row["id"]?.stringValue, let version = row["version"]?.int64Value,
                  let value = row["value"]?.stringValue, let error = row["error"]?.stringValue else {
                throw SyncError(.corruptState, "a row of codablesync_undecodable is not (tbl, id, version, value, error)")
            }
            return Undecodable(table: table, id: id, version: version, value: value, error: error)
        }
    }
}

extension SQLite.Sync {
    /// A row pulled from the server that this app's model cannot decode (a newer app version
    /// wrote a value this one cannot read: an enum case it does not know, a property it lacks).
    /// It is kept aside, with the error, and the pulls go on; the device keeps its own copy of the
    /// row (if any) meanwhile. Every round tries it again, so an app version whose model reads it
    /// applies it; a later change of the row on the server replaces it.
    public struct UndecodableRow: Sendable, Hashable, CustomStringConvertible {
        /// The model type's name.
        public let model: String
        /// The row's id, as text.
        public let id: String
        /// The server version of the row's change.
        public let version: Int64
        /// Why it could not be decoded.
        public let error: String

        /// `Task 6F1C…: cannot be decoded here (…)`
        public var description: String { "\(model) \(id): cannot be decoded here (\(error))" }
    }

    /// The pulled rows this device's models could not decode, kept aside (see ``UndecodableRow``).
    ///
    /// ```swift
    /// for row in try await sync.undecodableRows() { print(row) }   // "Task 6F1C…: cannot be decoded here (…)"
    /// ```
    public func undecodableRows() async throws -> [UndecodableRow] {
        try await prepareLocal()
        return try await outbox.keptAside().map { row in
            UndecodableRow(model: model(of: row.table)?.name ?? row.table, id: row.id, version: row.version, error: row.error)
        }
    }

    /// Decodes the rows kept aside again (the app's models may read them now) and applies those
    /// it can, as a pull would: a row with local changes not pushed yet keeps them (the push
    /// overwrites the server's value, and reports it). While a row is kept aside, the device's
    /// copy is behind the server's, so a push of it reports the server's value it overwrote.
    func retryUndecodable() async throws {
        var readable: [String: [String: PulledRow]] = [:]
        for row in try await outbox.keptAside() {
            guard let model = model(of: row.table), let value = try? model.decode(row.value, row.id) else { continue }
            readable[model.table, default: [:]][row.id] = PulledRow(version: row.version, json: row.value, value: value)
        }
        guard !readable.isEmpty else { return }
        let outbox = outbox, models = models, rows = readable
        try await outbox.applying(upTo: nil) {
            for model in models {
                guard let kept = rows[model.table] else { continue }
                let pending = Set(try await outbox.pendingIDs(in: model.table).compactMap(model.canonicalID))
                let left = kept.filter { pending.contains($0.key) }
                if !left.isEmpty { try await outbox.skip(table: model.table, ids: left.mapValues(\.version)) }
                try await outbox.forgetAside(table: model.table, ids: Array(kept.keys))
                let (clashing, aside) = try await self.applySaves(model, kept.filter { !pending.contains($0.key) })
                let stillClashing = try await self.applyClashing(model, clashing)
                try await outbox.keepAside(aside + stillClashing)
            }
        }
    }
}
