#if Postgres
import Foundation

extension Postgres.Database {
    /// What the model layer keeps per database, attached to it (Core does not know it).
    final class ModelState: Sendable {
        /// The tables prepared in this database, by model type.
        let tables = Locked<[ObjectIdentifier: PostgresTable]>([:])
        /// The tables found by reads, as they were (never prepared: a read changes no schema).
        let readTables = Locked<[ObjectIdentifier: PostgresTable]>([:])
        /// The search declaration (its signature) each table's search column was last made or
        /// found current for by this object: a search of another declaration prepares it again.
        let searchSignatures = Locked<[String: String]>([:])
        /// Whether the key-value table exists.
        let hasKeyValueTable = Locked(false)
    }

    private var modelState: ModelState { attachment(ModelState.self) { _ in ModelState() } }

    /// The tables prepared in this database, by model type.
    var tables: Locked<[ObjectIdentifier: PostgresTable]> { modelState.tables }
    /// The tables found by reads, as they were.
    var readTables: Locked<[ObjectIdentifier: PostgresTable]> { modelState.readTables }
    /// The search declaration each table's search column was last made or found current for.
    var searchSignatures: Locked<[String: String]> { modelState.searchSignatures }
    /// Whether the key-value table exists.
    var hasKeyValueTable: Locked<Bool> { modelState.hasKeyValueTable }
}
#endif
