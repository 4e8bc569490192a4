/// The rows of one table that a `SELECT` can read, when its `WHERE` pins the table's rowid
/// (`WHERE id = 1`, `= :id`, `= ?`, `IN (1, 3)`), so that live queries on a few rows are not read
/// again for writes to the others, as `observe(_:id:)` is not.
///
/// Only what can be proved is limited; everything else stays table- and column-precise:
/// - the SQL is one `SELECT … FROM table [AS alias] WHERE …` on a table of the main database
///   (no second `SELECT`, subquery, join, comma join, compound, `WITH`, `INDEXED BY`; the name is
///   not shadowed by a temporary table or view);
/// - a top-level `AND` term of the `WHERE` (no `OR`, `BETWEEN` or `CASE` outside parentheses) is
///   `column = value`, `value = column` or `column IN (value, …)`, where a value is an integer
///   literal or a parameter bound to an integer;
/// - the column is the table's rowid: SQLite compiles `SELECT 1 FROM table WHERE column = 1` to a
///   single cursor on the table positioned by `SeekRowid` or `NotExists`, never a scan or an
///   index (so not `INTEGER PRIMARY KEY DESC`, other primary keys, or `WITHOUT ROWID` tables).
///
/// The work is done once per observed SQL, when its region is read: tokenizing, one look-up in the
/// temporary schema and one `EXPLAIN` of the probe per candidate term, 40 to 150 µs in a debug
/// build (the authorizer's region itself takes about 10 µs there).
struct PinnedRows: Equatable {
    /// The table, lower-cased.
    var table: String
    /// The column the `WHERE` names, lower-cased.
    var column: String
    var rowIDs: Set<Int64>

    /// What a parameter or an argument is bound to: named arguments (keys with or without their
    /// `:`, `@` or `$`), or positional ones (`?`, `?NNN`).
    enum Arguments {
        case named(SQLiteArguments)
        case positional([SQLite.Value])
    }

    /// The rows `sql` may pin, one per `AND` term of the form above, before SQLite confirms that
    /// the column is the rowid; empty when the SQL is not of the simple form above.
    static func candidates(in sql: String, arguments: Arguments) -> [(pinned: PinnedRows, writtenTable: String, writtenColumn: String)] {
        guard var tokens = SQLTokens(sql)?.numberingPositionalParameters().tokens else { return [] }
        if tokens.last == .symbol(";") { tokens.removeLast() }
        guard tokens.first?.isKeyword("SELECT") == true else { return [] }
        let refused = ["SELECT", "WITH", "UNION", "INTERSECT", "EXCEPT", "JOIN", "VALUES", "INDEXED"]
        if tokens.dropFirst().contains(where: { token in refused.contains { token.isKeyword($0) } }) { return [] }
        let froms = tokens.indices.filter { tokens[$0].isKeyword("FROM") }
        guard froms.count == 1, var index = froms.first else { return [] }
        // FROM [main.]table [[AS] alias] WHERE
        index += 1
        guard index < tokens.count, var table = tokens[index].identifier else { return [] }
        var writtenTable = tokens[index].text
        if index + 2 < tokens.count, tokens[index + 1] == .symbol(".") {
            guard table.lowercased() == "main", let name = tokens[index + 2].identifier else { return [] }
            writtenTable += "." + tokens[index + 2].text
            table = name
            index += 2
        }
        index += 1
        var names: Set<String> = [table.lowercased()]
        if index < tokens.count, tokens[index].isKeyword("AS") { index += 1 }
        if index < tokens.count, !tokens[index].isKeyword("WHERE") {
            guard let alias = tokens[index].identifier else { return [] }
            names.insert(alias.lowercased())
            index += 1
        }
        guard index < tokens.count, tokens[index].isKeyword("WHERE") else { return [] }
        let clause = whereClause(tokens[(index + 1)...])
        guard let terms = topLevelTerms(clause) else { return [] }
        let values = ParameterValues(tokens: tokens, arguments: arguments)
        return terms.compactMap { term in
            pinnedRows(term, tableNames: names, values: values).map { found in
                (PinnedRows(table: table.lowercased(), column: found.column.lowercased(), rowIDs: found.rowIDs), writtenTable, found.written)
            }
        }
    }

    /// The tokens of the `WHERE` clause: up to `GROUP`, `ORDER`, `LIMIT`, `HAVING` or `WINDOW`
    /// outside parentheses.
    private static func whereClause(_ tokens: ArraySlice<SQLToken>) -> ArraySlice<SQLToken> {
        var depth = 0
        for index in tokens.indices {
            switch tokens[index] {
            case .symbol("("): depth += 1
            case .symbol(")"): depth -= 1
            default:
                if depth == 0, ["GROUP", "ORDER", "LIMIT", "HAVING", "WINDOW"].contains(where: tokens[index].isKeyword) {
                    return tokens[tokens.startIndex..<index]
                }
            }
        }
        return tokens
    }

    /// The clause split at `AND` outside parentheses; `nil` when an `OR`, `BETWEEN` or `CASE`
    /// outside parentheses would make such a split wrong.
    private static func topLevelTerms(_ clause: ArraySlice<SQLToken>) -> [ArraySlice<SQLToken>]? {
        var terms: [ArraySlice<SQLToken>] = []
        var depth = 0
        var start = clause.startIndex
        for index in clause.indices {
            let token = clause[index]
            if token == .symbol("(") { depth += 1 } else if token == .symbol(")") { depth -= 1 }
            guard depth == 0 else { continue }
            if ["OR", "BETWEEN", "CASE"].contains(where: token.isKeyword) { return nil }
            if token.isKeyword("AND") {
                terms.append(clause[start..<index])
                start = index + 1
            }
        }
        terms.append(clause[start...])
        return terms
    }

    /// `column = value`, `value = column` or `column IN (value, …)`, exactly.
    private static func pinnedRows(
        _ term: ArraySlice<SQLToken>, tableNames: Set<String>, values: ParameterValues
    ) -> (column: String, written: String, rowIDs: Set<Int64>)? {
        let term = Array(term)
        if let (column, written, next) = columnReference(term, at: 0, tableNames: tableNames), next < term.count {
            if term[next] == .symbol("=") || term[next] == .symbol("==") {
                guard let (value, end) = values.integer(term, at: next + 1), end == term.count else { return nil }
                return (column, written, [value])
            }
            guard term[next].isKeyword("IN"), next + 1 < term.count, term[next + 1] == .symbol("(") else { return nil }
            var rowIDs: Set<Int64> = []
            var index = next + 2
            if index < term.count, term[index] == .symbol(")") { return index + 1 == term.count ? (column, written, []) : nil }
            while let (value, end) = values.integer(term, at: index), end < term.count {
                rowIDs.insert(value)
                if term[end] == .symbol(")") { return end + 1 == term.count ? (column, written, rowIDs) : nil }
                guard term[end] == .symbol(",") else { return nil }
                index = end + 1
            }
            return nil
        }
        guard let (value, end) = values.integer(term, at: 0), end < term.count,
              term[end] == .symbol("=") || term[end] == .symbol("=="),
              let (column, written, next) = columnReference(term, at: end + 1, tableNames: tableNames), next == term.count
        else { return nil }
        return (column, written, [value])
    }

    /// `column` or `table.column` (the table's name or alias) at `index`.
    private static func columnReference(_ term: [SQLToken], at index: Int, tableNames: Set<String>) -> (String, String, Int)? {
        guard index < term.count, let name = term[index].identifier else { return nil }
        if index + 2 < term.count, term[index + 1] == .symbol(".") {
            guard tableNames.contains(name.lowercased()), let column = term[index + 2].identifier else { return nil }
            return (column, term[index + 2].text, index + 3)
        }
        return (name, term[index].text, index + 1)
    }
}

/// The integer values parameters are bound to in one statement.
private struct ParameterValues {
    /// Named arguments, by name without its prefix: the library binds `:key`, `@key` and `$key`.
    private var named: [String: SQLite.Value] = [:]
    /// Positional arguments, by the text of the parameter (`?` or `?NNN`).
    private var positional: [String: SQLite.Value] = [:]

    init(tokens: [SQLToken], arguments: PinnedRows.Arguments) {
        switch arguments {
        case .named(let values):
            for (key, value) in values {
                var name = Substring(key)
                if let first = name.first, ":@$".contains(first) { name = name.dropFirst() }
                named[String(name)] = value
            }
        case .positional(let values):
            // Parameters are numbered (``SQLTokens/numberingPositionalParameters()``); with names
            // among them, which positional arguments cannot bind, nothing is known.
            guard !tokens.contains(where: { if case .parameter(let text) = $0 { !text.hasPrefix("?") } else { false } }) else { return }
            for (offset, value) in values.enumerated() { positional["?\(offset + 1)"] = value }
        }
    }

    /// The integer at `index` (a literal, with its sign, or a parameter bound to an integer) and
    /// the index after it.
    func integer(_ term: [SQLToken], at index: Int) -> (Int64, Int)? {
        guard index < term.count else { return nil }
        switch term[index] {
        case .symbol(let sign) where sign == "-" || sign == "+":
            guard index + 1 < term.count, case .number(let digits) = term[index + 1],
                  let value = Int64(sign == "-" ? "-" + digits : digits) else { return nil }
            return (value, index + 2)
        case .number(let digits):
            guard let value = Int64(digits) else { return nil }   // not 1.0, 1e3 or 0x1
            return (value, index + 1)
        case .parameter(let text):
            let value = text.hasPrefix("?") ? positional[text] : named[String(text.dropFirst())]
            guard case .integer(let value) = value else { return nil }
            return (value, index + 1)
        default:
            return nil
        }
    }
}

extension RawConnection {
    /// The rows `sql` pins by rowid (see ``PinnedRows``), once SQLite confirmed that the column
    /// is the rowid of a table of the main database; `nil` when that cannot be proved.
    func pinnedRows(of sql: String, arguments: PinnedRows.Arguments) -> PinnedRows? {
        let candidates = PinnedRows.candidates(in: sql, arguments: arguments)
        guard let first = candidates.first, !hasTemporaryObject(named: first.pinned.table) else { return nil }
        return candidates.first { findsRowsByRowID(column: $0.writtenColumn, of: $0.writtenTable) }?.pinned
    }

    /// The tables and columns `sql` reads, limited to the rows its `WHERE` pins by rowid when it
    /// provably does (``PinnedRows``).
    func readRegion(of sql: String, pinningRowsWith arguments: PinnedRows.Arguments) throws -> DatabaseRegion {
        var region = try readRegion(of: sql)
        if let pinned = pinnedRows(of: sql, arguments: arguments), region.columns(of: pinned.table) != nil {
            region.limit(table: pinned.table, toRowIDs: pinned.rowIDs, column: pinned.column)
        }
        return region
    }
}
