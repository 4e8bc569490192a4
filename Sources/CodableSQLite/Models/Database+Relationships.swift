import Foundation

/// Saving, loading and deleting values with relationships (see `Relationship`).
///
/// - Loading runs one statement for the values asked for, and for each relationship in the type
///   graph one statement for the related values (and one for a to-many's links), each selecting
///   them with a subquery of the ids above it: the count depends on the graph's shape, never on
///   the number of rows. All of them read one snapshot.
/// - Saving carries out `GraphSave`'s steps value by value: related values first (by id: an
///   upsert, once per value per call unless a later one differs), then the value, then a to-many's
///   links. An id assigned during the call never takes one that another value of the call gives
///   explicitly (see `ExplicitIDs`).
/// - Deleting applies each relationship's `DeleteRule`.
extension SQLite.Database {
    // MARK: Loading

    /// Decodes the values `sql` selects, their related values filled in. `ids` is SQL selecting
    /// the ids of those values (`nil`: every row), with the same `arguments` as `sql`.
    func loadGraph<T: Model>(
        _ type: T.Type, table: ModelTable, sql: String, arguments: [SQLite.Value], ids: String?, on connection: RawConnection
    ) throws -> [T] {
        try loadGraph(T.self, rows: T.self, table: table, sql: sql, arguments: arguments, ids: ids, on: connection)
    }

    /// ``loadGraph(_:table:sql:arguments:ids:on:)`` decoding each row as `Row`, which decodes a
    /// `T` from the row (and may read more of its columns, such as a search's score).
    func loadGraph<T: Model, Row: Decodable>(
        _ type: T.Type, rows: Row.Type, table: ModelTable, sql: String, arguments: [SQLite.Value], ids: String?, on connection: RawConnection
    ) throws -> [Row] {
        var lookups: [String: RelatedValues] = [:]
        for relationship in table.schema.relationships {
            lookups[relationship.name] = try loadRelated(relationship, of: table, ids: ids, arguments: arguments, on: connection)
        }
        var options = DecodingOptions()
        if !lookups.isEmpty {
            options.overrides = RowOverrides(keys: Set(lookups.keys), decode: { key, columns in
                try lookups[key]?.value(in: columns)
            })
        }
        return try connection.withStatement(sql) { statement in
            try statement.bind(arguments)
            return try statement.decodeRows(Row.self, options: options, indexesRows: false)
        }
    }

    private func loadRelated(
        _ relationship: Relationship, of owner: ModelTable, ids: String?, arguments: [SQLite.Value], on connection: RawConnection
    ) throws -> RelatedValues {
        func load<Target: Model>(_ target: Target.Type) throws -> RelatedValues {
            var result = RelatedValues(relationship: relationship)
            guard let targetTable = try tableForReading(Target.self) else { return result }
            let targetIDs: String
            let boundArguments = ids == nil ? [] : arguments
            if relationship.isToMany {
                guard owner.linkTables.contains(relationship.linkTable) else { return result }
                let link = SQLName.quoted(relationship.linkTable)
                let filter = ids.map { " WHERE \"owner\" IN (\($0))" } ?? ""
                targetIDs = "SELECT \"target\" FROM \(link)\(filter)"
                try connection.withStatement("SELECT \"owner\", \"target\" FROM \(link)\(filter) ORDER BY \"owner\", \"position\"") { statement in
                    try statement.bind(boundArguments)
                    while try statement.step() {
                        result.links[statement.value(at: 0), default: []].append(statement.value(at: 1))
                    }
                }
            } else {
                // A to-one added to a model whose table has no column for it yet: nothing is linked.
                guard owner.columns.contains(where: { $0.name == relationship.name }) else { return result }
                let ownerName = SQLName.quoted(owner.schema.table)
                targetIDs = "SELECT \(SQLName.quoted(relationship.name)) FROM \(ownerName)" + (ids.map { " WHERE \(ModelReflection.quotedID) IN (\($0))" } ?? "")
            }
            let values = try loadGraph(
                Target.self, table: targetTable, sql: targetTable.select + " WHERE \(ModelReflection.quotedID) IN (\(targetIDs))",
                arguments: boundArguments, ids: targetIDs, on: connection)
            result.byID.reserveCapacity(values.count)
            for value in values { result.byID[try storedID(of: value)] = value }
            return result
        }
        return try load(relationship.target)
    }

    // MARK: Saving

    /// Saves `value` and its related values (inside the caller's transaction), returning it as
    /// saved: assigned ids filled in, related values included.
    func saveGraph<T: Model>(
        _ value: T, table: ModelTable, on connection: RawConnection, elementIndex: Int?, saved: inout SavedValues
    ) throws -> T {
        var relatedByKey: [String: [any Model]] = [:]
        let assignedBefore = saved.assignedIDs
        var stored = value
        var owner = SQLite.Value.null
        for step in GraphSave.steps(for: table.schema) {
            switch step {
            case .related(let relationship):
                relatedByKey[relationship.name] = try relationship.related(value).map { try saveRelated($0, on: connection, saved: &saved) }
            case .values:
                stored = try saveGraphRow(
                    value, table: table, relatedByKey: relatedByKey, assignedBefore: assignedBefore, on: connection, elementIndex: elementIndex,
                    saved: &saved)
                owner = try storedID(of: stored)
            case .links(let relationship):
                let targets = try (relatedByKey[relationship.name] ?? []).map { try storedID(of: $0) }
                try replaceLinks(relationship, owner: owner, targets: targets, on: connection)
            }
        }
        return stored
    }

    /// The row of `value` in a graph save, its to-one relationships as the related values' ids
    /// (`relatedByKey`, saved before); read back when it or a related value got an id.
    private func saveGraphRow<T: Model>(
        _ value: T, table: ModelTable, relatedByKey: [String: [any Model]], assignedBefore: Int, on connection: RawConnection,
        elementIndex: Int?, saved: inout SavedValues
    ) throws -> T {
        // Whether this value, or a related one at any depth, gets its id now: then the saved value
        // differs from `value` and is read back.
        let assignsIDs = (table.schema.assignsID && isNilOptional(value.id)) || saved.assignedIDs > assignedBefore
        let relationships = table.schema.relationships
        let overrides = RowOverrides(
            keys: Set(relationships.map(\.name)),
            encode: { key, _ in
                guard let relationship = relationships.first(where: { $0.name == key }), !relationship.isToMany,
                      let target = relatedByKey[key]?.first else { return .skip }
                return .value(encodableID(of: target))
            },
            decode: { key, _ in
                guard let relationship = relationships.first(where: { $0.name == key }) else { return nil }
                return relationship.makeValue(relatedByKey[key] ?? [])
            })
        var encoding = EncodingOptions()
        encoding.overrides = overrides
        var decoding = DecodingOptions()
        decoding.overrides = overrides
        var assignedID: Int64?
        if table.schema.assignsID && isNilOptional(value.id) {
            try saved.findExplicitIDs()
            assignedID = try saved.explicitIDs.idToAssign(T.self, in: table, on: connection)
        }
        return try connection.withStatement(assignsIDs ? table.upsertReturning : table.upsert) { statement -> T in
            try statement.bindRow(value, options: encoding, elementIndex: elementIndex)
            try statement.bindAssignedID(assignedID, table: table)
            guard assignsIDs else {
                // Nothing gets an id: what was saved is `value` itself, with the related values as given.
                try statement.run()
                return value
            }
            guard let row = try statement.decodeSingleRow(T.self, options: decoding) else {
                throw ModelError(.unexpectedResult, T.self, "the database returned no row for the saved value")
            }
            return row
        }
    }

    private func saveRelated(_ value: any Model, on connection: RawConnection, saved: inout SavedValues) throws -> any Model {
        func save<Target: Model>(_ value: Target) throws -> any Model {
            let key = isNilOptional(value.id) ? nil : SavedValues.Key(type: ObjectIdentifier(Target.self), id: try storedID(of: value))
            // A value with an id this call saved already: the same value is saved; another one
            // with that id is saved over it, so that the later wins, as saving them one by one
            // would (and as PostgreSQL's one statement does).
            if let key, let done = saved.values[key], try saved.isSame(value, as: key) { return done }
            let table = try tableForWriting(Target.self, sample: value)
            if saved.keepsExistingRelated, let key, try exists(key.id, in: table, on: connection) {
                saved.values[key] = value
                saved.given[key] = value
                return value
            }
            if table.schema.assignsID && isNilOptional(value.id) {
                saved.assignedIDs += 1
                try saved.findExplicitIDs()
            }
            let result = table.schema.relationships.isEmpty
                ? try saveRow(value, in: table, on: connection, elementIndex: nil, explicitIDs: &saved.explicitIDs)
                : try saveGraph(value, table: table, on: connection, elementIndex: nil, saved: &saved)
            if let key {
                saved.values[key] = result
                saved.given[key] = value
            }
            return result
        }
        return try save(value)
    }

    /// Whether `table` has a row with this id.
    private func exists(_ id: SQLite.Value, in table: ModelTable, on connection: RawConnection) throws -> Bool {
        try connection.withStatement("SELECT 1 FROM \(SQLName.quoted(table.schema.table)) WHERE \(ModelReflection.quotedID) = ?") { statement in
            try statement.bind([id])
            return try statement.step()
        }
    }

    /// Makes the link table hold exactly `targets`, in order, for `owner` (no write when it does).
    private func replaceLinks(_ relationship: Relationship, owner: SQLite.Value, targets: [SQLite.Value], on connection: RawConnection) throws {
        let link = SQLName.quoted(relationship.linkTable)
        let current = try connection.withStatement("SELECT \"target\" FROM \(link) WHERE \"owner\" = ? ORDER BY \"position\"") { statement in
            try statement.bind([owner])
            return try statement.firstColumnValues()
        }
        guard current != targets else { return }
        if !current.isEmpty {
            try connection.withStatement("DELETE FROM \(link) WHERE \"owner\" = ?") { statement in
                try statement.bind([owner])
                try statement.run()
            }
        }
        for (position, target) in targets.enumerated() {
            try connection.withStatement("INSERT INTO \(link) (\"owner\", \"position\", \"target\") VALUES (?, ?, ?)") { statement in
                try statement.bind([owner, .integer(Int64(position)), target])
                try statement.run()
            }
        }
    }

    // MARK: Deleting

    /// Deletes the rows with these ids and applies the delete rules (inside the caller's
    /// transaction). Returns how many rows of `T` were deleted.
    func deleteGraph<T: Model>(_ type: T.Type, table: ModelTable, ids: [SQLite.Value], on connection: RawConnection) throws -> Int {
        guard !ids.isEmpty else { return 0 }
        let name = SQLName.quoted(table.schema.table)
        let relationships = table.schema.relationships
        var found: [(Relationship, [SQLite.Value])] = []
        for chunk in ids.chunked(500) {
            let list = Self.placeholders(chunk.count)
            for relationship in DeleteRules.checked(in: table.schema) {
                let sql: String
                if relationship.isToMany {
                    guard table.linkTables.contains(relationship.linkTable) else { continue }
                    sql = "SELECT \"target\" FROM \(SQLName.quoted(relationship.linkTable)) WHERE \"owner\" IN \(list)"
                } else {
                    guard table.columns.contains(where: { $0.name == relationship.name }) else { continue }
                    let column = SQLName.quoted(relationship.name)
                    sql = "SELECT \(column) FROM \(name) WHERE \(ModelReflection.quotedID) IN \(list) AND \(column) IS NOT NULL"
                }
                found.append((relationship, try connection.withStatement(sql) { statement in
                    try statement.bind(Array(chunk))
                    return try statement.firstColumnValues()
                }))
            }
        }
        let cascades = try DeleteRules.decide(for: table.schema, found: found)
        var deleted = 0
        for chunk in ids.chunked(500) {
            let list = Self.placeholders(chunk.count)
            // The links go with the owner (also when foreign keys are off).
            for relationship in relationships where relationship.isToMany && table.linkTables.contains(relationship.linkTable) {
                try connection.withStatement("DELETE FROM \(SQLName.quoted(relationship.linkTable)) WHERE \"owner\" IN \(list)") { statement in
                    try statement.bind(Array(chunk))
                    try statement.run()
                }
            }
            try connection.withStatement("DELETE FROM \(name) WHERE \(ModelReflection.quotedID) IN \(list)") { statement in
                try statement.bind(Array(chunk))
                try Self.translatingForeignKeyFailure(T.self) { try statement.run() }
            }
            deleted += connection.changes
        }
        for (relationship, related) in cascades {
            func cascade<Target: Model>(_ target: Target.Type) throws {
                guard let targetTable = try tableForReading(Target.self) else { return }
                _ = try deleteGraph(Target.self, table: targetTable, ids: related, on: connection)
            }
            try cascade(relationship.target)
        }
        return deleted
    }

    /// `(?, ?, …)` with `count` parameters.
    private static func placeholders(_ count: Int) -> String {
        "(" + Array(repeating: "?", count: count).joined(separator: ", ") + ")"
    }

    /// Runs `body`, turning a failed foreign key (a value others still refer to through a
    /// non-optional to-one relationship) into `ModelError.Code.deleteDenied`.
    static func translatingForeignKeyFailure<T>(_ type: T.Type, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as SQLite.Error where error.extendedCode == .constraintForeignKey {
            throw DeleteRules.stillReferenced(T.self, detail: error.message)
        }
    }
}

/// The related values of one relationship, loaded for a batch of owners.
struct RelatedValues {
    let relationship: Relationship
    /// Target values by stored id.
    var byID: [SQLite.Value: Any] = [:]
    /// For a to-many: the owner's id → its targets' ids, in order.
    var links: [SQLite.Value: [SQLite.Value]] = [:]

    init(relationship: Relationship) {
        self.relationship = relationship
    }

    /// The property's value for the row being decoded.
    func value(in columns: RowColumns) throws -> Any? {
        if relationship.isToMany {
            guard let owner = columns.value(named: ModelReflection.idName) else { return relationship.makeValue([]) }
            return relationship.makeValue((links[owner] ?? []).compactMap { byID[$0] })
        }
        guard let key = columns.value(named: relationship.name), key != .null else { return nil }
        guard let target = byID[key] else {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: [AnyCodingKey(stringValue: relationship.name)],
                debugDescription: "\(relationship.qualifiedName) refers to the \(relationship.target) with id \(key), which does not exist (foreign keys were off when it was deleted?)"))
        }
        return relationship.makeValue([target])
    }
}

/// The values one save call has saved, so that a value shared by several others is saved once.
struct SavedValues {
    struct Key: Hashable {
        let type: ObjectIdentifier
        let id: SQLite.Value
    }

    var values: [Key: any Model] = [:]
    /// Each saved value as the call gave it, to tell a second occurrence of its id apart.
    var given: [Key: any Model] = [:]
    /// Leave related values whose rows exist as stored (see `save(_:keepingExistingRelated:)`).
    var keepsExistingRelated = false
    /// How many ids were assigned so far: a value whose related values (at any depth) got ids
    /// must be read back to carry them.
    var assignedIDs = 0
    /// The ids the call gives explicitly, which no assigned id may take: found by
    /// ``findExplicitIDs()`` the first time a value without an id is saved (a save whose values
    /// all have ids never walks its graph for them).
    var explicitIDs = ExplicitIDs()
    private var find: (() throws -> ExplicitIDs)?

    /// `roots` are the values the call saves.
    init<T: Model>(roots: [T]) {
        find = { try ExplicitIDs(ofGraphs: roots) }
    }

    /// Whether `value` is the value this call saved under `key` (the same encoded form).
    func isSame(_ value: any Model, as key: Key) throws -> Bool {
        guard let earlier = given[key] else { return true }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        func encoded(_ value: some Model) throws -> Data { try encoder.encode(value) }
        return try encoded(value) == encoded(earlier)
    }

    /// Walks the call's values for their explicit ids, once.
    mutating func findExplicitIDs() throws {
        guard let find else { return }
        self.find = nil
        explicitIDs = try find()
    }

}
