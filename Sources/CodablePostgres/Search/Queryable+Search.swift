#if Postgres
import Foundation
import PostgresNIO

extension Postgres.Queryable {
    /// The values a filter matches whose searchable text matches `text`: best first, then in the
    /// filter's sort order; the filter's page (`limit(_:page:)`), at most `limit` long.
    ///
    /// ```swift
    /// let open = try await db.search(for: "milk", in: Filter(\Note.isArchived, is: .equal(to: false)), limit: 10)
    /// ```
    public func search<T: Model & Sendable>(for text: String, in filter: Filter<T>, limit: Int? = nil) async throws -> [SearchHit<T>] {
        try await handle.session.search(for: text, in: filter, limit: limit)
    }
}

extension Postgres.Database {
    /// A search within a filter's values, now and after each commit that changes them.
    ///
    /// ```swift
    /// for try await hits in db.observeSearch(for: query, in: Filter(\Note.isArchived, is: .equal(to: false))) { show(hits) }
    /// ```
    public func observeSearch<T: Model & Sendable>(for text: String, in filter: Filter<T>, limit: Int? = nil) -> ObservedValues<[SearchHit<T>]> {
        liveQuery(T.self, when: { _ in true }) { database in try await database.search(for: text, in: filter, limit: limit) }
    }
}

extension Postgres.Session {
    /// The search: the words bound as one `text[]`, made a `tsquery` on the server by the same
    /// function that made the index's words (each word quoted, so none is an operator; the last
    /// a prefix), matched against the generated column and ranked with the declared weights.
    func search<T: Model>(for text: String, in filter: Filter<T>, limit: Int?) async throws -> [SearchHit<T>] {
        let plan = try SearchPlan.of(T.self)
        let query = SearchText(text)
        // A model never saved has nothing to find, and a search creates no table.
        guard try await readTable(for: T.self) != nil else { return [] }
        var table = try await table(for: T.self)
        if database.searchSignatures.withLock({ $0[plan.table] }) != plan.signature {
            // Another declaration of the same table was prepared since: this one's column again.
            database.tables.withLock { $0[ObjectIdentifier(T.self)] = nil }
            table = try await self.table(for: T.self)
        }
        var binds = PostgresBindings()
        binds.append(query.words)
        var dialect = PostgresDialect(table: table, binds: binds)
        let (condition, order) = try filter.searchClauses(
            in: &dialect, best: "codable_score DESC", id: "\(table.quotedTable).\(table.id.quoted)", limit: limit)
        guard !query.isEmpty else { return [] }
        let language = SQLName.literal(plan.language.name) + "::regconfig"
        let words = """
            (SELECT string_agg('''' || codable_search_text(w) || '''' || CASE WHEN o = cardinality($1::text[]) THEN ':*' ELSE '' END, \
            ' & ' ORDER BY o) FROM unnest($1::text[]) WITH ORDINALITY AS u(w, o))
            """
        let vector = "\(table.quotedTable).\(SQLName.quoted(Postgres.Database.searchColumn))"
        let sql = "SELECT \(table.reading.selectList), ts_rank('\(plan.postgresWeights)'::float4[], \(vector), codable_query.codable_tsquery)::float8 AS codable_score "
            + "FROM \(table.quotedTable), (SELECT to_tsquery(\(language), coalesce(\(words), '')) AS codable_tsquery) AS codable_query "
            + "WHERE \(vector) @@ codable_query.codable_tsquery" + (condition.map { " AND (\($0))" } ?? "") + order
        return try table.reading.decode(T.self, try await rows(sql, dialect.binds), sql: sql) { value, row in
            guard let cell = row.dropFirst(table.reading.members.count).first, let score = try cell.decode(Double?.self) else {
                throw ModelError(.unexpectedResult, T.self, "a search hit came back without its score (SQL: \(sql))")
            }
            return SearchHit(value: value, score: score, query: query, plan: plan)
        }
    }
}
#endif
