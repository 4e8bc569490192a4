import CodableSQLite
import CodableSyncProtocol
import Foundation

/// Local changes the server refused for good, kept on the device with the reason until the app
/// resolves them:
///
/// ```
/// codablesync_refused(tbl, id, reason, message, value, server_value)   -- PRIMARY KEY (tbl, id)
/// ```
///
/// `value` is the device's value as it was pushed (`NULL` for a delete), so it survives when the
/// row has to make room locally (a unique value the server gave another row); `server_value` is
/// the row as the server keeps it (`NULL`: none), kept current by pulls, which leave the row
/// alone meanwhile, as they leave rows with pending changes. A later local change of the row is
/// pushed as usual and ends the refusal once applied.
extension LocalOutbox {
    /// One refused change as the device keeps it.
    struct Refused: Sendable {
        let table: String
        let id: String
        let reason: String
        let message: String
        let value: String?
        let serverValue: String?
    }

    static let refusedTable = """
        CREATE TABLE IF NOT EXISTS codablesync_refused (
            tbl TEXT NOT NULL, id NOT NULL, reason TEXT NOT NULL, message TEXT NOT NULL, value TEXT, server_value TEXT,
            PRIMARY KEY (tbl, id))
        """

    /// Records refusals (in the transaction that removes their outbox entries).
    func recordRefused(_ rows: [Refused]) async throws {
        for row in rows {
            _ = try await db.write("""
                INSERT OR REPLACE INTO codablesync_refused (tbl, id, reason, message, value, server_value)
                VALUES (:table, :id, :reason, :message, :value, :server)
                """, arguments: ["table": .text(row.table), "id": .text(row.id), "reason": .text(row.reason), "message": .text(row.message),
                                 "value": row.value.map(StoredValue.text) ?? .null, "server": row.serverValue.map(StoredValue.text) ?? .null])
        }
    }

    /// While applying: the server's value of refused rows changed (a pull left it alone).
    func updateRefused(table: String, serverValues: [String: String?]) async throws {
        for (id, value) in serverValues {
            _ = try await db.write(
                "UPDATE codablesync_refused SET server_value = :value WHERE tbl = :table AND id = :id",
                arguments: ["table": .text(table), "id": .text(id), "value": value.map(StoredValue.text) ?? .null])
        }
    }

    /// Every refused change, by table and id.
    func refused() async throws -> [Refused] {
        try await db.read("SELECT tbl, id, reason, message, value, server_value FROM codablesync_refused ORDER BY rowid").map { row in
            guard let table = row["tbl"]?.stringValue, let id = row["id"]?.stringValue, let reason = row["reason"]?.stringValue,
                  let message = row["message"]?.stringValue else {
                throw SyncError(.corruptState, "a row of codablesync_refused is not (tbl, id, reason, message, value, server_value)")
            }
            return Refused(table: table, id: id, reason: reason, message: message, value: row["value"]?.stringValue,
                           serverValue: row["server_value"]?.stringValue)
        }
    }
}

extension SQLite.Sync {
    /// A local change the server refused for good: applying it again as it is would fail again.
    /// The device keeps it (its row keeps the device's value, pulls leave the row alone) until the
    /// app resolves it with ``SQLite/Sync/resolve(_:_:)``; the device's other changes go on.
    public struct RefusedChange: Sendable, CustomStringConvertible {
        /// The model type's name.
        public let model: String
        /// The row's id, as text.
        public let id: String
        /// Why: ``SyncRefusal/Reason/checkViolation``, ``SyncRefusal/Reason/uniqueClash``, …
        public let reason: SyncRefusal.Reason
        /// What the server said, naming the row and, where it can, the column or constraint.
        public let message: String
        /// The device's value that was refused, `nil` for a refused delete.
        public let value: (any Model & Sendable)?
        /// The row as the server keeps it, `nil` when the server has none.
        public let serverValue: (any Model & Sendable)?
        /// The model's table.
        let table: String

        /// `Note 6F1C…: refused (checkViolation): …`
        public var description: String { "\(model) \(id): refused (\(reason)): \(message)" }
    }

    /// What to do with a refused change.
    public enum Resolution: Sendable {
        /// Give it up: the row returns to the server's value (or goes, when the server has none).
        case drop
        /// Push it again as it is (the server's rule may have changed, or the row it clashed with).
        case retry
        /// Save this value of the row instead, and push it (it must be the refused row's model and id).
        case edit(any Model & Sendable)
    }

    /// The local changes the server refused for good, oldest first (see ``RefusedChange``).
    ///
    /// ```swift
    /// for refused in try await sync.refusedChanges() {
    ///     print(refused)                          // "Note 6F1C…: refused (checkViolation): …"
    ///     try await sync.resolve(refused, .drop)  // or .retry, or .edit(fixedValue)
    /// }
    /// ```
    public func refusedChanges() async throws -> [RefusedChange] {
        try await prepareLocal()
        var changes: [RefusedChange] = []
        for row in try await outbox.refused() {
            guard let model = model(of: row.table) else { continue }
            changes.append(RefusedChange(row, of: model, local: try await model.localValues(outbox.db, [row.id])[row.id]))
        }
        return changes
    }

    /// Resolves a refused change: ``Resolution/drop`` returns the row to the server's value,
    /// ``Resolution/retry`` pushes it again, ``Resolution/edit(_:)`` saves a new value and pushes
    /// that. The next round (or the running ``run()``) carries it out.
    ///
    /// - Throws: ``Error/Code/invalidArgument`` when `change` is not refused (any more), or an
    ///   edit's value is not its row's; a model error when the value cannot be saved here (a
    ///   unique value another local row holds), or the row cannot go because local rows still
    ///   refer to it. Nothing changes then.
    public func resolve(_ change: RefusedChange, _ resolution: Resolution) async throws {
        try await prepareLocal()
        guard let model = self.model(of: change.table),
              let row = try await outbox.refused().first(where: { $0.table == model.table && $0.id == change.id }) else {
            throw Error(.invalidArgument, "\(change.model) \(change.id) has no refused change (any more)")
        }
        let db = outbox.db, outbox = outbox, id = row.id
        switch resolution {
        case .drop:
            let server = try row.serverValue.map { try model.decode($0, id) }
            try await outbox.applying(upTo: nil) {
                if let server {
                    try await model.saveLocal(db, [server])
                } else if try await !model.deleteLocal(db, [id]).isEmpty {
                    throw Error(.invalidArgument, "\(model.name) \(id) cannot be dropped: local rows still refer to it")
                }
                for list in ["codablesync_refused", "codablesync_skipped", "codablesync_outbox"] {
                    try await outbox.remove([id], of: model.table, from: list)
                }
            }
        case .retry:
            let local = try await model.localValues(db, [id])[id]
            let stored = try row.value.map { try model.decode($0, id) }
            try await db.inTransaction { _ in
                try await outbox.remove([id], of: model.table, from: "codablesync_refused")
                // It made room for a row the server has: back as it was (the trigger records it).
                if local == nil, let stored { try await model.saveEdited(db, stored) }
                try await outbox.requeue(table: model.table, id: id, deleted: local == nil && stored == nil)
            }
        case .edit(let value):
            // Its model's value (`encode` refuses another type's), with the refused row's id.
            guard (try? model.encode(value)) != nil, model.canonicalID(SyncedModel.idText(value)) == id else {
                throw Error(.invalidArgument, "the edit of \(model.name) \(id) must be a \(model.name) with that id, not \(Swift.type(of: value)) \(SyncedModel.idText(value))")
            }
            try await db.inTransaction { _ in
                try await outbox.remove([id], of: model.table, from: "codablesync_refused")
                try await model.saveEdited(db, value)
                try await outbox.requeue(table: model.table, id: id, deleted: false)
            }
        }
    }
}

extension SQLite.Sync.RefusedChange {
    /// A kept refusal of `model`'s row, with the row as it is here (`nil`: the value pushed).
    init(_ row: LocalOutbox.Refused, of model: SyncedModel, local: (any Model & Sendable)? = nil) {
        self.init(
            model: model.name, id: row.id, reason: SyncRefusal.Reason(row.reason), message: row.message,
            value: local ?? row.value.flatMap { try? model.decode($0, row.id) },
            serverValue: row.serverValue.flatMap { try? model.decode($0, row.id) }, table: model.table)
    }
}

extension LocalOutbox {
    /// A local change of a row, recorded as the triggers would (all of its fields may have changed).
    func requeue(table: String, id: String, deleted: Bool) async throws {
        _ = try await db.write(
            "INSERT INTO codablesync_outbox (tbl, id, deleted) VALUES (:table, :id, :deleted)",
            arguments: ["table": .text(table), "id": .text(id), "deleted": .integer(deleted ? 1 : 0)])
    }
}
