/// SQLite's half of ``SQLDialect``: `?` placeholders collected in ``arguments``, `json_extract`
/// for nested values, GLOB for case-sensitive text matching.
struct SQLiteDialect: SQLDialect {
    /// The arguments, in placeholder order.
    private(set) var arguments: [SQLite.Value] = []

    func expression(for reference: ColumnReference, root: Any.Type) -> SQLExpression {
        var sql = SQLName.quoted(reference.column)
        if !reference.jsonPath.isEmpty {
            let path = "$" + reference.jsonPath.map { "." + "\"" + $0.replacingOccurrences(of: "\"", with: "\\\"") + "\"" }.joined()
            sql = "json_extract(\(sql), \(SQLName.literal(path)))"
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

    var hasOrderOrLimit: Bool { !sorts.isEmpty || paging != nil }
}
