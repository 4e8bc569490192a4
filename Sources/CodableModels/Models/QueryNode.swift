import Foundation

/// The SQL type of a query expression: what its Swift type is stored as, the same on both engines
/// (SQLite's storage classes, PostgreSQL's column types).
package enum ValueKind: Sendable, Equatable {
    case integer, real, text, bool, date, uuid, decimal, data, json

    /// The kind of a Swift type (optionals unwrapped, enums by their raw value's type).
    package static func of(_ type: Any.Type) -> ValueKind {
        switch unwrappedOptionalType(type).type {
        case is Bool.Type: return .bool
        case is UUID.Type: return .uuid
        case is Date.Type: return .date
        case is Decimal.Type: return .decimal
        default: break
        }
        switch StorageType.of(type).0 {
        case .integer: return .integer
        case .real: return .real
        case .text: return .text
        case .blob: return .data
        case .untyped: return .json
        }
    }

    /// Whether SQL orders the stored form of `type` (optionals unwrapped) as Swift's `<` orders
    /// its values: integers, floating point, `String`, `Date`, `UUID` and `Decimal`; not `Bool`
    /// or enums, whose raw values need not sort as their cases do.
    package static func sortsAsSwift(_ type: Any.Type) -> Bool {
        let wrapped = unwrappedOptionalType(type).type
        switch wrapped {
        case is String.Type, is Date.Type, is UUID.Type, is Decimal.Type, is Double.Type, is Float.Type: return true
        default: return of(wrapped) == .integer && !(wrapped is any RawRepresentable.Type) && !(wrapped is Bool.Type)
        }
    }
}

/// A translated `#Predicate` (see `Filter+Predicate.swift`): an expression tree with Swift's
/// meaning, which each engine renders in its SQL through ``SQLDialect``. Every Boolean node
/// renders two-valued (never `NULL`), as a Swift `Bool` is, so that `!` and `||` keep Swift's
/// results over optional values.
package indirect enum QueryNode: Sendable {
    /// A stored property of the model a scope reads (0 is the filtered model's table).
    case column(ColumnReference, ValueKind, optional: Bool, scope: Int)
    /// The current element of a stored array walked in `scope`.
    case element(ValueKind, optional: Bool, scope: Int)
    /// A value, bound as an argument.
    case value(StoredValue, ValueKind)
    /// Equal (or, `negated`, not equal) as Swift's `==`: `nil` equals `nil` only.
    case equal(QueryNode, QueryNode, negated: Bool)
    /// `<`, `<=`, `>`, `>=` in the Swift order of the operands' kind.
    case compare(String, QueryNode, QueryNode, ValueKind)
    case and(QueryNode, QueryNode)
    case or(QueryNode, QueryNode)
    case not(QueryNode)
    /// `+`, `-`, `*`, `/` (integers truncate, as Swift's do), `%`.
    case arithmetic(String, QueryNode, QueryNode)
    case negate(QueryNode)
    /// `a ?? b`.
    case coalesce(QueryNode, QueryNode)
    /// `test ? a : b`.
    case conditional(QueryNode, QueryNode, QueryNode)
    /// `optional.flatMap { … }` on a value: `nil` when `optional` is, else `body`.
    case whenPresent(QueryNode, QueryNode)
    /// Text containing or starting with other text, literally.
    case text(TextTest, QueryNode, QueryNode)
    /// One of the given values (Swift's `contains` on a captured array).
    case member(QueryNode, [StoredValue], ValueKind)
    /// A value of a to-one relationship's target: `scope` reads the row `column` (in `outer`) refers to.
    case related(column: String, table: String, outer: Int, scope: Int, QueryNode)
    /// Whether some (or, `all`, every) element of a stored array satisfies `test`.
    case elements(QueryNode, scope: Int, test: QueryNode, all: Bool)
    /// A stored array's length.
    case elementCount(QueryNode)
    /// Whether some (or every) target of a to-many relationship satisfies `test` (`nil`: any target).
    case linked(link: String, table: String, outer: Int, scope: Int, test: QueryNode?, all: Bool)
    /// How many targets a to-many relationship links.
    case linkCount(link: String, outer: Int)

    /// Whether the node can be `NULL` in SQL.
    package var isOptional: Bool {
        switch self {
        case .column(_, _, let optional, _), .element(_, let optional, _): optional
        case .value(let value, _): value.isNull
        case .arithmetic(_, let left, let right): left.isOptional || right.isOptional
        case .negate(let inner): inner.isOptional
        case .coalesce(_, let fallback): fallback.isOptional
        case .conditional(_, let yes, let no): yes.isOptional || no.isOptional
        case .whenPresent, .related: true
        case .compare(_, let left, let right, _): left.isOptional || right.isOptional
        case .text(_, let left, let right): left.isOptional || right.isOptional
        case .member(let inner, _, _): inner.isOptional
        case .equal, .and, .or, .not, .elements, .elementCount, .linked, .linkCount: false
        }
    }

    /// Whether the node is a `Bool`-valued condition rather than a stored `Bool`.
    private var isCondition: Bool {
        switch self {
        case .equal, .compare, .and, .or, .not, .text, .member, .elements, .linked: true
        default: false
        }
    }
}

extension QueryNode {
    /// The node in `dialect`'s SQL; `scopes` names the tables and elements the node reads.
    package func sql<Dialect: SQLDialect>(in dialect: inout Dialect, _ scopes: inout QueryScopes, root: Any.Type) throws -> String {
        switch self {
        case .column(let reference, let kind, _, let scope):
            return try dialect.column(reference, kind: kind, qualifier: scopes.qualifier(scope), root: root)
        case .element(let kind, _, let scope):
            return dialect.arrayElement(alias: scopes.qualifier(scope), kind: kind)
        case .value(let value, let kind):
            return value.isNull ? "NULL" : dialect.bind(value, kind: kind)
        case .equal(let left, let right, let negated):
            let (l, r) = (try left.sql(in: &dialect, &scopes, root: root), try right.sql(in: &dialect, &scopes, root: root))
            if case .value(.null, _) = right { return "(\(l) IS \(negated ? "NOT " : "")NULL)" }
            if case .value(.null, _) = left { return "(\(r) IS \(negated ? "NOT " : "")NULL)" }
            guard left.isOptional || right.isOptional else { return "(\(l) \(negated ? "<>" : "=") \(r))" }
            return "(\(l) \(negated ? dialect.isDistinctFrom : dialect.isNotDistinctFrom) \(r))"
        case .compare(let comparison, let left, let right, let kind):
            let l = dialect.ordered(try left.sql(in: &dialect, &scopes, root: root), kind: kind)
            let r = dialect.ordered(try right.sql(in: &dialect, &scopes, root: root), kind: kind)
            let sql = "(\(l) \(comparison) \(r))"
            return left.isOptional || right.isOptional ? "COALESCE(\(sql), \(dialect.alwaysFalse))" : sql
        case .and(let left, let right):
            return "(\(try left.condition(in: &dialect, &scopes, root: root)) AND \(try right.condition(in: &dialect, &scopes, root: root)))"
        case .or(let left, let right):
            return "(\(try left.condition(in: &dialect, &scopes, root: root)) OR \(try right.condition(in: &dialect, &scopes, root: root)))"
        case .not(let inner):
            return "(NOT \(try inner.condition(in: &dialect, &scopes, root: root)))"
        case .arithmetic(let op, let left, let right):
            return "(\(try left.sql(in: &dialect, &scopes, root: root)) \(op) \(try right.sql(in: &dialect, &scopes, root: root)))"
        case .negate(let inner):
            return "(- \(try inner.sql(in: &dialect, &scopes, root: root)))"
        case .coalesce(let value, let fallback):
            return "COALESCE(\(try value.sql(in: &dialect, &scopes, root: root)), \(try fallback.sql(in: &dialect, &scopes, root: root)))"
        case .conditional(let test, let yes, let no):
            return "(CASE WHEN \(try test.condition(in: &dialect, &scopes, root: root)) THEN \(try yes.sql(in: &dialect, &scopes, root: root)) "
                + "ELSE \(try no.sql(in: &dialect, &scopes, root: root)) END)"
        case .whenPresent(let optional, let body):
            return "(CASE WHEN \(try optional.sql(in: &dialect, &scopes, root: root)) IS NULL THEN NULL ELSE \(try body.sql(in: &dialect, &scopes, root: root)) END)"
        case .text(let kind, let text, let other):
            let sql = dialect.textMatch(kind, try text.sql(in: &dialect, &scopes, root: root), try other.sql(in: &dialect, &scopes, root: root))
            return text.isOptional || other.isOptional ? "COALESCE(\(sql), \(dialect.alwaysFalse))" : sql
        case .member(let inner, let values, let kind):
            let value = try inner.sql(in: &dialect, &scopes, root: root)
            let others = values.filter { !$0.isNull }
            var terms: [String] = []
            if !others.isEmpty { terms.append("\(value) IN (" + others.map { dialect.bind($0, kind: kind) }.joined(separator: ", ") + ")") }
            if values.contains(.null) { terms.append("\(value) IS NULL") }
            guard !terms.isEmpty else { return dialect.alwaysFalse }
            let sql = "(" + terms.joined(separator: " OR ") + ")"
            return inner.isOptional && !values.contains(.null) ? "COALESCE(\(sql), \(dialect.alwaysFalse))" : sql
        case .related(let column, let table, let outer, let scope, let body):
            let alias = scopes.open(scope, as: "r")
            let outerColumn = scopes.qualifier(outer) + "." + SQLName.quoted(column)
            let inner = try body.sql(in: &dialect, &scopes, root: root)
            return "(SELECT \(inner) FROM \(SQLName.quoted(table)) AS \(alias) WHERE \(alias).\(ModelReflection.quotedID) = \(outerColumn))"
        case .elements(let array, let scope, let test, let all):
            let arraySQL = try array.sql(in: &dialect, &scopes, root: root)
            let alias = scopes.open(scope, as: "e")
            let condition = try test.condition(in: &dialect, &scopes, root: root)
            let from = dialect.arrayElements(arraySQL, alias: alias)
            let exists = all ? "NOT EXISTS (SELECT 1 FROM \(from) WHERE NOT \(condition))" : "EXISTS (SELECT 1 FROM \(from) WHERE \(condition))"
            return array.isOptional ? "COALESCE(\(arraySQL) IS NOT NULL AND \(exists), \(dialect.alwaysFalse))" : exists
        case .elementCount(let array):
            return dialect.arrayLength(try array.sql(in: &dialect, &scopes, root: root))
        case .linked(let link, let table, let outer, let scope, let test, let all):
            let quotedLink = SQLName.quoted(link)
            let ownerID = scopes.qualifier(outer) + "." + ModelReflection.quotedID
            guard let test else {
                return "EXISTS (SELECT 1 FROM \(quotedLink) WHERE \(quotedLink).\"owner\" = \(ownerID))"
            }
            let alias = scopes.open(scope, as: "t")
            let condition = try test.condition(in: &dialect, &scopes, root: root)
            let from = "\(quotedLink) JOIN \(SQLName.quoted(table)) AS \(alias) ON \(alias).\(ModelReflection.quotedID) = \(quotedLink).\"target\""
            let owned = "\(quotedLink).\"owner\" = \(ownerID)"
            return all ? "NOT EXISTS (SELECT 1 FROM \(from) WHERE \(owned) AND NOT \(condition))"
                : "EXISTS (SELECT 1 FROM \(from) WHERE \(owned) AND \(condition))"
        case .linkCount(let link, let outer):
            let quotedLink = SQLName.quoted(link)
            return "(SELECT count(*) FROM \(quotedLink) WHERE \(quotedLink).\"owner\" = \(scopes.qualifier(outer)).\(ModelReflection.quotedID))"
        }
    }

    /// The node as a condition: a stored `Bool` (or a `Bool?` after `??`) compared with true.
    package func condition<Dialect: SQLDialect>(in dialect: inout Dialect, _ scopes: inout QueryScopes, root: Any.Type) throws -> String {
        let sql = try self.sql(in: &dialect, &scopes, root: root)
        guard !isCondition else { return sql }
        return isOptional ? "(\(sql) IS TRUE)" : "(\(sql) = TRUE)"
    }
}

/// The names a translated predicate's scopes have in SQL: scope 0 is the filtered table itself,
/// the others are the aliases of the subqueries that read related rows and array elements.
package struct QueryScopes {
    private var names: [Int: String]

    package init(table: String) { names = [0: SQLName.quoted(table)] }

    package func qualifier(_ scope: Int) -> String { names[scope] ?? "\"codable_s\(scope)\"" }

    mutating func open(_ scope: Int, as prefix: String) -> String {
        let name = "\"codable_\(prefix)\(scope)\""
        names[scope] = name
        return name
    }
}
