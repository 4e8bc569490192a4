#if Postgres
import Foundation
import PostgresNIO

/// A ``Filter`` in PostgreSQL's SQL: the same conditions, with the same meaning, as on SQLite.
///
/// Where the two engines differ by default, the SQL asks PostgreSQL for SQLite's behaviour: text
/// compares and sorts by bytes (`COLLATE "C"`), `NULL`s sort first in ascending order, `hasPrefix`
/// and friends match case-sensitively and `like` matches letters in either case. A key path into a
/// nested value reads the `jsonb` member (`"address" #> '{city}'`), JSON `null` counting as `NULL`.
enum PostgresSQL {
    /// What a filter becomes: ` WHERE …`, ` ORDER BY …` and ` LIMIT … OFFSET …`, with arguments.
    static func clauses<T: Model>(_ filter: Filter<T>, table: PostgresTable, binds: inout PostgresBindings,
                                  includingOrderAndLimit: Bool = true) throws -> String {
        if let error = filter.error { throw error }
        for column in (filter.predicate?.columns ?? []) + filter.sorts.map(\.column) {
            if let problem = column.nestedKeyProblem(root: T.self) { throw problem }
        }
        var sql = ""
        if let predicate = filter.predicate {
            sql += " WHERE " + (try condition(predicate, table: table, root: T.self, binds: &binds))
        }
        guard includingOrderAndLimit else { return sql }
        if !filter.sorts.isEmpty {
            let orders = try filter.sorts.map { sort -> String in
                let expression = try self.expression(for: sort.column, in: table, root: T.self)
                return expression.ordered + (sort.ascending ? " ASC NULLS FIRST" : " DESC NULLS LAST")
            }
            sql += " ORDER BY " + orders.joined(separator: ", ")
        }
        if let paging = filter.paging {
            binds.append(Int64(paging.count))
            binds.append(Int64(paging.offset))
            sql += " LIMIT $\(binds.count - 1) OFFSET $\(binds.count)"
        }
        return sql
    }

    /// A key path's value in SQL: the column, or the `jsonb` member of a nested value.
    struct Expression {
        let sql: String
        /// The same value as text, for text matching.
        let text: String
        /// How a bound value is written to compare with it.
        let parameter: (SQLite.Value, inout PostgresBindings) -> String
        /// ``sql`` for comparisons and sorting (text by bytes, as SQLite).
        let ordered: String
    }

    static func expression(for reference: ColumnReference, in table: PostgresTable, root: Any.Type) throws -> Expression {
        guard let column = table.column(named: reference.column) else {
            throw ModelError(.invalidKeyPath, root, "cannot filter, sort or index on \(reference.name): it is not stored in \(table.schema.table)")
        }
        guard !reference.jsonPath.isEmpty else {
            let ordered = column.kind == .text ? "\(column.quoted) COLLATE \"C\"" : column.quoted
            let text = column.kind == .text ? column.quoted : "\(column.quoted)::text"
            return Expression(sql: column.quoted, text: text, parameter: { column.kind.parameter($0, &$1) }, ordered: ordered)
        }
        let path = "ARRAY[" + reference.jsonPath.map(SQLName.literal).joined(separator: ", ") + "]::text[]"
        let isBool = reference.isBool, isDecimal = reference.isDecimal
        // jsonb orders numbers as numbers and strings as strings: the value itself sorts.
        let member = "NULLIF(\(column.quoted) #> \(path), 'null'::jsonb)"
        return Expression(
            sql: member,
            text: "(\(column.quoted) #>> \(path))",
            parameter: { value, binds in
                binds.append(JSONForm.scalar(value, asBoolean: isBool, asNumber: isDecimal))
                return "$\(binds.count)::jsonb"
            },
            ordered: member)
    }

    private static func condition(_ predicate: CodableSQLite.Predicate, table: PostgresTable, root: Any.Type, binds: inout PostgresBindings) throws -> String {
        switch predicate {
        case .and(let left, let right):
            return "(\(try condition(left, table: table, root: root, binds: &binds)) AND \(try condition(right, table: table, root: root, binds: &binds)))"
        case .or(let left, let right):
            return "(\(try condition(left, table: table, root: root, binds: &binds)) OR \(try condition(right, table: table, root: root, binds: &binds)))"
        case .related, .linked:
            throw ModelError(.unsupportedModel, root, "filters through relationships are not supported by CodablePostgres yet")
        case .condition(let reference, let rule):
            let expression = try expression(for: reference, in: table, root: root)
            return sql(rule, expression, binds: &binds)
        }
    }

    private static func sql(_ rule: Condition, _ column: Expression, binds: inout PostgresBindings) -> String {
        let value = column.sql
        switch rule {
        case .equal(.null):
            return "\(value) IS NULL"
        case .equal(let argument):
            return "\(value) = \(column.parameter(argument, &binds))"
        case .notEqual(.null):
            return "\(value) IS NOT NULL"
        case .notEqual(let argument):
            return "\(value) IS DISTINCT FROM \(column.parameter(argument, &binds))"
        case .compare(let comparison, let argument):
            return "\(column.ordered) \(comparison) \(column.parameter(argument, &binds))"
        case .between(let lower, let upper):
            return "\(column.ordered) BETWEEN \(column.parameter(lower, &binds)) AND \(column.parameter(upper, &binds))"
        case .member(let values, let negated):
            let hasNull = values.contains(.null)
            let others = values.filter { !$0.isNull }
            let list = others.isEmpty ? nil
                : "\(value) \(negated ? "NOT IN" : "IN") (" + others.map { column.parameter($0, &binds) }.joined(separator: ", ") + ")"
            switch (negated, hasNull, list) {
            case (false, false, nil): return "FALSE"
            case (false, false, let list?): return list
            case (false, true, nil): return "\(value) IS NULL"
            case (false, true, let list?): return "(\(list) OR \(value) IS NULL)"
            case (true, false, nil): return "TRUE"
            case (true, false, let list?): return "(\(value) IS NULL OR \(list))"
            case (true, true, nil): return "\(value) IS NOT NULL"
            case (true, true, let list?): return "(\(value) IS NOT NULL AND \(list))"
            }
        case .glob(let pattern):
            binds.append(likePattern(fromGlob: pattern))
            return "\(column.text) LIKE $\(binds.count)"
        case .like(let pattern):
            // SQLite's LIKE: no escape character, letters match either case.
            binds.append(pattern)
            return "\(column.text) ILIKE $\(binds.count) ESCAPE ''"
        }
    }

    /// A GLOB pattern as the filter rules write it (`*` for any text, `[x]` for a literal `x`) as
    /// a `LIKE` pattern with backslash escapes.
    static func likePattern(fromGlob glob: String) -> String {
        var result = ""
        var characters = glob.makeIterator()
        while let character = characters.next() {
            switch character {
            case "*": result += "%"
            case "?": result += "_"
            case "[":
                // Only `[x]` is ever written: a literal character.
                if let literal = characters.next() {
                    _ = characters.next()
                    result += escaped(literal)
                }
            default: result += escaped(character)
            }
        }
        return result
    }

    private static func escaped(_ character: Character) -> String {
        character == "%" || character == "_" || character == "\\" ? "\\" + String(character) : String(character)
    }
}
#endif
