import Foundation

/// Turns a Foundation `#Predicate` into a ``QueryNode`` with Swift's meaning, or throws
/// `ModelError.Code.unsupportedPredicate` naming what SQL cannot say exactly. Each kind of
/// `PredicateExpressions` node translates itself (``TranslatableExpression``); a node of another
/// kind is refused, never evaluated in Swift over the table.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
struct PredicateTranslation {
    /// What a predicate's variable stands for: a row of a model's table, or a value.
    enum Binding {
        case table(scope: Int, model: any Model.Type)
        case node(QueryNode)
    }

    /// What a translated node is before it is used: a value, or something only some nodes accept.
    enum Term {
        case node(QueryNode)
        /// A row of `model` (a variable): its key paths are its properties and relationships.
        case table(scope: Int, model: any Model.Type)
        /// A stored property (or a member of a nested value) of the row in `scope`.
        case path(scope: Int, model: any Model.Type, keyPath: AnyKeyPath)
        case toOne(Relationship, scope: Int)
        case toMany(Relationship, scope: Int)
        /// A captured collection's elements.
        case list([StoredValue], ValueKind)
        case range(lower: QueryNode, upper: QueryNode, closed: Bool)
    }

    let root: any Model.Type
    private var bindings: [PredicateExpressions.VariableID: Binding] = [:]
    private var scopes = 0

    init(root: any Model.Type, variable: PredicateExpressions.VariableID) {
        self.root = root
        bindings[variable] = .table(scope: 0, model: root)
    }

    /// A `ModelError` naming what cannot be translated.
    func refusal(_ what: String) -> ModelError {
        ModelError(.unsupportedPredicate, root, "cannot run this #Predicate in SQL with Swift's meaning: \(what)")
    }

    mutating func newScope() -> Int {
        scopes += 1
        return scopes
    }

    func binding(of variable: PredicateExpressions.VariableID) throws -> Binding {
        guard let binding = bindings[variable] else { throw refusal("a variable the predicate does not declare") }
        return binding
    }

    mutating func bind(_ variable: PredicateExpressions.VariableID, to binding: Binding, _ body: (inout Self) throws -> QueryNode) rethrows -> QueryNode {
        bindings[variable] = binding
        defer { bindings[variable] = nil }
        return try body(&self)
    }

    /// The term of a `PredicateExpressions` node.
    mutating func term(_ expression: Any) throws -> Term {
        guard let translatable = expression as? any TranslatableExpression else {
            let name = String(describing: type(of: expression)).prefix { $0 != "<" }
            throw refusal("\(name) has no SQL translation")
        }
        return try translatable.term(&self)
    }

    /// The node of a `PredicateExpressions` node that is a value.
    mutating func node(_ expression: Any) throws -> QueryNode {
        try node(of: term(expression))
    }

    func node(of term: Term) throws -> QueryNode {
        switch term {
        case .node(let node): return node
        case .path(let scope, let model, let keyPath): return try column(keyPath, of: model, scope: scope)
        case .toOne(let relationship, let scope):
            // Compared with nil: the column that holds the target's id.
            let kind = ValueKind(storage: relationship.targetIDStorage)
            return .column(ColumnReference(column: relationship.name, jsonPath: []), kind, optional: true, scope: scope)
        case .table: throw refusal("a whole value is compared; compare its properties")
        case .toMany(let relationship, _):
            throw refusal("the to-many relationship \(relationship.name) is used as a value; use contains, allSatisfy, count or isEmpty")
        case .list: throw refusal("a captured collection is used as a value; use contains")
        case .range: throw refusal("a range is used as a value; use contains")
        }
    }

    /// The column of `keyPath` of `model`: a stored property, or a member of a nested value.
    func column(_ keyPath: AnyKeyPath, of model: any Model.Type, scope: Int) throws -> QueryNode {
        let reference = try model.predicateColumn(keyPath)
        if let problem = reference.nestedKeyProblem(root: model) { throw problem }
        let type = Swift.type(of: keyPath).valueType
        return .column(reference, ValueKind.of(type), optional: unwrappedOptionalType(type).isOptional, scope: scope)
    }

    /// A value as a bound argument, stored as a column of its type stores it.
    func value(_ value: Any, type: Any.Type) throws -> QueryNode {
        if isNilOptional(value) { return .value(.null, ValueKind.of(type)) }
        guard let encodable = value as? any Encodable else { throw refusal("a value of type \(type) that is not Encodable") }
        do {
            return .value(try ValueEncoder.value(for: encodable, at: .root, options: EncodingOptions()), ValueKind.of(type))
        } catch {
            throw ModelError(.invalidFilter, root, "a value in the #Predicate cannot be stored: \(error)")
        }
    }

    /// Refuses ordering where SQL's order of the stored form is not Swift's order of the type.
    func checkOrdered(_ type: Any.Type, _ what: String) throws -> ValueKind {
        let wrapped = unwrappedOptionalType(type).type
        guard ValueKind.sortsAsSwift(wrapped) else {
            throw refusal("\(what) orders values of \(wrapped), whose stored form does not sort as Swift sorts them; compare integers, floating point, String, Date, UUID or Decimal")
        }
        return ValueKind.of(wrapped)
    }
}

extension ValueKind {
    init(storage: StorageType) {
        switch storage {
        case .integer: self = .integer
        case .real: self = .real
        case .text: self = .text
        case .blob: self = .data
        case .untyped: self = .json
        }
    }
}

extension Model {
    /// The column of a key path of this model.
    static func predicateColumn(_ keyPath: AnyKeyPath) throws -> ColumnReference {
        guard let typed = keyPath as? PartialKeyPath<Self> else {
            throw ModelError(.invalidKeyPath, Self.self, "\(keyPath) is not a key path of \(Self.self)")
        }
        return try ColumnReference.resolve(typed).get()
    }
}

/// A `PredicateExpressions` node that knows its SQL translation.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
protocol TranslatableExpression {
    func term(_ translation: inout PredicateTranslation) throws -> PredicateTranslation.Term
}
