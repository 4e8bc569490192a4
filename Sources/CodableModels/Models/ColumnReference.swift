import Foundation

/// Where a key path's value lives: a column, or a path inside the JSON a column holds.
package struct ColumnReference: Hashable, Sendable {
    package let column: String
    /// Property names inside the column's JSON; empty for the column itself.
    package let jsonPath: [String]
    /// Whether the value is a `Decimal`, stored as exact text but ordered by its numeric value.
    package var isDecimal = false
    /// Whether the value is a `Bool` (JSON `true`/`false` inside stored JSON).
    package var isBool = false
    /// The nested types the JSON path goes through, each with the member it names.
    package var nestedHops: [NestedKeys.Hop] = []

    /// Why the JSON path cannot find its value (see ``NestedKeys``).
    package func nestedKeyProblem(root: Any.Type) -> ModelError? {
        guard let problem = nestedHops.lazy.compactMap(NestedKeys.problem(at:)).first else { return nil }
        return ModelError(.invalidKeyPath, root, "cannot filter, sort or index on \(name): \(problem)")
    }

    /// `age` or `address.city`, for messages and index names.
    package var name: String { ([column] + jsonPath).joined(separator: ".") }

    /// The column for a key path of `Root`, found among its stored properties (and, for nested
    /// values, theirs), once per key path.
    package static func resolve<Root>(_ keyPath: PartialKeyPath<Root>) -> Result<ColumnReference, ModelError> {
        let key = KeyPathKey(keyPath: keyPath)
        if let cached = cache.withLock({ $0[key] }) { return cached }
        let result: Result<ColumnReference, ModelError>
        if let (names, type, containers) = search(Root.self, prefix: nil, names: [], containers: [], target: keyPath, depth: 0) {
            result = .success(ColumnReference(
                column: names[0], jsonPath: Array(names.dropFirst()),
                isDecimal: type == Decimal.self || type == Decimal?.self,
                isBool: type == Bool.self || type == Bool?.self,
                // containers[i] holds the member names[i + 1].
                nestedHops: zip(containers, names.dropFirst()).map { NestedKeys.Hop(type: $0, member: $1) }))
        } else {
            result = .failure(ModelError(.invalidKeyPath, Root.self, """
                cannot filter, sort or index on key path \(keyPath): it is not a stored property, or a stored \
                property of a nested value (computed properties and optional chaining are not stored)
                """))
        }
        cache.withLock { $0[key] = result }
        return result
    }

    private struct KeyPathKey: Hashable, @unchecked Sendable {  // key paths are immutable values
        let keyPath: AnyKeyPath
    }

    private static let cache = Locked<[KeyPathKey: Result<ColumnReference, ModelError>]>([:])

    /// The property names leading to `target`, its type, and the nested types on the way (stored
    /// as JSON objects, whose members the path names).
    private static func search(
        _ base: Any.Type, prefix: AnyKeyPath?, names: [String], containers: [Any.Type], target: AnyKeyPath, depth: Int
    ) -> ([String], Any.Type, [Any.Type])? {
        guard let fields = try? ModelReflection.storedFields(ofType: base) else { return nil }
        var candidates: [(AnyKeyPath, [String], Any.Type)] = []
        for field in fields {
            guard let full = prefix.map({ $0.appending(path: field.keyPath) }) ?? field.keyPath else { continue }
            let path = names + [field.name]
            if full == target { return (path, field.type, containers) }
            // Nested values are JSON; a related model is another table (see RelatedColumn).
            if StorageType.of(field.type) == (.untyped, false), Relationship.relatedModel(ofPropertyType: field.type) == nil {
                candidates.append((full, path, field.type))
            }
        }
        guard depth < 4 else { return nil }
        for (full, path, type) in candidates {
            if let found = search(type, prefix: full, names: path, containers: containers + [type], target: target, depth: depth + 1) {
                return found
            }
        }
        return nil
    }
}

/// A key path through a to-one relationship, such as `\Movie.studio?.name`: the relationship and
/// the column of the related table.
package enum RelatedColumn {
    /// Swift cannot build an optional-chaining key path at run time to compare with, so the key
    /// path's description (`\Movie.studio?.name?`) names the properties; each name is then checked
    /// against the stored properties of the types it goes through.
    package static func resolve<Root: Model>(_ keyPath: AnyKeyPath, in root: Root.Type) -> (Relationship, ColumnReference)? {
        guard let schema = try? ModelReflection.of(Root.self) else { return nil }
        let components = String(describing: keyPath).split(separator: ".").map {
            $0.filter { $0 != "?" && $0 != "!" }
        }
        guard let start = components.firstIndex(where: { name in
            schema.relationships.contains { $0.name == name && !$0.isToMany }
        }), let relationship = schema.relationships.first(where: { $0.name == components[start] }) else { return nil }
        // What comes before is the root type's name, never one of its properties
        // (`\Movie.info.studio?.name` is not a path through `Movie.studio`).
        let propertyNames = Set(schema.properties.map(\.name) + schema.relationships.map(\.name))
        guard components[..<start].allSatisfy({ !propertyNames.contains($0) }) else { return nil }
        let names = Array(components[(start + 1)...])
        guard let first = names.first,
              let fields = try? ModelReflection.storedFields(ofType: relationship.target),
              let field = fields.first(where: { $0.name == first }),
              Relationship.relatedModel(ofPropertyType: field.type) == nil else { return nil }
        // Nested properties of the related value are JSON inside its column, as for the model itself.
        let isDecimal = names.count == 1 && (field.type == Decimal.self || field.type == Decimal?.self)
        return (relationship, ColumnReference(column: first, jsonPath: Array(names.dropFirst()), isDecimal: isDecimal))
    }
}
