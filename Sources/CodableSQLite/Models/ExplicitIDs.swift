import Foundation

/// The ids one save call gives explicitly to values whose type lets SQLite assign ids (an optional
/// integer id), for the types that also have values without one in the same call.
///
/// An id SQLite assigns must never be one of them: the value given that id explicitly, saved
/// later in the call, would update the new row instead of being a value of its own (issue 21).
/// So an id-less value gets the id SQLite would choose (one more than the largest stored id),
/// skipping the explicit ids of the call.
package struct ExplicitIDs {
    private struct IDs {
        var ids: Set<Int64> = []
        var largest = Int64.min
        var hasIDLessValues = false

        mutating func insert(_ id: Int64) {
            ids.insert(id)
            largest = max(largest, id)
        }
    }

    private var byType: [ObjectIdentifier: IDs] = [:]

    /// None: nothing to keep free.
    package init() {}

    /// The explicit ids of values of `type` in the call, when it also has values of that type without one.
    package func ids<M: Model>(of type: M.Type) -> Set<Int64> {
        byType[ObjectIdentifier(M.self)]?.ids ?? []
    }

    /// Whether no id needs to be kept free.
    var isEmpty: Bool { byType.isEmpty }

    /// The explicit ids of `values`, all of one model type.
    init<T: Model>(of values: [T], schema: ModelReflection) throws {
        // Only a call with values with and without ids can collide: the others cost one pass.
        guard schema.assignsID else { return }
        var hasIDLess = false, hasExplicit = false
        for value in values where !(hasIDLess && hasExplicit) {
            if isNilOptional(value.id) { hasIDLess = true } else { hasExplicit = true }
        }
        guard hasIDLess && hasExplicit else { return }
        for value in values { try note(value) }
        removeTypesWithoutIDLessValues()
    }

    /// The explicit ids of `values` and of their related values at any depth.
    package init<T: Model>(ofGraphs values: [T]) throws {
        guard try Self.cachedAssignsIDs(inGraphOf: T.self) else { return }
        for value in values { try noteGraph(value) }
        removeTypesWithoutIDLessValues()
    }

    /// Whether `type`, or a type it relates to at any depth, has ids SQLite assigns.
    private static func assignsIDs(inGraphOf type: any Model.Type) throws -> Bool {
        func open<M: Model>(_ type: M.Type) throws -> Bool {
            let schema = try ModelReflection.of(M.self)
            return try schema.assignsID || schema.relationships.contains { try assignsIDs(inGraphOf: $0.target) }
        }
        return try open(type)
    }

    /// Whether each type's graph has ids SQLite assigns: a pure function of the type, remembered.
    private static let graphAssignsIDs = Locked<[ObjectIdentifier: Bool]>([:])

    private static func cachedAssignsIDs(inGraphOf type: any Model.Type) throws -> Bool {
        if let known = graphAssignsIDs.withLock({ $0[ObjectIdentifier(type)] }) { return known }
        let answer = try assignsIDs(inGraphOf: type)
        graphAssignsIDs.withLock { $0[ObjectIdentifier(type)] = answer }
        return answer
    }

    private mutating func noteGraph(_ value: any Model) throws {
        func open<M: Model>(_ value: M) throws {
            let schema = try ModelReflection.of(M.self)
            if schema.assignsID { try note(value) }
            // Only the relationships that can lead to assigned ids: a cast of actors with string
            // ids is never walked (most of a graph's values, and most of the cost).
            for relationship in schema.relationships where try Self.cachedAssignsIDs(inGraphOf: relationship.target) {
                for related in relationship.related(value) { try noteGraph(related) }
            }
        }
        try open(value)
    }

    private mutating func note<M: Model>(_ value: M) throws {
        let key = ObjectIdentifier(M.self)
        if isNilOptional(value.id) {
            byType[key, default: IDs()].hasIDLessValues = true
        } else if case .integer(let id) = try storedID(of: value) {
            byType[key, default: IDs()].insert(id)
        }
    }

    private mutating func removeTypesWithoutIDLessValues() {
        byType = byType.filter { $0.value.hasIDLessValues && !$0.value.ids.isEmpty }
    }

    /// The id to insert an id-less `M` with, or `nil` to let SQLite choose as usual.
    mutating func idToAssign<M: Model>(_ type: M.Type, in table: ModelTable, on connection: RawConnection) throws -> Int64? {
        let key = ObjectIdentifier(M.self)
        guard let explicit = byType[key] else { return nil }
        let idColumn = SQLName.quoted(table.schema.id.name)
        let name = SQLName.quoted(table.schema.table)
        let stored = try connection.withStatement("SELECT max(\(idColumn)) FROM \(name)") { statement -> Int64? in
            guard try statement.step(), case .integer(let largest) = statement.value(at: 0) else { return nil }
            return largest
        }
        if (stored ?? 0) < .max, (stored ?? 0) + 1 > explicit.largest {
            // SQLite's own choice, one more than the largest stored id (1 in an empty table), is
            // above every explicit id, and stays so for the rest of the call.
            byType[key] = nil
            return nil
        }
        // The next id above the largest stored one that no value of the call claims.
        var candidate = stored ?? 0
        while candidate < .max {
            candidate += 1
            if !explicit.ids.contains(candidate) { return candidate }
        }
        // The largest id is taken: like SQLite, an unused one at random.
        for _ in 0..<100 {
            let candidate = Int64.random(in: 1 ... .max)
            guard !explicit.ids.contains(candidate) else { continue }
            let isUsed = try connection.withStatement("SELECT 1 FROM \(name) WHERE \(idColumn) = ?") { statement in
                try statement.bind([.integer(candidate)])
                return try statement.step()
            }
            if !isUsed { return candidate }
        }
        throw ModelError(.unexpectedResult, M.self, "found no unused id for a value saved without one; give it an id")
    }
}

extension Statement {
    /// Replaces the bound id of a row `bindRow` bound with `id`, when there is one.
    func bindAssignedID(_ id: Int64?, table: ModelTable) throws {
        guard let id, let index = parameters.indexes[table.schema.id.name] else { return }
        try bind(.integer(id), at: index)
    }
}
