#if Postgres
import CodablePostgres
import CodableSyncProtocol
import Foundation

// What the server does with a synced model's rows on PostgreSQL. Each function opens the model's
// type once (`modelType`) and works with it as server-side code would.
extension SyncedModel {
    /// Creates or updates the model's table on the server.
    func prepareServer(_ db: Postgres.Database) async throws { try await Self.prepare(modelType, db) }

    /// The values stored under these (canonical) ids, by canonical id.
    func serverValues(_ db: any Postgres.Queryable, _ ids: [String]) async throws -> [String: any Model & Sendable] {
        try await values(modelType, db, ids)
    }

    /// Saves pushed values in the push's transaction (related values only created when missing,
    /// as on devices).
    func saveServer(_ tx: Postgres.Transaction, _ values: [any Model & Sendable]) async throws {
        try await Self.save(modelType, tx, values)
    }

    /// Deletes rows as rows, as a device does (see `deleteLocal`); returns the ids foreign keys kept.
    func deleteServer(_ tx: Postgres.Transaction, _ ids: [String]) async throws -> [String] {
        let quotedTable = SQLName.quoted(table)
        let serverIDType = serverIDType
        // In a savepoint (a nested transaction): a refused delete must not end the push's.
        @Sendable func delete(_ chunk: [String]) async throws -> Bool {
            do {
                try await tx.inTransaction { savepoint in
                    _ = try await savepoint.textRows(
                        "DELETE FROM \(quotedTable) WHERE \(ModelReflection.quotedID) = ANY($1::text[]::\(serverIDType)[]) RETURNING 1::text",
                        [ServerLog.arrayLiteral(chunk)])
                }
                return true
            } catch let error as Postgres.Error where error.sqlState == "23503" {
                return false
            }
        }
        return try await Self.refused(canonicalIDs(ids), by: delete)
    }

    private static func prepare<T: Model & Sendable>(_: T.Type, _ db: Postgres.Database) async throws {
        try await db.prepareTable(for: T.self)
    }

    private func values<T: Model & Sendable>(_: T.Type, _ db: any Postgres.Queryable, _ ids: [String]) async throws -> [String: any Model & Sendable] {
        try await Self.byID(db.get(with: idFilter(T.self, ids)))
    }

    private static func save<T: Model & Sendable>(_: T.Type, _ tx: Postgres.Transaction, _ values: [any Model & Sendable]) async throws {
        try await tx.saveKeepingRelated(values.compactMap { $0 as? T })
    }
}
#endif
