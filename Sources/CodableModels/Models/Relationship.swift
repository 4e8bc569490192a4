import Foundation

/// What deleting a value does to the values its relationship links (SwiftData's rules), declared
/// per relationship in ``Model/deleteRules``.
///
/// ```swift
/// static var deleteRules: [PartialKeyPath<Movie>: DeleteRule] { [\Movie.cast: .cascade, \Movie.studio: .deny] }
/// ```
///
/// Sendable: a plain enum.
public enum DeleteRule: Sendable, Hashable, CustomStringConvertible {
    /// The default: the links go, the related values stay.
    case nullify
    /// The related values are deleted too, following their own rules, and so disappear from every
    /// other value that linked them.
    case cascade
    /// The delete throws ``ModelError/Code/deleteDenied`` while related values exist; nothing changes.
    case deny
    /// Nothing is done to the related values (the links of the deleted value go with it, as
    /// SQLite cannot keep a link to a row that does not exist).
    case noAction

    public var description: String {
        switch self {
        case .nullify: ".nullify"
        case .cascade: ".cascade"
        case .deny: ".deny"
        case .noAction: ".noAction"
        }
    }
}

/// An array of models: the shape of a to-many relationship.
package protocol ModelArrayType {
    static var modelElementType: any Model.Type { get }
}

extension Array: ModelArrayType where Element: Model {
    package static var modelElementType: any Model.Type { Element.self }
}

/// A stored property whose type is a model (`Studio`, `Studio?`: to-one, a foreign key column
/// named after the property) or an array of models (`[Actor]`: to-many, a link table
/// `Movie.cast(owner, position, target)` keeping the array's order).
package struct Relationship: @unchecked Sendable {  // immutable; key paths, metatypes and the closures are never mutated
    package enum Kind: Equatable {
        case toOne(isOptional: Bool)
        case toMany
    }

    package let name: String
    package let keyPath: AnyKeyPath
    package let kind: Kind
    package let target: any Model.Type
    package let rule: DeleteRule
    /// The model type that declares it.
    package let owner: Any.Type
    /// `"Movie.cast"`: the link table of a to-many relationship.
    package let linkTable: String
    /// The related values of a value of the owner type (0 or 1 for a to-one).
    package let related: (Any) -> [any Model]
    /// The property's value made of related values: a to-one's value (or `nil`), a to-many's array.
    package let makeValue: ([Any]) -> Any?
    /// How the target's id is stored: the type of a to-one's column and of a link's `target`.
    package let targetIDStorage: StorageType
    /// A value of the owner type without the related values `isRemoved` picks (out of a
    /// to-many's array; an optional to-one set to `nil`); `nil` when it cannot be without them
    /// (a non-optional to-one, or a `let` property).
    package let removingRelated: (_ value: Any, _ isRemoved: (any Model) -> Bool) -> Any?

    package var isToMany: Bool { kind == .toMany }

    /// `Movie.cast`, for messages.
    package var qualifiedName: String { "\(owner).\(name)" }

    /// The model a property of type `type` relates to (`Studio`, `Studio?`, `[Actor]`, `[Actor]?`),
    /// or `nil` for an ordinary property: the one place that tells relationships apart.
    package static func relatedModel(ofPropertyType type: Any.Type) -> (model: any Model.Type, isToMany: Bool, isOptional: Bool)? {
        let (base, isOptional) = unwrappedOptionalType(type)
        if let model = base as? any Model.Type { return (model, false, isOptional) }
        if let array = base as? any ModelArrayType.Type { return (array.modelElementType, true, isOptional) }
        return nil
    }

    /// The relationship a stored property is, or `nil` for an ordinary property.
    package static func of<Root: Model>(_ field: ModelReflection.Field, in root: Root.Type) throws -> Relationship? {
        guard let (target, isToMany, isOptional) = relatedModel(ofPropertyType: field.type) else { return nil }
        if !isToMany {
            return make(Root.self, target, field: field, kind: .toOne(isOptional: isOptional))
        }
        if isOptional {
            throw ModelError(.unsupportedModel, Root.self, """
                has the property `\(field.name)` of type \(field.type): an optional array of models. A to-many \
                relationship is an array, empty when nothing is linked; make it non-optional ([\(target)]).
                """)
        }
        return make(Root.self, target, field: field, kind: .toMany)
    }

    private static func make<Root: Model, Target: Model>(
        _ root: Root.Type, _ target: Target.Type, field: ModelReflection.Field, kind: Kind
    ) -> Relationship {
        let keyPath = field.keyPath
        let related: (Any) -> [any Model] = { value in
            guard let value = value as? Root else { return [] }
            switch kind {
            case .toOne(isOptional: true):
                return (keyPath as? KeyPath<Root, Target?>).flatMap { value[keyPath: $0] }.map { [$0] } ?? []
            case .toOne(isOptional: false):
                return (keyPath as? KeyPath<Root, Target>).map { [value[keyPath: $0]] } ?? []
            case .toMany:
                return (keyPath as? KeyPath<Root, [Target]>).map { value[keyPath: $0] } ?? []
            }
        }
        let makeValue: ([Any]) -> Any? = { values in
            switch kind {
            case .toOne: values.first as? Target
            case .toMany: values.compactMap { $0 as? Target }
            }
        }
        let removingRelated: (Any, (any Model) -> Bool) -> Any? = { value, isRemoved in
            guard var root = value as? Root else { return nil }
            guard related(root).contains(where: isRemoved) else { return root }
            switch kind {
            case .toOne(isOptional: true):
                guard let path = keyPath as? WritableKeyPath<Root, Target?> else { return nil }
                root[keyPath: path] = nil
            case .toOne(isOptional: false):
                return nil
            case .toMany:
                guard let path = keyPath as? WritableKeyPath<Root, [Target]> else { return nil }
                root[keyPath: path].removeAll { isRemoved($0) }
            }
            return root
        }
        let rule = Root.deleteRules.first { $0.key == keyPath }?.value ?? .nullify
        return Relationship(
            name: field.name, keyPath: keyPath, kind: kind, target: Target.self, rule: rule, owner: Root.self,
            linkTable: "\(Root.tableName).\(field.name)", related: related, makeValue: makeValue,
            targetIDStorage: StorageType.of(Target.ID.self).0, removingRelated: removingRelated)
    }

    /// Refuses a graph of types that leads back to a type on the same path (`Movie.cast: [Actor]`
    /// next to `Actor.movies: [Movie]`): a value type cannot hold such a graph, and loading it
    /// would never end.
    package static func checkForCycles(from root: Any.Type, path: [(type: Any.Type, property: String)] = []) throws {
        guard let fields = try? ModelReflection.storedFields(ofType: root) else { return }
        for field in fields {
            guard let target = relatedModel(ofPropertyType: field.type)?.model else { continue }
            let step = (type: root, property: field.name)
            if target == root || path.contains(where: { $0.type == target }) {
                let steps = (path + [step]).map { "\($0.type).\($0.property)" }.joined(separator: " → ")
                let start = path.first?.type ?? root
                throw ModelError(.unsupportedModel, start, """
                    has relationships that lead back to \(target) (\(steps) → \(target)). Values cannot hold a graph \
                    that refers back to itself, and loading it would never end. Keep one direction and query the \
                    other: for example remove `\(field.name)` from \(root) and find them with \
                    db.get(with: Filter(\\\(target).<relationship>, contains: value.id)).
                    """)
            }
            try checkForCycles(from: target, path: path + [step])
        }
    }
}

/// What deleting values does to their relationships, decided once for both engines: which
/// relationships the engine must look into (``checked(in:)``), then, from the related values it
/// found, the refusal or the values to delete after the owners (``decide(for:found:)``). The
/// engine deletes the owners (foreign keys and link tables nullify and unlink) and then each
/// cascade's values, by their own rules.
package enum DeleteRules {
    /// The relationships whose related values decide the delete: `.deny` and `.cascade`, in
    /// declaration order (`.nullify` and `.noAction` are the foreign keys' and the link tables' work).
    package static func checked(in schema: ModelReflection) -> [Relationship] {
        schema.relationships.filter { $0.rule == .deny || $0.rule == .cascade }
    }

    /// The related values to delete after the owners, each relationship's once, in the order
    /// found; or `ModelError.Code.deleteDenied` when a `.deny` relationship still links values.
    package static func decide<ID: Hashable>(for schema: ModelReflection, found: [(Relationship, [ID])]) throws -> [(Relationship, [ID])] {
        // One entry per relationship (an engine may look in chunks of ids), in the order found.
        var merged: [(Relationship, [ID])] = []
        for (relationship, related) in found {
            if let index = merged.firstIndex(where: { $0.0.name == relationship.name }) {
                merged[index].1 += related
            } else {
                merged.append((relationship, related))
            }
        }
        var cascades: [(Relationship, [ID])] = []
        for (relationship, related) in merged where !related.isEmpty {
            switch relationship.rule {
            case .deny:
                throw ModelError(.deleteDenied, schema.modelType, """
                    cannot be deleted: its relationship `\(relationship.name)` has the delete rule .deny and still links \
                    \(Set(related).count) \(relationship.target) value(s). Remove them from `\(relationship.name)` and save, or \
                    delete them first.
                    """)
            case .cascade:
                var seen = Set<ID>()
                cascades.append((relationship, related.filter { seen.insert($0).inserted }))
            case .nullify, .noAction:
                continue
            }
        }
        return cascades
    }
}

extension DeleteRules {
    /// The refusal of a delete that a foreign key stopped: rows still refer to the value, through
    /// a non-optional to-one relationship (whose foreign key neither cascades nor nullifies) or a
    /// foreign key of the app's own. One message on both engines; `detail` is the engine's own.
    package static func stillReferenced(_ model: Any.Type, detail: String) -> ModelError {
        ModelError(.deleteDenied, model, """
            cannot be deleted: other rows still refer to it, through a non-optional relationship (a property of \
            type \(model), not \(model)?) or a foreign key of your own. Delete or change them first, or make the \
            property optional so that it becomes nil. (\(detail))
            """)
    }
}
