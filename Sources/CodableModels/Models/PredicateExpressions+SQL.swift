import Foundation

// Each kind of Foundation predicate node, translated with Swift's meaning (see
// `PredicateTranslation`). A kind without an extension here is refused by name.

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Variable: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term {
        switch try t.binding(of: key) {
        case .table(let scope, let model): .table(scope: scope, model: model)
        case .node(let node): .node(node)
        }
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.KeyPath: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term {
        // A key path of a captured value is a constant: Swift computes it, once.
        if let constant = root as? PredicateExpressions.Value<Root.Output> {
            return try PredicateExpressions.Value(constant.value[keyPath: keyPath]).term(&t)
        }
        let base = try t.term(root)
        switch kind {
        case .collectionCount?:
            if Root.Output.self is String.Type || Root.Output.self is Substring.Type {
                throw t.refusal("a String's count counts characters (grapheme clusters), which SQL cannot count; compare the text itself")
            }
            if case .toMany(let relationship, let scope) = base { return .node(.linkCount(link: relationship.linkTable, outer: scope)) }
            return .node(.elementCount(try t.node(of: base)))
        case .collectionIsEmpty?:
            switch base {
            case .toMany(let relationship, let scope):
                return .node(.not(.linked(link: relationship.linkTable, table: relationship.target.tableName, outer: scope, scope: t.newScope(), test: nil, all: false)))
            case .path where Root.Output.self is String.Type:
                return .node(.equal(try t.node(of: base), .value(.text(""), .text), negated: false))
            default: return .node(.equal(.elementCount(try t.node(of: base)), .value(.integer(0), .integer), negated: false))
            }
        case .collectionFirst?, .bidirectionalCollectionLast?:
            throw t.refusal("first and last of a collection have no SQL translation")
        case nil: break
        }
        switch base {
        case .table(let scope, let model):
            if let relationship = try ModelReflection.of(model).relationships.first(where: { $0.keyPath == keyPath }) {
                return relationship.isToMany ? .toMany(relationship, scope: scope) : .toOne(relationship, scope: scope)
            }
            return .path(scope: scope, model: model, keyPath: keyPath)
        case .path(let scope, let model, let base):
            if Self.isRawValue(keyPath) {
                // An enum is stored as its raw value: `.rawValue` reads the same column, as the raw type.
                guard case .column(let reference, _, let optional, _) = try t.column(base, of: model, scope: scope) else {
                    throw t.refusal("rawValue of \(base)")
                }
                return .node(.column(reference, ValueKind.of(Output.self), optional: optional, scope: scope))
            }
            let full = base.appending(path: keyPath)
            if Root.Output.self is any RawRepresentable.Type, full.map({ (try? model.predicateColumn($0)) == nil }) ?? true {
                // A computed property of a stored enum, most likely `rawValue`.
                throw t.refusal("\(keyPath) of the enum \(Root.Output.self) is not stored: to read its rawValue in a #Predicate, declare \(Root.Output.self): CaseIterable; or compare the enum value itself")
            }
            guard let full else { throw t.refusal("the key path \(keyPath) after \(base)") }
            return .path(scope: scope, model: model, keyPath: full)
        case .toOne(let relationship, let scope):
            // `value.relationship!.property`: the related row's property.
            let inner = t.newScope()
            let node = try t.column(keyPath, of: relationship.target, scope: inner)
            return .node(.related(column: relationship.name, table: relationship.target.tableName, outer: scope, scope: inner, node))
        case .node(.column(let reference, _, let optional, let scope)) where Self.isRawValue(keyPath):
            // `value.optionalEnum?.rawValue`: the unwrapped enum's column, as the raw type.
            return .node(.column(reference, ValueKind.of(Output.self), optional: optional, scope: scope))
        default:
            throw t.refusal("the key path \(keyPath) on a computed value; use stored properties")
        }
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.KeyPath {
    /// Whether `keyPath` is `\E.rawValue` of an enum `E`: checked on every case of a
    /// `CaseIterable` enum (a key path to a computed property cannot be compared with another).
    static func isRawValue(_ keyPath: Swift.KeyPath<Root.Output, Output>) -> Bool {
        guard let cases = Root.Output.self as? any (CaseIterable & RawRepresentable).Type else { return false }
        return rawValues(of: cases, keyPath)
    }

    private static func rawValues<E: CaseIterable & RawRepresentable>(of type: E.Type, _ keyPath: AnyKeyPath) -> Bool {
        guard E.RawValue.self == Output.self, let typed = keyPath as? Swift.KeyPath<E, E.RawValue>, !E.allCases.isEmpty else { return false }
        return E.allCases.allSatisfy { value in
            let read = value[keyPath: typed], raw = value.rawValue
            return (read as? AnyHashable) == (raw as? AnyHashable) && (read as? AnyHashable) != nil
        }
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Value: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term {
        if !(value is String), !(value is Data), let collection = value as? any Collection {
            let elementType = Self.elementType(of: collection)
            let elements = try collection.map { try t.value($0, type: elementType) }
            let stored = elements.compactMap { node -> StoredValue? in if case .value(let stored, _) = node { stored } else { nil } }
            return .list(stored, ValueKind.of(elementType))
        }
        if let bounds = Self.bounds(of: value) {
            return .range(lower: try t.value(bounds.lower, type: bounds.type), upper: try t.value(bounds.upper, type: bounds.type), closed: bounds.closed)
        }
        return .node(try t.value(value, type: Output.self))
    }

    private static func elementType<C: Collection>(of collection: C) -> Any.Type { C.Element.self }

    /// A captured `ClosedRange` or `Range`: its bounds.
    private static func bounds(of value: Any) -> (lower: Any, upper: Any, type: Any.Type, closed: Bool)? {
        let name = String(describing: Swift.type(of: value))
        guard name.hasPrefix("ClosedRange<") || name.hasPrefix("Range<") else { return nil }
        let children = Mirror(reflecting: value).children
        guard let lower = children.first(where: { $0.label == "lowerBound" })?.value,
              let upper = children.first(where: { $0.label == "upperBound" })?.value else { return nil }
        return (lower, upper, Swift.type(of: lower), name.hasPrefix("ClosedRange<"))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.NilLiteral: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term { .node(.value(.null, ValueKind.of(Wrapped.self))) }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Equal: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term {
        .node(.equal(try t.node(lhs), try t.node(rhs), negated: false))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.NotEqual: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term {
        .node(.equal(try t.node(lhs), try t.node(rhs), negated: true))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Comparison: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term {
        let kind = try t.checkOrdered(LHS.Output.self, "a comparison")
        let comparison = switch op {
        case .lessThan: "<"
        case .lessThanOrEqual: "<="
        case .greaterThan: ">"
        case .greaterThanOrEqual: ">="
        }
        return .node(.compare(comparison, try t.node(lhs), try t.node(rhs), kind))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Conjunction: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term { .node(.and(try t.node(lhs), try t.node(rhs))) }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Disjunction: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term { .node(.or(try t.node(lhs), try t.node(rhs))) }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Negation: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term { .node(.not(try t.node(wrapped))) }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Arithmetic: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term {
        let kind = ValueKind.of(LHS.Output.self)
        guard kind == .integer || kind == .real, !(LHS.Output.self is any RawRepresentable.Type) else {
            throw t.refusal("arithmetic on \(LHS.Output.self)")
        }
        let sign = switch op {
        case .add: "+"
        case .subtract: "-"
        case .multiply: "*"
        }
        return .node(.arithmetic(sign, try t.node(lhs), try t.node(rhs)))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.IntDivision: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term {
        // SQL's integer division truncates toward zero, as Swift's does.
        .node(.arithmetic("/", try t.node(lhs), try t.node(rhs)))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.IntRemainder: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term {
        // The remainder takes the dividend's sign in SQL, as in Swift.
        .node(.arithmetic("%", try t.node(lhs), try t.node(rhs)))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.FloatDivision: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term {
        .node(.arithmetic("/", try t.node(lhs), try t.node(rhs)))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.UnaryMinus: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term { .node(.negate(try t.node(wrapped))) }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.NilCoalesce: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term { .node(.coalesce(try t.node(lhs), try t.node(rhs))) }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.ForcedUnwrap: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term {
        // Where Swift would stop on nil, the row does not match.
        try t.term(inner)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.OptionalFlatMap: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term {
        let base = try t.term(wrapped)
        if case .toOne(let relationship, let outer) = base {
            // `value.relationship?.property`: the related row, read in a subquery (nil without one).
            let scope = t.newScope()
            let body = try t.bind(variable.key, to: .table(scope: scope, model: relationship.target)) { try $0.node(transform) }
            return .node(.related(column: relationship.name, table: relationship.target.tableName, outer: outer, scope: scope, body))
        }
        let optional = try t.node(of: base)
        let body = try t.bind(variable.key, to: .node(optional)) { try $0.node(transform) }
        return .node(.whenPresent(optional, body))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Conditional: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term {
        .node(.conditional(try t.node(test), try t.node(trueBranch), try t.node(falseBranch)))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.SequenceContains: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term {
        let sequence = try t.term(self.sequence)
        switch sequence {
        case .list(let values, let kind):
            return .node(.member(try t.node(element), values, kind))
        case .toMany(let relationship, let outer):
            // A related value is found by its id.
            guard let value = (self.element as? PredicateExpressions.Value<RHS.Output>)?.value as? any Model else {
                throw t.refusal("contains on the to-many relationship \(relationship.name) takes a captured value; use contains(where:) to test properties")
            }
            let scope = t.newScope()
            let id = try t.value(value.id, type: Swift.type(of: value.id))
            let idColumn = QueryNode.column(ColumnReference(column: ModelReflection.idName, jsonPath: []), ValueKind(storage: relationship.targetIDStorage), optional: false, scope: scope)
            return .node(.linked(link: relationship.linkTable, table: relationship.target.tableName, outer: outer, scope: scope,
                                 test: .equal(idColumn, id, negated: false), all: false))
        default:
            let array = try t.node(of: sequence)
            let element = try t.node(self.element)
            let scope = t.newScope()
            let kind = ValueKind.of(RHS.Output.self)
            let test = QueryNode.equal(.element(kind, optional: unwrappedOptionalType(RHS.Output.self).isOptional, scope: scope), element, negated: false)
            return .node(.elements(array, scope: scope, test: test, all: false))
        }
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.SequenceContainsWhere: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term {
        .node(try t.elements(of: sequence, LHS.Output.Element.self, variable: variable.key, test: test, all: false))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.SequenceAllSatisfy: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term {
        .node(try t.elements(of: sequence, LHS.Output.Element.self, variable: variable.key, test: test, all: true))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateTranslation {
    /// `contains(where:)` (or, `all`, `allSatisfy`) over a to-many relationship, a stored array
    /// or a captured collection.
    mutating func elements(of sequence: Any, _ elementType: Any.Type, variable: PredicateExpressions.VariableID, test: Any, all: Bool) throws -> QueryNode {
        switch try term(sequence) {
        case .toMany(let relationship, let outer):
            let scope = newScope()
            let body = try bind(variable, to: .table(scope: scope, model: relationship.target)) { try $0.node(test) }
            return .linked(link: relationship.linkTable, table: relationship.target.tableName, outer: outer, scope: scope, test: body, all: all)
        case .list(let values, let kind):
            // A captured collection: the test for each element, joined.
            let tests = try values.map { value in try bind(variable, to: .node(.value(value, kind))) { try $0.node(test) } }
            guard let first = tests.first else { return .value(.integer(all ? 1 : 0), .bool) }
            return tests.dropFirst().reduce(first) { all ? .and($0, $1) : .or($0, $1) }
        case let other:
            let array = try node(of: other)
            let scope = newScope()
            let element = QueryNode.element(ValueKind.of(elementType), optional: unwrappedOptionalType(elementType).isOptional, scope: scope)
            let body = try bind(variable, to: .node(element)) { try $0.node(test) }
            return .elements(array, scope: scope, test: body, all: all)
        }
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.SequenceStartsWith: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term {
        guard Base.Output.self is String.Type || Base.Output.self is Substring.Type else { throw t.refusal("starts(with:) on \(Base.Output.self); use it on text") }
        return .node(.text(.prefix, try t.node(base), try t.node(prefix)))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.CollectionContainsCollection: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term {
        guard Base.Output.self is String.Type || Base.Output.self is Substring.Type else { throw t.refusal("contains(_:) of a collection in \(Base.Output.self); use it on text") }
        return .node(.text(.contains, try t.node(base), try t.node(other)))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.RangeExpressionContains: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term {
        let kind = try t.checkOrdered(Element.Output.self, "a range")
        guard case .range(let lower, let upper, let closed) = try t.term(range) else { throw t.refusal("contains on a range that is not a literal or captured range") }
        let element = try t.node(self.element)
        return .node(.and(.compare(">=", element, lower, kind), .compare(closed ? "<=" : "<", element, upper, kind)))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.ClosedRange: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term {
        .range(lower: try t.node(lower), upper: try t.node(upper), closed: true)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Range: TranslatableExpression {
    func term(_ t: inout PredicateTranslation) throws -> PredicateTranslation.Term {
        .range(lower: try t.node(lower), upper: try t.node(upper), closed: false)
    }
}
