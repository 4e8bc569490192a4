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

    /// The values stored under these (canonical) ids as changes carry them (JSON text), by
    /// canonical id, for a pull. A row the server's model cannot decode (written with SQL, or by
    /// a newer app version) goes as it is stored (PostgreSQL's JSON of the row), for the devices
    /// to read if their model can, or to keep aside: one such row never stops a pull.
    func serverJSON(_ db: any Postgres.Queryable, _ ids: [String]) async throws -> [String: String] {
        do {
            return try await serverValues(db, ids).mapValues(encode)
        } catch let error as CancellationError {
            throw error
        } catch {
            guard ids.count > 1 else { return try await storedJSON(db, ids, failure: error) }
            var json: [String: String] = [:]
            for id in ids {
                do {
                    json.merge(try await serverValues(db, [id]).mapValues(encode)) { _, new in new }
                } catch let error as CancellationError {
                    throw error
                } catch {
                    json.merge(try await storedJSON(db, [id], failure: error)) { _, new in new }
                }
            }
            return json
        }
    }

    /// The rows as PostgreSQL stores them (`row_to_json`), by canonical id; `failure` (the
    /// model's error) again when not even that can be read.
    private func storedJSON(_ db: any Postgres.Queryable, _ ids: [String], failure: any Error) async throws -> [String: String] {
        let id = ModelReflection.quotedID
        let rows: [[String?]]
        do {
            rows = try await db.textRows("""
                SELECT t.\(id)::text, row_to_json(t)::text FROM \(SQLName.quoted(table)) t
                WHERE t.\(id) = ANY($1::text[]::\(serverIDType)[])
                """, [ServerLog.arrayLiteral(ids)])
        } catch {
            throw failure
        }
        var json: [String: String] = [:]
        for row in rows where row.count == 2 {
            guard let text = row[0], let canonical = canonicalID(text), let value = row[1] else { continue }
            json[canonical] = value
        }
        return json
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
