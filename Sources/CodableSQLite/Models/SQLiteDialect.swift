/// SQLite's half of ``SQLDialect``: `?` placeholders collected in ``arguments``, `json_extract`
/// for nested values, GLOB for case-sensitive text matching.
struct SQLiteDialect: SQLDialect {
    /// The arguments, in placeholder order.
    private(set) var arguments: [SQLite.Value] = []

    func expression(for reference: ColumnReference, root: Any.Type) -> SQLExpression {
        var sql = SQLName.quoted(reference.column)
        if !reference.jsonPath.isEmpty {
            sql = "json_extract(\(sql), \(SQLName.literal(Self.jsonPath(reference.jsonPath))))"
        }
        // A Decimal is exact text, ordered by its numeric value (exactly within a Double's 15 digits).
        let ordered = reference.isDecimal ? "CAST(\(sql) AS NUMERIC)" : sql
        return SQLExpression(value: sql, text: sql, ordered: ordered, reference: reference)
    }

    mutating func bind(_ value: SQLite.Value, comparedWith expression: SQLExpression) -> String {
        arguments.append(value)
        return "?"
    }

    mutating func bind(integer: Int64) -> String {
        arguments.append(.integer(integer))
        return "?"
    }

    var alwaysFalse: String { "0" }
    var alwaysTrue: String { "1" }
    var isDistinctFrom: String { "IS NOT" }

    mutating func match(_ expression: SQLExpression, _ kind: TextMatch, _ text: String) -> String {
        arguments.append(.text(kind.pattern(for: text, anyRun: "*", escaped: Self.globEscaped)))
        return "\(expression.text) GLOB ?"
    }

    mutating func like(_ expression: SQLExpression, _ pattern: String) -> String {
        arguments.append(.text(pattern))
        return "\(expression.text) LIKE ?"
    }

    func order(_ expression: SQLExpression, ascending: Bool) -> String { expression.ordered + (ascending ? " ASC" : " DESC") }

    var maximumNameLength: Int? { nil }

    mutating func related(column: String, table: String, inner: String, root: Any.Type) -> String {
        "\(SQLName.quoted(column)) IN (SELECT \(ModelReflection.quotedID) FROM \(SQLName.quoted(table)) WHERE \(inner))"
    }

    mutating func linked(link: String, owner: String, target: SQLite.Value, root: Any.Type) -> String {
        arguments.append(target)
        return "EXISTS (SELECT 1 FROM \(SQLName.quoted(link)) WHERE \"owner\" = \(SQLName.quoted(owner)).\(ModelReflection.quotedID) AND \"target\" = ?)"
    }

    func column(_ reference: ColumnReference, kind: ValueKind, qualifier: String, root: Any.Type) -> String {
        let column = qualifier + "." + SQLName.quoted(reference.column)
        guard !reference.jsonPath.isEmpty else { return column }
        // json_extract gives SQL's own types: integers, reals, text, and 1 or 0 for JSON's booleans.
        return Self.typed("json_extract(\(column), \(SQLName.literal(Self.jsonPath(reference.jsonPath))))", kind)
    }

    mutating func bind(_ value: SQLite.Value, kind: ValueKind) -> String {
        arguments.append(value)
        return "?"
    }

    var isNotDistinctFrom: String { "IS" }

    func ordered(_ sql: String, kind: ValueKind) -> String {
        // Text compares by bytes, which in UTF-8 is the order of code points, Swift's order.
        kind == .decimal ? "CAST(\(sql) AS NUMERIC)" : sql
    }

    func textMatch(_ kind: TextTest, _ text: String, _ other: String) -> String {
        textMatch(kind, text, other, position: "instr")
    }

    func arrayElements(_ array: String, alias: String) -> String { "json_each(\(array)) AS \(alias)" }

    func arrayElement(alias: String, kind: ValueKind) -> String { Self.typed("\(alias).\"value\"", kind) }

    /// A value read from JSON as its kind: a `Double` JSON wrote without a fraction (`5`) is
    /// still a real, so that `/` divides as Swift's does.
    private static func typed(_ sql: String, _ kind: ValueKind) -> String {
        kind == .real ? "CAST(\(sql) AS REAL)" : sql
    }

    func arrayLength(_ array: String) -> String { "json_array_length(\(array))" }

    /// SQLite's sort is stable over its scan, and a scan (of the table, or of a one-column index)
    /// visits equal keys in rowid order: the order rows were stored in, at no cost (a `rowid` term
    /// would stop an index from giving the order).
    func storedOrder(table: String) -> String? { nil }

    /// `$."a"."b"`: a JSON path naming each member, quoted.
    static func jsonPath(_ names: [String]) -> String {
        "$" + names.map { "." + "\"" + $0.replacingOccurrences(of: "\"", with: "\\\"") + "\"" }.joined()
    }

    /// Text matched literally by GLOB: `*`, `?` and `[` wrapped in brackets.
    static func globEscaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "*", "?", "[": escaped += "[\(character)]"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}

extension Filter {
    /// The clauses in SQLite's SQL, with their arguments.
    func clauses(includingOrderAndLimit: Bool = true) throws -> (sql: String, arguments: [SQLite.Value]) {
        var dialect = SQLiteDialect()
        let sql = try clauses(in: &dialect, includingOrderAndLimit: includingOrderAndLimit)
        return (sql, dialect.arguments)
    }
}
