/// What differs between the engines' SQL for a ``Filter``: how a key path's value is read, how
/// arguments are bound, literals, text matching and sort order. ``Filter/clauses(in:includingOrderAndLimit:)``
/// walks the condition tree once for every engine (IN and NULL rendering, AND/OR, ORDER BY,
/// LIMIT), so the meaning of a filter is written in one place; SQLite's half is ``SQLiteDialect``,
/// PostgreSQL's is in CodablePostgres.
package protocol SQLDialect {
    /// A key path's value in SQL: its column, or a member of the JSON a column holds.
    func expression(for reference: ColumnReference, root: Any.Type) throws -> SQLExpression
    /// Binds `value`, to be compared with `expression`, and returns its placeholder.
    mutating func bind(_ value: StoredValue, comparedWith expression: SQLExpression) -> String
    /// Binds a page's count or offset and returns its placeholder.
    mutating func bind(integer: Int64) -> String
    /// A condition that never holds, and one that always does.
    var alwaysFalse: String { get }
    var alwaysTrue: String { get }
    /// The operator for "not equal, NULL being a value like any other".
    var isDistinctFrom: String { get }
    /// `expression` holds text that starts with, ends with or contains `text`, case-sensitively.
    mutating func match(_ expression: SQLExpression, _ kind: TextMatch, _ text: String) -> String
    /// SQLite's `LIKE`: `%` and `_` wildcards, no escape character, ASCII letters in either case.
    mutating func like(_ expression: SQLExpression, _ pattern: String) -> String
    /// A sort term: the expression and its direction, with `NULL`s first in ascending order.
    func order(_ expression: SQLExpression, ascending: Bool) -> String
    /// The to-one `column` holds the id of a row of `table` where `inner` holds.
    mutating func related(column: String, table: String, inner: String, root: Any.Type) throws -> String
    /// Renders `body` (the predicate of a to-one relationship) against the relationship's `table`:
    /// an engine that resolves columns per table looks them up there. SQLite needs nothing.
    mutating func inRelated(table: String, root: Any.Type, _ body: (inout Self) throws -> String) throws -> String
    /// The owner's to-many link table holds `target`.
    mutating func linked(link: String, owner: String, target: StoredValue, root: Any.Type) throws -> String
    /// The longest name (of an index) the engine keeps whole, in bytes; `nil` for no limit.
    var maximumNameLength: Int? { get }

    // A translated `#Predicate` (``QueryNode``) and sort descriptors also need:

    /// A stored property's value in `qualifier`'s row, in the SQL type of `kind` (a member of a
    /// nested value read from its JSON and converted).
    func column(_ reference: ColumnReference, kind: ValueKind, qualifier: String, root: Any.Type) throws -> String
    /// Binds `value`, of `kind`, and returns its placeholder.
    mutating func bind(_ value: StoredValue, kind: ValueKind) -> String
    /// The operator for "equal, NULL being a value like any other".
    var isNotDistinctFrom: String { get }
    /// `sql`, of `kind`, as Swift orders it: text by code points, `Decimal`s by number.
    func ordered(_ sql: String, kind: ValueKind) -> String
    /// `text` contains `other` or starts with it, literally.
    func textMatch(_ kind: TextTest, _ text: String, _ other: String) -> String
    /// The `FROM` item that walks the elements of the stored array `array`, named `alias`.
    func arrayElements(_ array: String, alias: String) -> String
    /// The value of the element `alias` walks, in the SQL type of `kind`.
    func arrayElement(alias: String, kind: ValueKind) -> String
    /// The number of elements of the stored array `array`.
    func arrayLength(_ array: String) -> String
    /// A last sort term that orders rows the sorts find equal as they were stored; `nil` where
    /// the engine's sort already keeps that order.
    func storedOrder(table: String) -> String?
}

extension SQLDialect {
    /// Literal containment or prefix through the position of the first occurrence: `other` is
    /// written once, and `%` or `_` in it mean themselves.
    package func textMatch(_ kind: TextTest, _ text: String, _ other: String, position: String) -> String {
        switch kind {
        case .contains: "(\(position)(\(text), \(other)) > 0)"
        case .prefix: "(\(position)(\(text), \(other)) = 1)"
        }
    }
}

/// The text tests a `#Predicate` can make: `contains` and `starts(with:)`.
package enum TextTest: Sendable {
    case contains, prefix
}

extension SQLDialect {
    package mutating func inRelated(table: String, root: Any.Type, _ body: (inout Self) throws -> String) throws -> String {
        try body(&self)
    }
}

/// A key path's value in a dialect's SQL.
package struct SQLExpression: Sendable {
    /// The value, for equality and membership.
    package let value: String
    /// The value as text, for text matching.
    package let text: String
    /// The value for ordering comparisons and sorting (text by bytes, `Decimal`s by number).
    package let ordered: String
    /// What it reads.
    package let reference: ColumnReference

    package init(value: String, text: String, ordered: String, reference: ColumnReference) {
        self.value = value
        self.text = text
        self.ordered = ordered
        self.reference = reference
    }
}

/// The text rules that match literal text (``Rule/hasPrefix(_:)`` and its kin).
package enum TextMatch: Sendable {
    case prefix, suffix, contains

    /// A pattern matching `text` literally at the start, the end or anywhere: `anyRun` is the
    /// pattern language's wildcard for any run of characters, `escaped` makes `text` literal in it.
    package func pattern(for text: String, anyRun: String, escaped: (String) -> String) -> String {
        switch self {
        case .prefix: escaped(text) + anyRun
        case .suffix: anyRun + escaped(text)
        case .contains: anyRun + escaped(text) + anyRun
        }
    }
}

extension Filter {
    /// ` WHERE …`, ` ORDER BY …` and ` LIMIT … OFFSET …` in `dialect`, which collects the arguments.
    package func clauses<Dialect: SQLDialect>(in dialect: inout Dialect, includingOrderAndLimit: Bool = true) throws -> String {
        if let error { throw error }
        for column in (tree?.columns ?? []) + sorts.map(\.column) {
            if let problem = column.nestedKeyProblem(root: Root.self) { throw problem }
        }
        var sql = ""
        if let tree { sql += " WHERE " + (try tree.sql(in: &dialect, root: Root.self)) }
        guard includingOrderAndLimit else { return sql }
        if !sorts.isEmpty {
            let orders = try sorts.map { sort in
                dialect.order(try dialect.expression(for: sort.column, root: Root.self), ascending: sort.ascending)
            }
            sql += " ORDER BY " + orders.joined(separator: ", ")
            if keepsStoredOrder, let stored = dialect.storedOrder(table: SQLName.quoted(Root.tableName)) { sql += ", " + stored }
        }
        if let paging {
            let count = dialect.bind(integer: Int64(paging.count))
            let offset = dialect.bind(integer: Int64(paging.offset))
            sql += " LIMIT \(count) OFFSET \(offset)"
        }
        return sql
    }
}

extension Filter {
    /// Whether the filter has a sort order or a page, which a count and a delete keep to.
    package var hasOrderOrPage: Bool { !sorts.isEmpty || paging != nil }

    /// The statement that counts the values this filter matches, within its page when it has
    /// one (decided once for both engines; the order does not change a count, so it is left out).
    ///
    /// ```swift
    /// Filter<Person>().limit(10, page: 3).countSQL(table: "\"people\"", in: &dialect)
    /// // SELECT count(*) FROM (SELECT 1 FROM "people" LIMIT ? OFFSET ?) AS page
    /// ```
    package func countSQL<Dialect: SQLDialect>(table: String, in dialect: inout Dialect) throws -> String {
        let condition = try clauses(in: &dialect, includingOrderAndLimit: false)
        guard let paging else { return "SELECT count(*) FROM \(table)\(condition)" }
        let count = dialect.bind(integer: Int64(paging.count)), offset = dialect.bind(integer: Int64(paging.offset))
        return "SELECT count(*) FROM (SELECT 1 FROM \(table)\(condition) LIMIT \(count) OFFSET \(offset)) AS page"
    }

    /// The condition (` WHERE …`) of a delete of the values this filter matches: its condition
    /// on the table, or, when it has an order or a page, the ids of the rows a read of the filter
    /// returns (the first ten by date are the ten a `get` returns). Decided once for both engines.
    package func deleteCondition<Dialect: SQLDialect>(table: String, id: String, in dialect: inout Dialect) throws -> String {
        guard hasOrderOrPage else { return try clauses(in: &dialect, includingOrderAndLimit: false) }
        return " WHERE \(id) IN (SELECT \(id) FROM \(table)\(try clauses(in: &dialect)))"
    }
}

extension FilterTree {
    package func sql<Dialect: SQLDialect>(in dialect: inout Dialect, root: Any.Type) throws -> String {
        switch self {
        case .condition(let reference, let condition):
            return condition.sql(try dialect.expression(for: reference, root: root), in: &dialect)
        case .and(let left, let right):
            return "(\(try left.sql(in: &dialect, root: root)) AND \(try right.sql(in: &dialect, root: root)))"
        case .or(let left, let right):
            return "(\(try left.sql(in: &dialect, root: root)) OR \(try right.sql(in: &dialect, root: root)))"
        case .related(let column, let table, let inner):
            let innerSQL = try dialect.inRelated(table: table, root: root) { try inner.sql(in: &$0, root: root) }
            return try dialect.related(column: column, table: table, inner: innerSQL, root: root)
        case .linked(let link, let owner, let target):
            return try dialect.linked(link: link, owner: owner, target: target, root: root)
        case .expression(let node, let table):
            var scopes = QueryScopes(table: table)
            return try node.condition(in: &dialect, &scopes, root: root)
        }
    }
}

extension Condition {
    package func sql<Dialect: SQLDialect>(_ expression: SQLExpression, in dialect: inout Dialect) -> String {
        let value = expression.value
        switch self {
        case .equal(.null):
            return "\(value) IS NULL"
        case .equal(let argument):
            return "\(value) = \(dialect.bind(argument, comparedWith: expression))"
        case .notEqual(.null):
            return "\(value) IS NOT NULL"
        case .notEqual(let argument):
            return "\(value) \(dialect.isDistinctFrom) \(dialect.bind(argument, comparedWith: expression))"
        case .compare(let comparison, let argument):
            return "\(expression.ordered) \(comparison) \(dialect.bind(argument, comparedWith: expression))"
        case .between(let lower, let upper):
            let low = dialect.bind(lower, comparedWith: expression)
            let high = dialect.bind(upper, comparedWith: expression)
            return "\(expression.ordered) BETWEEN \(low) AND \(high)"
        case .member(let values, let negated):
            let hasNull = values.contains(.null)
            let others = values.filter { !$0.isNull }
            let list = others.isEmpty ? nil
                : "\(value) \(negated ? "NOT IN" : "IN") (" + others.map { dialect.bind($0, comparedWith: expression) }.joined(separator: ", ") + ")"
            switch (negated, hasNull, list) {
            case (false, false, nil): return dialect.alwaysFalse
            case (false, false, let list?): return list
            case (false, true, nil): return "\(value) IS NULL"
            case (false, true, let list?): return "(\(list) OR \(value) IS NULL)"
            case (true, false, nil): return dialect.alwaysTrue
            case (true, false, let list?): return "(\(value) IS NULL OR \(list))"
            case (true, true, nil): return "\(value) IS NOT NULL"
            case (true, true, let list?): return "(\(value) IS NOT NULL AND \(list))"
            }
        case .text(let kind, let text):
            return dialect.match(expression, kind, text)
        case .like(let pattern):
            return dialect.like(expression, pattern)
        }
    }
}

extension ModelIndex {
    /// The index's `CREATE INDEX` statement in `dialect`: named after the table and the key paths
    /// (`Person(age)`, `Person(name,email) unique`; property names cannot hold `(` or `,`, so two
    /// different indexes never get the same name), on the expressions filters use, so that the
    /// engine uses the index for them.
    package func createSQL<Dialect: SQLDialect>(table: String, dialect: Dialect) throws -> String {
        let references = try columns.map { try $0.get() }
        if let problem = references.lazy.compactMap({ $0.nestedKeyProblem(root: Root.self) }).first { throw problem }
        let name = "\(table)(\(references.map(\.name).joined(separator: ",")))" + (isUnique ? " unique" : "")
        let expressions = try references.map { reference in
            let sql = try dialect.expression(for: reference, root: Root.self).value
            return reference.jsonPath.isEmpty ? sql : "(" + sql + ")"   // an expression index needs parentheses
        }
        return "CREATE \(isUnique ? "UNIQUE " : "")INDEX IF NOT EXISTS \(SQLName.quoted(SQLName.fitted(name, toBytes: dialect.maximumNameLength))) ON "
            + "\(SQLName.quoted(table)) (\(expressions.joined(separator: ", ")))"
    }
}
