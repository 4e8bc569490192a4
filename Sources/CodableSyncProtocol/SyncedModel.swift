import CodableModels
import Foundation

/// One synced model type, with the work the sync engine does on it opened to the concrete type
/// once: the engine itself holds `[SyncedModel]` and names rows by table and id text.
package struct SyncedModel: Sendable {
    /// The model type's name, for errors and conflicts.
    package let name: String
    /// The table on both engines.
    package let table: String
    /// The link tables of its to-many relationships (`"Folder.notes"(owner, position, target)`):
    /// a change to one is a change to its owner, this model.
    package let links: [String]
    /// The property of each link table (its to-many relationship's name).
    package let linkFields: [String: String]
    /// The model type, and the types its relationships lead to (which must be synced too).
    package let type: ObjectIdentifier
    package let modelType: any (Model & Sendable).Type
    package let targets: [(name: String, type: ObjectIdentifier)]
    /// An id as the sync engine writes it (the outbox, the server's change log, conflicts):
    /// `nil` for text that is not an id of this model.
    package let canonicalID: @Sendable (String) -> String?
    /// The model's id property (a `KeyPath<Model, Model.ID>`), for filters by id.
    package let idKeyPath: UncheckedSendable<AnyKeyPath>
    /// An id's text as the model's `ID` (`UUID` or `String`); `nil` for text that is not one.
    package let parseID: @Sendable (String) -> Any?
    /// The id's text as PostgreSQL's `id::text` writes it (a `uuid` column's text is lowercase).
    package let serverText: @Sendable (String) -> String
    /// A value as a change carries it (its Codable form as JSON text), and back, checked against
    /// the id the change names.
    package let encode: @Sendable (any Model & Sendable) throws -> String
    /// ``SyncMergeable``'s merge of a pushed value (first) with the server's, given the fields the
    /// device changed; `nil` for models that are not mergeable (the push replaces the row).
    package let merge: (@Sendable (any Model & Sendable, any Model & Sendable, Set<String>?) throws -> any Model & Sendable)?
    package let decode: @Sendable (_ json: String, _ id: String) throws -> any Model & Sendable
    /// The keys of the model's `Codable` form (its stored properties' names): a pushed value's
    /// keys, so that the server keeps the fields of a newer model that this one lacks.
    package let keys: [String]
    /// The rows a value links (its relationships' related values), by table and canonical id.
    package let related: @Sendable (any Model) -> [Row]
    /// The related values a value holds (one step), each with its row: a graph save creates the
    /// missing ones with what they link in turn (``ServerPush`` walks them for authorization).
    package let relatedValues: @Sendable (any Model) -> [(row: Row, value: any Model)]
    /// A value without its links to `rows`; `nil` when it cannot be without one of them (a
    /// non-optional to-one, a `let` property).
    package let droppingLinks: @Sendable (any Model & Sendable, _ rows: Set<Row>) -> (any Model & Sendable)?

    /// The server's type of the id column (`uuid` or `text`).
    package let serverIDType: String
    /// The rows a row of this table links on the server, for scopes (``ServerScopes``).
    package let edges: [Edge]

    /// A relationship as the server stores it: a to-one's column on the owner's row, or a
    /// to-many's link table (`owner`, `target`).
    package struct Edge: Sendable {
        package enum Storage: Sendable {
            case column(String)
            case linkTable(String)
        }
        package let storage: Storage
        /// The related model's table.
        package let target: String
        package init(storage: Storage, target: String) {
            self.storage = storage
            self.target = target
        }
    }

    /// A row of a synced table, by canonical id.
    package struct Row: Hashable, Sendable {
        package let table: String
        package let id: String
        package init(table: String, id: String) {
            self.table = table
            self.id = id
        }
    }

    /// A model value's id as the sync engine writes it (a UUID in upper case).
    package static func idText(_ value: some Model) -> String { idText(id: value.id) }

    /// An id as the sync engine writes it (a UUID in upper case).
    package static func idText(id: some Hashable) -> String {
        if let uuid = id as? UUID { return uuid.uuidString }
        return "\(id)"
    }

    /// The models of a sync, each checked, and checked together: a relationship must lead to a
    /// model that is synced too.
    package static func all(_ types: [any (Model & Sendable).Type]) throws -> [SyncedModel] {
        let synced = try types.map { try SyncedModel($0) }
        let known = Set(synced.map(\.type))
        for model in synced {
            if let missing = model.targets.first(where: { !known.contains($0.type) }) {
                throw SyncError(.unsyncableModel, """
                    \(model.name) cannot be synced without \(missing.name), which its relationships lead to: \
                    add \(missing.name) to the synced models.
                    """)
            }
        }
        return synced
    }

    /// Deletes rows of several models in passes (`delete` returns the ids it had to keep), until
    /// a pass deletes nothing more: a row that other deleted rows refer to goes once they are
    /// gone, whatever the models' order. Returns what stays, by model.
    package static func deleteInPasses(
        _ deletions: [(SyncedModel, [String])], _ delete: (SyncedModel, [String]) async throws -> [String]
    ) async throws -> [(SyncedModel, [String])] {
        var remaining = deletions.filter { !$0.1.isEmpty }
        var progress = true
        while progress {
            progress = false
            for index in remaining.indices where !remaining[index].1.isEmpty {
                let kept = try await delete(remaining[index].0, remaining[index].1)
                if kept.count < remaining[index].1.count { progress = true }
                remaining[index].1 = kept
            }
        }
        return remaining.filter { !$0.1.isEmpty }
    }

    /// Deletes `ids` at once with `delete` (`false`: the foreign keys refused, and nothing was
    /// deleted), or else one by one; returns the ids that could not be deleted.
    package static func refused(_ ids: [String], by delete: ([String]) async throws -> Bool) async throws -> [String] {
        guard !ids.isEmpty, try await !delete(ids) else { return [] }
        var kept: [String] = []
        for id in ids where try await !delete([id]) { kept.append(id) }
        return kept
    }

    /// Refuses models whose ids the database assigns (two offline devices would both get id 7)
    /// and ids other than `UUID` and `String`, the ones a device makes up without asking anyone.
    package init<T: Model & Sendable>(_ type: T.Type) throws {
        let schema = try ModelReflection.of(T.self)
        let name = String(describing: T.self)
        if schema.assignsID {
            throw SyncError(.unsyncableModel, """
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
            throw SyncError(.unsyncableModel, """
                \(name) cannot be synced: its id is \(T.ID.self). Synced models need ids a device can make \
                up without asking anyone: UUID (UUIDModel) or String.
                """)
        }
        @Sendable func text(_ id: T.ID) -> String { Self.idText(id: id) }
        // The stored property's own key path: `\T.id` written in generic code is the protocol
        // requirement's, which filters cannot resolve to a column.
        guard let idPath = schema.id.keyPath as? KeyPath<T, T.ID> else {
            throw SyncError(.unsyncableModel, "\(name) cannot be synced: its id property is not a stored \(T.ID.self)")
        }
        idKeyPath = UncheckedSendable(idPath)
        parseID = { parse($0) }

        self.name = name
        table = T.tableName
        let relationships = schema.relationships
        keys = try ModelReflection.storedFields(of: T.self).map(\.name)
        related = { value in
            relationships.flatMap { relationship in
                relationship.related(value).map { Row(table: Swift.type(of: $0).tableName, id: Self.idText($0)) }
            }
        }
        relatedValues = { value in
            relationships.flatMap { relationship in
                relationship.related(value).map { related in (Row(table: Swift.type(of: related).tableName, id: Self.idText(related)), related) }
            }
        }
        droppingLinks = { value, rows in
            var current: Any = value
            for relationship in relationships {
                guard let without = relationship.removingRelated(current, { rows.contains(Row(table: Swift.type(of: $0).tableName, id: Self.idText($0))) })
                else { return nil }
                current = without
            }
            return current as? T
        }
        links = schema.relationships.filter(\.isToMany).map(\.linkTable)
        linkFields = Dictionary(schema.relationships.filter(\.isToMany).map { ($0.linkTable, $0.name) }, uniquingKeysWith: { first, _ in first })
        if T.self is any SyncMergeable.Type {
            merge = { device, server, fields in
                guard let mergeable = T.self as? any SyncMergeable.Type,
                      let merged = try mergeable.mergeAny(device, with: server, changed: fields) as? T else {
                    throw SyncError(.mergeFailed, "\(name).merge returned a value of another type")
                }
                return merged
            }
        } else {
            merge = nil
        }
        self.type = ObjectIdentifier(T.self)
        modelType = T.self
        targets = schema.relationships.map { ("\($0.target)", ObjectIdentifier($0.target)) }
        canonicalID = { parse($0).map(text) }
        self.serverText = serverText
        let serverIDType = T.ID.self == UUID.self ? "uuid" : "text"
        self.serverIDType = serverIDType
        edges = relationships.map { relationship in
            Edge(storage: relationship.isToMany ? .linkTable(relationship.linkTable) : .column(relationship.name), target: relationship.target.tableName)
        }
        encode = { value in
            guard let value = value as? T else {
                throw SyncError(.invalidArgument, "a \(Swift.type(of: value)) value was given as a \(name)")
            }
            return String(decoding: try SyncJSON.encoder().encode(value), as: UTF8.self)
        }
        decode = { json, id in
            let value = try SyncJSON.decoder().decode(T.self, from: Data(json.utf8))
            guard let expected = parse(id), value.id == expected else {
                throw SyncError(.invalidArgument, "a change of \(name) \(id) carries the value of \(name) \(text(value.id))")
            }
            return value
        }
    }
}

extension SyncedModel {
    /// A filter of this model's values whose ids are among `texts` (texts that are not ids of
    /// this model are left out); `T` is ``modelType``, opened by the engine's code.
    package func idFilter<T: Model>(_: T.Type, _ texts: [String]) throws -> Filter<T> {
        guard let keyPath = idKeyPath.value as? KeyPath<T, T.ID> else {
            throw SyncError(.invalidArgument, "\(T.self) is not the synced model \(name)")
        }
        return Filter(keyPath, is: .in(texts.compactMap { parseID($0) as? T.ID }))
    }

    /// Values by their canonical ids (the last of a repeated id wins).
    package static func byID<T: Model & Sendable>(_ values: [T]) -> [String: any Model & Sendable] {
        Dictionary(values.map { (idText($0), $0 as any Model & Sendable) }, uniquingKeysWith: { _, last in last })
    }

    /// The canonical form of each of `texts` that is an id of this model.
    package func canonicalIDs(_ texts: [String]) -> [String] { texts.compactMap(canonicalID) }

    /// `value` as this model's type, or an error naming both.
    package func typed<T: Model>(_ value: any Model, as _: T.Type) throws -> T {
        guard let typed = value as? T else {
            throw SyncError(.invalidArgument, "a \(Swift.type(of: value)) value was given as a \(name)")
        }
        return typed
    }
}

/// A key path, which is immutable, across concurrency domains (`KeyPath` is not `Sendable`).
package struct UncheckedSendable<Value>: @unchecked Sendable {  // holds only immutable values (key paths)
    package let value: Value
    init(_ value: Value) { self.value = value }
}
