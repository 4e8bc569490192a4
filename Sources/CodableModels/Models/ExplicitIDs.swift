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

    /// The explicit ids of `type` (and the largest), when they must be kept free; `nil` otherwise.
    package func kept<M: Model>(_ type: M.Type) -> (ids: Set<Int64>, largest: Int64)? {
        byType[ObjectIdentifier(M.self)].map { ($0.ids, $0.largest) }
    }

    /// Keeps no id free for `type` any more (the engine's own choice is above all of them).
    package mutating func stopKeeping<M: Model>(_ type: M.Type) {
        byType[ObjectIdentifier(M.self)] = nil
    }

    /// Whether no id needs to be kept free.
    package var isEmpty: Bool { byType.isEmpty }

    /// The explicit ids of `values`, all of one model type.
    package init<T: Model>(of values: [T], schema: ModelReflection) throws {
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
}
