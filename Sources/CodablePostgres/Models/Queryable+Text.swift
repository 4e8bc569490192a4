#if Postgres
import Foundation
import PostgresNIO

// The seams the sync engine (CodableSync) uses: SQL of its own with text results, and a model's
// table prepared before anything is saved. `package`: not API.
extension Postgres.Queryable {
    /// The rows of `sql` with every cell as text (`nil` for NULL): the SQL casts each column to
    /// `text`. Arguments bind as text to `$1`, `$2`…, as in `execute(_:_:)`. On a
    /// ``Postgres/Database`` the statement runs alone (autocommit): use it for reads.
    package func textRows(_ sql: String, _ arguments: [String?]) async throws -> [[String?]] {
        let rows = try await handle.session.rows(sql, Postgres.Session.textBindings(arguments))
        do {
            return try rows.map { row in try row.map { cell in try cell.decode(String?.self) } }
        } catch {
            throw Postgres.Error(.server, message: "a column did not come back as text: \(error)", sql: sql)
        }
    }

    /// Saves `values` with their graphs, leaving related values whose rows exist as stored
    /// (created only when missing): the sync engine's save, where each row travels by its own
    /// change and a copy inside another value's graph may be older.
    package func saveKeepingRelated<T: Model & Sendable>(_ values: [T]) async throws {
        try await Postgres.Session.$keepsExistingRelated.withValue(true) {
            _ = try await save(values)
        }
    }

    /// Creates `T`'s table now, or brings it up to date, as the first save would.
    package func prepareTable<T: Model>(for type: T.Type) async throws {
        _ = try await handle.session.table(for: T.self)
    }
}
#endif
