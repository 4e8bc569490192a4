@_spi(Reflection) import Swift
import Foundation

/// The stored properties of a model type, read with Swift's runtime reflection, and what they
/// become in SQLite.
package struct ModelReflection: @unchecked Sendable {  // immutable after creation; AnyKeyPath and Any.Type are immutable values
    /// The id's property and column name: `Identifiable` names it, so every model's is this one.
    /// SQL the model layer writes names it through ``quotedID``.
    package static let idName = "id"
    /// ``idName`` quoted for SQL.
    package static let quotedID = SQLName.quoted(idName)

    package struct Property: @unchecked Sendable {  // AnyKeyPath and Any.Type are immutable
        package let name: String
        package let keyPath: AnyKeyPath
        package let type: Any.Type
        package let storage: StorageType
        package let isOptional: Bool
        /// For a to-one relationship: the table whose id the column holds.
        package var references: String?
    }

    package let modelType: Any.Type
    package let table: String
    /// The properties stored in the model's own table (to-many relationships are not: they live in
    /// link tables).
    package let properties: [Property]
    /// The relationships, in declaration order.
    package let relationships: [Relationship]
    package let id: Property
    /// Whether SQLite assigns the id (an optional integer id, `nil` until saved).
    package let assignsID: Bool

    package func property(named name: String) -> Property? {
        properties.first { $0.name == name }
    }

    /// The schema of `T`, computed once per type.
    package static func of<T: Model>(_ type: T.Type) throws -> ModelReflection {
        let key = ObjectIdentifier(T.self)
        if let cached = cache.withLock({ $0[key] }) { return try cached.get() }
        let result = Result { try make(T.self) }
        cache.withLock { $0[key] = result }
        return try result.get()
    }

    private static let cache = Locked<[ObjectIdentifier: Result<ModelReflection, any Error>]>([:])

    private static func make<T: Model>(_ type: T.Type) throws -> ModelReflection {
        let fields = try storedFields(of: T.self)
        guard !fields.isEmpty else {
            throw ModelError(.unsupportedModel, T.self, "has no stored properties to save; models are structs with stored properties")
        }
        var properties: [Property] = []
        var relationships: [Relationship] = []
        for field in fields {
            if let relationship = try Relationship.of(field, in: T.self) {
                relationships.append(relationship)
                guard case .toOne(let isOptional) = relationship.kind else { continue }
                properties.append(Property(
                    name: field.name, keyPath: field.keyPath, type: field.type, storage: relationship.targetIDStorage, isOptional: isOptional,
                    references: relationship.target.tableName))
                continue
            }
            let (storage, isOptional) = StorageType.of(field.type)
            properties.append(Property(name: field.name, keyPath: field.keyPath, type: field.type, storage: storage, isOptional: isOptional))
        }
        if !relationships.isEmpty { try Relationship.checkForCycles(from: T.self) }
        for keyPath in T.deleteRules.keys where !relationships.contains(where: { $0.keyPath == keyPath }) {
            throw ModelError(.unsupportedModel, T.self, """
                has a delete rule for \(keyPath), which is not a relationship (a stored property whose type is a model, \
                an optional model or an array of models); remove it from deleteRules
                """)
        }
        guard let id = properties.first(where: { $0.name == Self.idName }) else {
            throw ModelError(.unsupportedModel, T.self, "has no stored property named `id`; a model needs one (UUID, String, Int, Int64 or an optional integer)")
        }
        let assignsID = id.isOptional
        if assignsID && id.storage != .integer {
            throw ModelError(.unsupportedModel, T.self, "has an optional `id` of type \(id.type); only optional integer ids (Int?, Int64?) can be assigned on insert. Make the id non-optional.")
        }
        let table = T.tableName
        guard !table.isEmpty else { throw ModelError(.unsupportedModel, T.self, "has an empty tableName") }
        if relationships.contains(where: { $0.name == Self.idName }) {
            throw ModelError(.unsupportedModel, T.self, "has an `id` whose type is a model; an id is a UUID, String or integer")
        }
        return ModelReflection(modelType: T.self, table: table, properties: properties, relationships: relationships, id: id, assignsID: assignsID)
    }

    package struct Field {
        package let name: String
        package let keyPath: AnyKeyPath
        package let type: Any.Type
    }

    /// ``storedFields(of:)`` for a type known only at run time.
    package static func storedFields(ofType type: Any.Type) throws -> [Field] {
        func open<T>(_ type: T.Type) throws -> [Field] { try storedFields(of: type) }
        return try _openExistential(type, do: open)
    }

    /// Stored properties with their names, key paths and types, in declaration order.
    package static func storedFields<Root>(of type: Root.Type) throws -> [Field] {
        // The standard library's reflection of key paths refuses class types: models are structs.
        if Root.self is AnyClass {
            throw ModelError(.unsupportedModel, Root.self, """
                is a class; models are structs (value types), whose stored properties Swift can list with their \
                key paths. Make it a struct, or store the class with your own SQL (SQLite.Encoder, on SQLite).
                """)
        }
        let options: _EachFieldOptions = []
        var names: [String] = []
        var keyPaths: [AnyKeyPath] = []
        let keyPathsRead = _forEachFieldWithKeyPath(of: Root.self, options: options) { name, keyPath in
            names.append(String(cString: name))
            keyPaths.append(keyPath)
            return true
        }
        var types: [Any.Type] = []
        let typesRead = _forEachField(of: Root.self, options: options) { _, _, type, _ in
            types.append(type)
            return true
        }
        guard keyPathsRead, typesRead, names.count == types.count else {
            throw unreflectable(Root.self)
        }
        return (0..<names.count).map { Field(name: names[$0], keyPath: keyPaths[$0], type: types[$0]) }
    }

    /// The error for a struct whose stored properties Swift lists but cannot give key paths for:
    /// it names the properties (closures, metatypes, weak or unowned references).
    private static func unreflectable<Root>(_ type: Root.Type) -> ModelError {
        var withKeyPaths: Set<String> = []
        // `.ignoreUnknown` (1 << 1), spelled by value: the standard library declares it as a `static var`.
        let ignoreUnknown = _EachFieldOptions(rawValue: 1 << 1)
        _ = _forEachFieldWithKeyPath(of: Root.self, options: ignoreUnknown) { name, _ in
            withKeyPaths.insert(String(cString: name))
            return true
        }
        var offending: [String] = []
        _ = _forEachField(of: Root.self, options: []) { name, _, fieldType, _ in
            let name = String(cString: name)
            if !withKeyPaths.contains(name) { offending.append("`\(name)` (\(fieldType))") }
            return true
        }
        guard !offending.isEmpty else {
            return ModelError(.unsupportedModel, Root.self, "cannot be reflected: Swift's runtime does not list its stored properties")
        }
        let list = offending.joined(separator: ", ")
        return ModelError(.unsupportedModel, Root.self, """
            has stored properties a model cannot keep: \(list). Closures, metatypes and weak or unowned references \
            have no key paths, so they cannot be columns; make them computed properties, or keep them outside the model
            """)
    }
}

extension ModelReflection {
    /// The tables a value of `type` is read from, from its declaration alone (whether or not they
    /// exist): its own, each to-many's link table and, through its relationships, its targets'
    /// (each once, in that order). Observing the model observes these tables, on both engines.
    ///
    /// ```swift
    /// try ModelReflection.graphTables(of: Movie.self)   // ["movies", "movies.cast", "people"]
    /// ```
    package static func graphTables<T: Model>(of type: T.Type) throws -> [String] {
        var names: [String] = []
        func visit<Visited: Model>(_ type: Visited.Type) throws {
            let schema = try ModelReflection.of(Visited.self)
            guard !names.contains(schema.table) else { return }
            names.append(schema.table)
            for relationship in schema.relationships {
                if relationship.isToMany, !names.contains(relationship.linkTable) { names.append(relationship.linkTable) }
                try visit(relationship.target)   // reflection refuses graphs with cycles, and a table is visited once
            }
        }
        try visit(T.self)
        return names
    }
}

/// The id of a model value, as stored (an `any Model` opens to its concrete type).
package func storedID<M: Model>(of value: M) throws -> StoredValue {
    try ValueEncoder.value(for: value.id, at: .root, options: EncodingOptions())
}

/// The id of a model value, to encode.
package func encodableID(of value: any Model) -> any Encodable {
    func open<M: Model>(_ value: M) -> any Encodable { value.id }
    return open(value)
}
