import CodableSQLite
import CodableSyncProtocol
import Foundation

// What a device does with a synced model's rows in its SQLite file. Each function opens the
// model's type once (`modelType`) and works with it as the app's code would.
extension SyncedModel {
    /// Creates or updates the model's table in the device's file.
    func prepareLocal(_ db: SQLite.Database) throws { try Self.prepare(modelType, db) }

    /// The values stored under these (canonical) ids, by canonical id.
    func localValues(_ db: SQLite.Database, _ ids: [String]) async throws -> [String: any Model & Sendable] {
        try await values(modelType, db, ids)
    }

    /// Saves pulled values. Related values inside a graph are only created when missing: each row
    /// travels by its own change, and a copy inside another value's graph may be older than the row.
    func saveLocal(_ db: SQLite.Database, _ values: [any Model & Sendable]) async throws {
        try await Self.save(modelType, db, values)
    }

    /// Saves a value as the app does (its graph included), a local change.
    func saveEdited(_ db: SQLite.Database, _ value: any Model & Sendable) async throws {
        try await saveEdited(modelType, db, value)
    }

    /// Deletes rows as rows: their link rows go (foreign keys), optional to-ones pointing at them
    /// become nil, but no delete rule runs: what a rule did on the device that deleted is its own
    /// change, which travels by itself (a cascade there reaches here as the deletes it caused).
    /// Returns the ids it kept because a non-optional to-one (or a foreign key of the app's own)
    /// still refers to them: their delete loses.
    func deleteLocal(_ db: SQLite.Database, _ ids: [String]) async throws -> [String] {
        let quotedTable = SQLName.quoted(table)
        @Sendable func delete(_ chunk: [String]) async throws -> Bool {
            let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            do {
                _ = try await db.write(
                    "DELETE FROM \(quotedTable) WHERE \(ModelReflection.quotedID) IN (\(placeholders))",
                    arguments: chunk.map { StoredValue.text($0) })
                return true
            } catch let error as SQLite.Error where error.extendedCode == .constraintForeignKey {
                return false   // SQLite undid the statement alone; the transaction goes on
            }
        }
        var kept: [String] = []
        for chunk in canonicalIDs(ids).chunked(500) { kept += try await Self.refused(Array(chunk), by: delete) }
        return kept
    }

    private static func prepare<T: Model & Sendable>(_: T.Type, _ db: SQLite.Database) throws {
        try db.prepareTable(for: T.self)
    }

    private func values<T: Model & Sendable>(_: T.Type, _ db: SQLite.Database, _ ids: [String]) async throws -> [String: any Model & Sendable] {
        try await Self.byID(db.get(with: idFilter(T.self, ids)))
    }

    private static func save<T: Model & Sendable>(_: T.Type, _ db: SQLite.Database, _ values: [any Model & Sendable]) async throws {
        try await db.saveKeepingRelated(values.compactMap { $0 as? T })
    }

    private func saveEdited<T: Model & Sendable>(_: T.Type, _ db: SQLite.Database, _ value: any Model & Sendable) async throws {
        _ = try await db.save(typed(value, as: T.self))
    }
}
