#if Postgres
import Foundation
import PostgresNIO

/// PostgreSQL's half of ``SQLDialect``: the same conditions, with the same meaning, as on SQLite
/// (the condition tree is walked once for both engines, in CodableSQLite's `SQLDialect.swift`).
///
/// Where the two engines differ by default, the SQL asks PostgreSQL for SQLite's behaviour: text
/// compares and sorts by bytes (`COLLATE "C"`), `NULL`s sort first in ascending order, `hasPrefix`
/// and friends match case-sensitively and `like` matches letters in either case. A key path into a
/// nested value reads the `jsonb` member (`"address" #> '{city}'`), JSON `null` counting as `NULL`.
/// Arguments are bound in PostgreSQL's types (`$1::bigint`, `$2::jsonb`…) into ``binds``.
struct PostgresDialect: SQLDialect {
    /// The table whose columns the conditions name (a to-one's target inside ``inRelated(table:root:_:)``).
    private(set) var table: PostgresTable
    var binds: PostgresBindings

    init(table: PostgresTable, binds: PostgresBindings = PostgresBindings()) {
        self.table = table
        self.binds = binds
    }

    func expression(for reference: ColumnReference, root: Any.Type) throws -> SQLExpression {
        guard let column = table.column(named: reference.column) else {
            throw ModelError(.invalidKeyPath, root, "cannot filter, sort or index on \(reference.name): it is not stored in \(table.schema.table)")
        }
        guard !reference.jsonPath.isEmpty else {
            let ordered = column.kind == .text ? "\(column.quoted) COLLATE \"C\"" : column.quoted
            let text = column.kind == .text ? column.quoted : "\(column.quoted)::text"
            return SQLExpression(value: column.quoted, text: text, ordered: ordered, reference: reference)
        }
        let path = "ARRAY[" + reference.jsonPath.map(SQLName.literal).joined(separator: ", ") + "]::text[]"
        // jsonb orders numbers as numbers and strings as strings: the value itself sorts.
        let member = "NULLIF(\(column.quoted) #> \(path), 'null'::jsonb)"
        return SQLExpression(value: member, text: "(\(column.quoted) #>> \(path))", ordered: member, reference: reference)
    }

    mutating func bind(_ value: StoredValue, comparedWith expression: SQLExpression) -> String {
        let reference = expression.reference
        if reference.jsonPath.isEmpty, let column = table.column(named: reference.column) {
            return column.kind.parameter(value, &binds)
        }
        binds.append(JSONForm.scalar(value, asBoolean: reference.isBool, asNumber: reference.isDecimal))
        return "$\(binds.count)::jsonb"
    }

    mutating func bind(integer: Int64) -> String {
        binds.append(integer)
        return "$\(binds.count)"
    }

    var alwaysFalse: String { "FALSE" }
    var alwaysTrue: String { "TRUE" }
    var isDistinctFrom: String { "IS DISTINCT FROM" }

    mutating func match(_ expression: SQLExpression, _ kind: TextMatch, _ text: String) -> String {
        binds.append(kind.pattern(for: text, anyRun: "%", escaped: Self.likeEscaped))
        return "\(expression.text) LIKE $\(binds.count)"
    }

    mutating func like(_ expression: SQLExpression, _ pattern: String) -> String {
        // SQLite's LIKE: no escape character, letters match either case.
        binds.append(pattern)
        return "\(expression.text) ILIKE $\(binds.count) ESCAPE ''"
    }

    func order(_ expression: SQLExpression, ascending: Bool) -> String {
        // A column that cannot be NULL sorts without a NULLS clause, so that its index (the
        // primary key's, for paging by id) gives the order without a sort.
        if expression.reference.jsonPath.isEmpty, let column = table.column(named: expression.reference.column), !column.isOptional {
            return expression.ordered + (ascending ? " ASC" : " DESC")
        }
        return expression.ordered + (ascending ? " ASC NULLS FIRST" : " DESC NULLS LAST")
    }

    func related(column: String, table: String, inner: String, root: Any.Type) throws -> String {
        "\(self.table.quotedTable).\(SQLName.quoted(column)) IN (SELECT \(SQLName.quoted(ModelReflection.idName)) FROM \(SQLName.quoted(table)) WHERE \(inner))"
    }

    mutating func inRelated(table name: String, root: Any.Type, _ body: (inout PostgresDialect) throws -> String) throws -> String {
        guard let target = table.targets.values.first(where: { $0.schema.table == name }) else {
            throw ModelError(.invalidKeyPath, root, "cannot filter through \(name): it is not the target of a relationship of \(table.schema.table)")
        }
        let owner = table
        table = target
        defer { table = owner }
        return try body(&self)
    }

    mutating func linked(link: String, owner: String, target: StoredValue, root: Any.Type) throws -> String {
        guard let relationship = table.relationship(linkTable: link), let targetTable = table.targets[relationship.name] else {
            throw ModelError(.invalidKeyPath, root, "cannot filter on \(link): it is not a to-many relationship of \(table.schema.table)")
        }
        let quotedLink = SQLName.quoted(link)
        let value = targetTable.id.kind.parameter(target, &binds)
        return "EXISTS (SELECT 1 FROM \(quotedLink) WHERE \(quotedLink).\"owner\" = \(SQLName.quoted(owner)).\(SQLName.quoted(ModelReflection.idName)) "
            + "AND \(quotedLink).\"target\" = \(value))"
    }

    /// PostgreSQL cuts names at 63 bytes.
    var maximumNameLength: Int? { 63 }

    /// Text matched literally by LIKE (whose escape character is a backslash by default).
    static func likeEscaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "%" || character == "_" || character == "\\" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}

extension Filter {
    /// The clauses in PostgreSQL's SQL for `table`, binding into `binds`.
    func clauses(table: PostgresTable, binds: inout PostgresBindings, includingOrderAndLimit: Bool = true) throws -> String {
        var dialect = PostgresDialect(table: table, binds: binds)
        defer { binds = dialect.binds }
        return try clauses(in: &dialect, includingOrderAndLimit: includingOrderAndLimit)
    }
}
#endif
