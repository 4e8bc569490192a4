/// How a save of values with relationships goes, decided here once for every engine; each engine
/// carries the steps out its own way (SQLite value by value, PostgreSQL one statement per edge for
/// all the values of a call), with the same result.
///
/// 1. Each relationship's related values, in declaration order, are saved first (depth first,
///    their own related values before them): the values' foreign keys and links hold their ids,
///    assigned ones included.
/// 2. The values themselves.
/// 3. Each to-many relationship's links, replaced so that they hold exactly the value's related
///    values, in the array's order.
///
/// An id given more than once in one call (two values, or two related values somewhere in the
/// graph) stores the later value, links included: the result is the one saving the values one by
/// one would give. A related value given twice with the same content is saved once.
package enum GraphSave {
    /// One step of a graph save.
    package enum Step {
        /// Save the related values of this relationship.
        case related(Relationship)
        /// Save the values.
        case values
        /// Replace the links of this to-many relationship.
        case links(Relationship)
    }

    /// The steps of saving values of the model `schema` reflects, in order.
    package static func steps(for schema: ModelReflection) -> [Step] {
        schema.relationships.map { .related($0) } + [.values] + schema.relationships.filter(\.isToMany).map { .links($0) }
    }

    /// For values given in this order with these ids (`nil`: one the database assigns), whether
    /// each one is stored: of the values given one id, only the last is.
    package static func storedPositions<ID: Hashable>(ids: [ID?]) -> [Bool] {
        var last: [ID: Int] = Dictionary(minimumCapacity: ids.count)
        for (position, id) in ids.enumerated() { if let id { last[id] = position } }
        return ids.enumerated().map { position, id in id.map { last[$0] == position } ?? true }
    }
}
