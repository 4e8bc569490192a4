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

    func column(_ reference: ColumnReference, kind: ValueKind, qualifier: String, root: Any.Type) -> String {
        let column = qualifier + "." + SQLName.quoted(reference.column)
        guard !reference.jsonPath.isEmpty else { return column }
        let path = "ARRAY[" + reference.jsonPath.map(SQLName.literal).joined(separator: ", ") + "]::text[]"
        // A member of a nested value: its JSON text, converted as a column of its type is.
        return kind == .json ? "NULLIF(\(column) #> \(path), 'null'::jsonb)" : Self.columnKind(kind).fromText("(\(column) #>> \(path))")
    }

    mutating func bind(_ value: StoredValue, kind: ValueKind) -> String {
        Self.columnKind(kind).parameter(value, &binds)
    }

    var isNotDistinctFrom: String { "IS NOT DISTINCT FROM" }

    func ordered(_ sql: String, kind: ValueKind) -> String {
        // Text by bytes: UTF-8's order of code points, Swift's order.
        kind == .text ? "\(sql) COLLATE \"C\"" : sql
    }

    func textMatch(_ kind: TextTest, _ text: String, _ other: String) -> String {
        textMatch(kind, text, other, position: "strpos")
    }

    func arrayElements(_ array: String, alias: String) -> String { "jsonb_array_elements_text(\(array)) AS \(alias)(\"value\")" }

    func arrayElement(alias: String, kind: ValueKind) -> String {
        kind == .json ? "\(alias).\"value\"::jsonb" : Self.columnKind(kind).fromText("\(alias).\"value\"")
    }

    func arrayLength(_ array: String) -> String { "jsonb_array_length(\(array))" }

    /// The row's place in the table: the order rows were inserted in, until one is updated.
    func storedOrder(table: String) -> String? { "\(table).ctid" }

    /// The column type of a query expression's kind.
    static func columnKind(_ kind: ValueKind) -> ColumnKind {
        switch kind {
        case .integer: .bigint
        case .real: .double
        case .text: .text
        case .bool: .boolean
        case .date: .timestamp
        case .uuid: .uuid
        case .decimal: .numeric
        case .data: .bytea
        case .json: .jsonb
        }
    }

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
