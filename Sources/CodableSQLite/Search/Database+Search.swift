import Foundation

extension SQLite.Database {
    /// The values whose searchable text matches what a person typed, best first, at most `limit`.
    ///
    /// ```swift
    /// let hits = try db.search(Note.self, for: "crème brul", limit: 20)
    /// ```
    ///
    /// The text is never query syntax: its words are all required, the last as a prefix (see
    /// ``SearchableModel``). Text without a word finds nothing.
    @available(*, noasync, message: "blocks its thread; in async code call the async form with await")
    public func search<T: Model>(_ type: T.Type, for text: String, limit: Int? = nil) throws -> [SearchHit<T>] {
        try search(for: text, in: Filter<T>(), limit: limit)
    }

    /// The values a filter matches whose searchable text matches `text`: best first, then in the
    /// filter's sort order; the filter's page (`limit(_:page:)`), at most `limit` long.
    ///
    /// ```swift
    /// let open = try db.search(for: "milk", in: Filter(\Note.isArchived, is: .equal(to: false)), limit: 10)
    /// ```
    @available(*, noasync, message: "blocks its thread; in async code call the async form with await")
    public func search<T: Model>(for text: String, in filter: Filter<T>, limit: Int? = nil) throws -> [SearchHit<T>] {
        let plan = try SearchPlan.of(T.self)
        let query = SearchText(text)
        let quotedTable = SQLName.quoted(plan.table)
        let quotedIndex = SQLName.quoted(plan.indexTable)
        var dialect = SQLiteDialect()
        let (condition, order) = try filter.searchClauses(
            in: &dialect, best: "codable_hits.codable_rank", id: "\(quotedTable).\(ModelReflection.quotedID)", limit: limit)
        guard !query.isEmpty, let table = try tableForReading(T.self) else { return [] }
        try ensureSearchIndex(plan)
        // The index's best rows (BM25 with the declared weights: lower is better, so the score is
        // its negation), joined to the table by rowid; the filter's conditions are on the table.
        let weights = plan.fields.map { String($0.weight) }.joined(separator: ", ")
        let from = " FROM \(quotedTable) JOIN (SELECT rowid AS codable_rowid, bm25(\(quotedIndex), \(weights)) AS codable_rank "
            + "FROM \(quotedIndex) WHERE \(quotedIndex) MATCH ?) AS codable_hits ON \(quotedTable).rowid = codable_hits.codable_rowid"
            + (condition.map { " WHERE " + $0 } ?? "") + order
        let columns = table.columns.map { "\(quotedTable).\(SQLName.quoted($0.name))" }.joined(separator: ", ")
        let sql = "SELECT \(columns), -codable_hits.codable_rank AS codable_score" + from
        let arguments = [SQLite.Value.text(query.fts5Query)] + dialect.arguments
        func read() throws -> [ScoredRow<T>] {
            try explainingMissingColumns(T.self, table: table) {
                try withReader { connection in
                    guard table.schema.relationships.isEmpty else {
                        let ids = "SELECT \(quotedTable).\(ModelReflection.quotedID)" + from
                        return try connection.inReadTransaction {
                            try loadGraph(T.self, rows: ScoredRow<T>.self, table: table, sql: sql, arguments: arguments, ids: ids, on: connection)
                        }
                    }
                    return try connection.withStatement(sql) { statement in
                        try statement.bind(arguments)
                        return try statement.decodeRows(ScoredRow<T>.self, options: DecodingOptions(), indexesRows: false)
                    }
                }
            }
        }
        let rows: [ScoredRow<T>]
        do {
            rows = try read()
        } catch let error as SQLite.Error where error.message.contains("no such table") {
            // Another process dropped the index (an app version without the declaration): made again.
            searchIndexes.forget(table: plan.table)
            try ensureSearchIndex(plan)
            do {
                rows = try read()
            } catch let retry as SQLite.Error where retry.message.contains("no such table") {
                throw ModelError(.unexpectedResult, T.self, """
                    the full-text index of table \(quotedTable) was just made, after this read's snapshot began (a search \
                    inside db.read { }), which cannot see it. Search once outside the read first. (\(retry.message))
                    """)
            }
        }
        return rows.map { SearchHit(value: $0.value, score: $0.score, query: query, plan: plan) }
    }

    /// Asynchronous ``search(_:for:limit:)``.
    ///
    /// ```swift
    /// let hits = try await db.search(Note.self, for: "milk", limit: 20)
    /// ```
    public func search<T: Model & Sendable>(_ type: T.Type, for text: String, limit: Int? = nil) async throws -> [SearchHit<T>] {
        try await performRead { _ in try self.search(type, for: text, limit: limit) }
    }

    /// Asynchronous ``search(for:in:limit:)``.
    ///
    /// ```swift
    /// let hits = try await db.search(for: "milk", in: Filter(\Note.isArchived, is: .equal(to: false)), limit: 20)
    /// ```
    public func search<T: Model & Sendable>(for text: String, in filter: Filter<T>, limit: Int? = nil) async throws -> [SearchHit<T>] {
        try await performRead { _ in try self.search(for: text, in: filter, limit: limit) }
    }

    /// A search within a filter's values, now and after each commit that changes them.
    ///
    /// ```swift
    /// for try await hits in db.observeSearch(for: query, in: Filter(\Note.isArchived, is: .equal(to: false))) { show(hits) }
    /// ```
    public func observeSearch<T: Model & Sendable>(for text: String, in filter: Filter<T>, limit: Int? = nil) -> ObservedValues<[SearchHit<T>]> {
        ObservedValues { [weak self] in
            LiveQuery(database: self, region: nil) { database in
                let region = try await database.performRead { _ in
                    var region = try database.modelRegion(T.self)
                    region.insert(table: try SearchPlan.of(T.self).indexTable, column: nil)
                    return region
                }
                return (try await database.search(for: text, in: filter, limit: limit), region)
            }
        }
    }
}

/// A row decoded as a model value and the search score beside its columns.
struct ScoredRow<T: Decodable>: Decodable {
    let value: T
    let score: Double

    private enum Keys: String, CodingKey { case score = "codable_score" }

    init(from decoder: any Decoder) throws {
        value = try T(from: decoder)
        score = try decoder.container(keyedBy: Keys.self).decode(Double.self, forKey: .score)
    }
}
