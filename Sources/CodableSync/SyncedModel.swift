#if Postgres
import CodablePostgres
import CodableSQLite
import Foundation

/// One synced model type, with the work the sync engine does on it opened to the concrete type
/// once: the engine itself holds `[SyncedModel]` and names rows by table and id text.
struct SyncedModel: Sendable {
    /// The model type's name, for errors and conflicts.
    let name: String
    /// The table on both engines.
    let table: String
    /// The link tables of its to-many relationships (`"Folder.notes"(owner, position, target)`):
    /// a change to one is a change to its owner, this model.
    let links: [String]
    /// The model type, and the types its relationships lead to (which must be synced too).
    let type: ObjectIdentifier
    let targets: [(name: String, type: ObjectIdentifier)]
    /// An id as the sync engine writes it (the outbox, the server's change log, conflicts):
    /// `nil` for text that is not an id of this model.
    let canonicalID: @Sendable (String) -> String?
    /// The id's text as PostgreSQL's `id::text` writes it (a `uuid` column's text is lowercase).
    let serverText: @Sendable (String) -> String
    let prepareLocal: @Sendable (SQLite.Database) throws -> Void
    let prepareServer: @Sendable (Postgres.Database) async throws -> Void
    /// The values stored under these (canonical) ids, by canonical id.
    let localValues: @Sendable (SQLite.Database, [String]) async throws -> [String: any Model & Sendable]
    let serverValues: @Sendable (any Postgres.Queryable, [String]) async throws -> [String: any Model & Sendable]
    let saveLocal: @Sendable (SQLite.Database, [any Model & Sendable]) async throws -> Void
    /// Deletes rows as rows: their link rows go (foreign keys), optional to-ones pointing at them
    /// become nil, but no delete rule runs: what a rule did on the device that deleted is its own
    /// change, which travels by itself (a cascade there reaches here as the deletes it caused).
    let deleteLocal: @Sendable (SQLite.Database, [String]) async throws -> Void
    let saveServer: @Sendable (Postgres.Transaction, [any Model & Sendable]) async throws -> Void
    let deleteServer: @Sendable (Postgres.Transaction, [String]) async throws -> Void

    /// Refuses models whose ids the database assigns (two offline devices would both get id 7)
    /// and ids other than `UUID` and `String`, the ones a device makes up without asking anyone.
    init<T: Model & Sendable>(_ type: T.Type) throws {
        let schema = try ModelReflection.of(T.self)
        let name = String(describing: T.self)
        if schema.assignsID {
            throw SQLite.Sync.Error(.unsyncableModel, """
                \(name) cannot be synced: its id (\(T.ID.self)) is assigned by the database, and two devices \
                offline would assign the same one. Give it a UUID id (UUIDModel) or a String id the app makes.
                """)
        }
        let parse: @Sendable (String) -> T.ID?
        let serverText: @Sendable (String) -> String
        if T.ID.self == UUID.self {
            parse = { text in UUID(uuidString: text) as? T.ID }
            serverText = { $0.lowercased() }
        } else if T.ID.self == String.self {
            parse = { $0 as? T.ID }
            serverText = { $0 }
        } else {
            throw SQLite.Sync.Error(.unsyncableModel, """
                \(name) cannot be synced: its id is \(T.ID.self). Synced models need ids a device can make \
                up without asking anyone: UUID (UUIDModel) or String.
                """)
        }
        @Sendable func text(_ id: T.ID) -> String {
            if let uuid = id as? UUID { return uuid.uuidString }
            return "\(id)"
        }
        // The stored property's own key path: `\T.id` written in generic code is the protocol
        // requirement's, which filters cannot resolve to a column.
        guard let idPath = schema.id.keyPath as? KeyPath<T, T.ID> else {
            throw SQLite.Sync.Error(.unsyncableModel, "\(name) cannot be synced: its id property is not a stored \(T.ID.self)")
        }
        let idKeyPath = UncheckedSendable(idPath)
        @Sendable func ids(_ texts: [String]) -> Filter<T> { Filter(idKeyPath.value, is: .in(texts.compactMap(parse))) }
        @Sendable func byID(_ values: [T]) -> [String: any Model & Sendable] {
            Dictionary(values.map { (text($0.id), $0 as any Model & Sendable) }, uniquingKeysWith: { _, last in last })
        }
        @Sendable func typed(_ values: [any Model & Sendable]) -> [T] { values.compactMap { $0 as? T } }

        self.name = name
        table = T.tableName
        links = schema.relationships.filter(\.isToMany).map(\.linkTable)
        self.type = ObjectIdentifier(T.self)
        targets = schema.relationships.map { ("\($0.target)", ObjectIdentifier($0.target)) }
        canonicalID = { parse($0).map(text) }
        self.serverText = serverText
        prepareLocal = { try $0.prepareTable(for: T.self) }
        prepareServer = { try await $0.prepareTable(for: T.self) }
        localValues = { db, texts in
            try await byID(db.get(with: ids(texts)))
        }
        serverValues = { db, texts in
            try await byID(db.get(with: ids(texts)))
        }
        // Related values inside a graph are only created when missing: each row travels by its
        // own change, and a copy inside another value's graph may be older than the row.
        saveLocal = { db, values in try await db.saveKeepingRelated(typed(values)) }
        let quotedTable = SQLName.quoted(T.tableName)
        let serverIDType = T.ID.self == UUID.self ? "uuid" : "text"
        deleteLocal = { db, texts in
            let ids = texts.compactMap { parse($0).map(text) }
            for chunk in ids.chunked(500) {
                let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
                _ = try await db.write(
                    "DELETE FROM \(quotedTable) WHERE \(ModelReflection.quotedID) IN (\(placeholders))",
                    arguments: chunk.map { StoredValue.text($0) })
            }
        }
        saveServer = { tx, values in try await tx.saveKeepingRelated(typed(values)) }
        deleteServer = { tx, texts in
            let ids = texts.compactMap { parse($0).map(text) }
            _ = try await tx.textRows(
                "DELETE FROM \(quotedTable) WHERE \(ModelReflection.quotedID) = ANY($1::text[]::\(serverIDType)[]) RETURNING 1::text",
                [ServerLog.arrayLiteral(ids)])
        }
    }
}

/// A key path, which is immutable, across concurrency domains (`KeyPath` is not `Sendable`).
struct UncheckedSendable<Value>: @unchecked Sendable {  // holds only immutable values (key paths)
    let value: Value
    init(_ value: Value) { self.value = value }
}
#endif
