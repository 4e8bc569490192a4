#if Postgres
import Foundation
import PostgresNIO

/// A searchable model's index on PostgreSQL: a generated `tsvector` column (`codable_search`),
/// each property's words in its weight class, with a GIN index. PostgreSQL computes the column
/// whenever a row is written, so every write is indexed, whoever makes it; the column's comment
/// holds the ``SearchPlan``'s signature, so a changed declaration is seen and the column made
/// again (which indexes every row).
///
/// Text goes through `codable_search_text`, created once per database: `unaccent` (accents
/// ignored, as SQLite's `remove_diacritics` does), punctuation made spaces (so that words split
/// where SQLite's `unicode61` splits them: `e-mail`, `3.14`, `l’été`), and lowercase by Unicode
/// (ICU) when the server has it, whatever the database's locale.
extension Postgres.Database {
    /// The generated column holding the weighted `tsvector`.
    static let searchColumn = "codable_search"

    /// Brings the search column of `table` in line with `plan`, in the transaction preparing it.
    func prepareSearch(_ plan: SearchPlan, of table: PostgresTable, session: Postgres.Session) async throws {
        let column = SQLName.quoted(Self.searchColumn)
        let index = SQLName.quoted(SQLName.fitted(plan.table + "(search)", toBytes: 63))
        if try await searchSignature(of: table, session: session) != plan.signature {
            try await prepareSearchText(session)
            // A searchable optional property that no saved value had yet has no column: the index reads it.
            for field in plan.fields {
                _ = try await session.rows("ALTER TABLE \(table.quotedTable) ADD COLUMN IF NOT EXISTS \(SQLName.quoted(field.name)) text COLLATE \"C\"")
            }
            let language = SQLName.literal(plan.language.name) + "::regconfig"
            let vector = plan.fields.map { field in
                "setweight(to_tsvector(\(language), codable_search_text(coalesce(\(SQLName.quoted(field.name)), ''))), '\(field.weightClass)')"
            }.joined(separator: " || ")
            _ = try await session.rows("ALTER TABLE \(table.quotedTable) DROP COLUMN IF EXISTS \(column)")
            _ = try await session.rows("ALTER TABLE \(table.quotedTable) ADD COLUMN \(column) tsvector GENERATED ALWAYS AS (\(vector)) STORED")
            _ = try await session.rows("COMMENT ON COLUMN \(table.quotedTable).\(column) IS \(SQLName.literal(plan.signature))")
        }
        // Only when missing: CREATE INDEX IF NOT EXISTS locks the table even when the index exists.
        var name = PostgresBindings()
        name.append(SQLName.fitted(plan.table + "(search)", toBytes: 63))
        let hasIndex = try await session.rows("""
            SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relname = $1
            """, name)
        if hasIndex.isEmpty {
            _ = try await session.rows("CREATE INDEX \(index) ON \(table.quotedTable) USING GIN (\(column))")
        }
    }

    /// Drops the search column of a model that is no longer searchable (its writes stop paying for
    /// the index), when the library made it (its comment says so).
    func removeSearch(of table: PostgresTable, session: Postgres.Session) async throws {
        guard let signature = try await searchSignature(of: table, session: session), signature.hasPrefix(SearchPlan.signaturePrefix) else { return }
        _ = try await session.rows("ALTER TABLE \(table.quotedTable) DROP COLUMN \(SQLName.quoted(Self.searchColumn))")
    }

    /// The comment of the table's search column: the signature of the plan it was made from (`nil`
    /// without the column or the comment).
    private func searchSignature(of table: PostgresTable, session: Postgres.Session) async throws -> String? {
        var binds = PostgresBindings()
        binds.append(table.quotedTable)
        binds.append(Self.searchColumn)
        let comments = try await session.rows("""
            SELECT col_description(a.attrelid, a.attnum) FROM pg_attribute a \
            WHERE a.attrelid = to_regclass($1) AND a.attname = $2 AND NOT a.attisdropped
            """, binds)
        return try comments.first?.decode(String?.self)
    }

    /// Creates `codable_search_text(text)` (and the `unaccent` extension it uses) unless the
    /// database has it.
    private func prepareSearchText(_ session: Postgres.Session) async throws {
        let exists = "SELECT to_regprocedure('codable_search_text(text)') IS NOT NULL"
        if try await session.rows(exists).first?.decode(Bool.self) == true { return }
        // Instances creating it at once take turns; the later ones find it.
        var key = PostgresBindings()
        key.append(Int64(bitPattern: SQLName.stableHash("CodablePostgres search text")))
        _ = try await session.rows("SELECT pg_advisory_xact_lock($1)", key)
        if try await session.rows(exists).first?.decode(Bool.self) == true { return }
        do {
            _ = try await session.rows("CREATE EXTENSION IF NOT EXISTS unaccent")
        } catch let error as Postgres.Error {
            throw Postgres.Error(.server, sqlState: error.sqlState, message: """
                full-text search (SearchableModel) needs PostgreSQL's unaccent extension, which could not be created: \
                install PostgreSQL's contrib modules on the server, or have a superuser run CREATE EXTENSION unaccent \
                in this database. (\(error.message))
                """, sql: error.sql)
        }
        let schema = try await session.rows("""
            SELECT quote_ident(n.nspname) FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'unaccent'
            """).first?.decode(String.self) ?? "public"
        let hasICU = try await session.rows("SELECT EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu')").first?.decode(Bool.self) ?? false
        // ASCII punctuation and symbols, Latin-1's, general punctuation, CJK and full-width punctuation.
        let separators = #"[\x21-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e\u00a1-\u00a9\u00ab-\u00b1\u00b4\u00b6-\u00b8\u00bb\u00bf\u00d7\u00f7\u2010-\u2027\u2030-\u205e\u3000-\u3003\u3008-\u3011\uff01-\uff0f]"#
        _ = try await session.rows("""
            CREATE FUNCTION codable_search_text(text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $body$ \
            SELECT lower(regexp_replace(\(schema).unaccent(\(SQLName.literal(schema + ".unaccent"))::regdictionary, $1), \(SQLName.literal(separators)), ' ', 'g')\
            \(hasICU ? " COLLATE \"und-x-icu\"" : "")) $body$
            """)
    }
}
#endif
