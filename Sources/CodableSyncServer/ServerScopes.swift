#if Postgres
import CodablePostgres
import CodableSyncProtocol
import Foundation

/// Who may read and write which rows, decided in SQL on the server (never by loading rows into
/// Swift):
///
/// ```
/// codablesync_owners(tbl, id, account)            the account whose push created the row
/// codablesync_shares(tbl, id, account, writable)  a value shared with another account
/// codablesync_removals(version, account, tbl, id) rows that left an account's scope (revoked)
/// codablesync_audience(tbl, id, accounts)         who could read a row when it was deleted
/// ```
///
/// An account's scope is the rows it owns and the rows shared with it, with every row they link
/// (to-one columns and to-many link tables), transitively: sharing a list shares its items. A
/// row in the scope through a writable share, or owned, is writable. Rows no account owns (written
/// by server-side code) are in no account's scope.
struct ServerScopes: Sendable {
    let models: [SyncedModel]

    /// The tables, the readers function and the triggers that record a deleted row's audience.
    /// In ``ServerLog/install(_:)``'s transaction, under its lock.
    func install(_ tx: Postgres.Transaction) async throws {
        try await tx.execute("CREATE TABLE IF NOT EXISTS codablesync_accounts (account text PRIMARY KEY, created timestamptz NOT NULL DEFAULT now())")
        try await tx.execute("""
            CREATE TABLE IF NOT EXISTS codablesync_tokens (
                hash text PRIMARY KEY, account text NOT NULL REFERENCES codablesync_accounts ON DELETE CASCADE, expires timestamptz,
                label text, created timestamptz NOT NULL DEFAULT now(), last_used timestamptz)
            """)
        // A token's public id is left(hash, 12) (SyncServer+Tokens.swift); tables from before labels.
        try await tx.execute("ALTER TABLE codablesync_tokens ADD COLUMN IF NOT EXISTS label text")
        try await tx.execute("ALTER TABLE codablesync_tokens ADD COLUMN IF NOT EXISTS created timestamptz NOT NULL DEFAULT now()")
        try await tx.execute("ALTER TABLE codablesync_tokens ADD COLUMN IF NOT EXISTS last_used timestamptz")
        try await tx.execute("CREATE TABLE IF NOT EXISTS codablesync_owners (tbl text, id text, account text NOT NULL, PRIMARY KEY (tbl, id))")
        try await tx.execute("CREATE INDEX IF NOT EXISTS codablesync_owners_account ON codablesync_owners (account)")
        try await tx.execute("""
            CREATE TABLE IF NOT EXISTS codablesync_shares (
                tbl text, id text, account text, writable boolean NOT NULL, PRIMARY KEY (tbl, id, account))
            """)
        try await tx.execute("CREATE INDEX IF NOT EXISTS codablesync_shares_account ON codablesync_shares (account)")
        try await tx.execute("""
            CREATE TABLE IF NOT EXISTS codablesync_removals (
                version bigint PRIMARY KEY, account text NOT NULL, tbl text NOT NULL, id text NOT NULL)
            """)
        try await tx.execute("CREATE INDEX IF NOT EXISTS codablesync_removals_account ON codablesync_removals (account, version)")
        try await tx.execute("CREATE TABLE IF NOT EXISTS codablesync_audience (tbl text, id text, accounts text[] NOT NULL, PRIMARY KEY (tbl, id))")
        // The account a device's pushes are from: another account cannot push as it.
        try await tx.execute("ALTER TABLE codablesync_devices ADD COLUMN IF NOT EXISTS account text")
        try await tx.execute("""
            CREATE OR REPLACE FUNCTION codablesync_readers(row_table text, row_id text) RETURNS text[] LANGUAGE sql STABLE AS $body$
            \(readersSQL)
            $body$
            """)
        // Who could read a row, recorded before it goes and before a link to it goes (a device
        // deletes an item and its list's link in one push, in either order): its tombstone reaches
        // them and no one else. Only once some row has an owner.
        try await tx.execute("""
            CREATE OR REPLACE FUNCTION codablesync_audience() RETURNS trigger LANGUAGE plpgsql AS $body$
            DECLARE
                row_table text := TG_TABLE_NAME;
                row_id text;
            BEGIN
                IF NOT EXISTS (SELECT 1 FROM codablesync_owners LIMIT 1) THEN RETURN OLD; END IF;
                IF TG_NARGS > 0 THEN
                    row_table := TG_ARGV[0];
                    row_id := OLD.target::text;
                ELSE
                    row_id := OLD.id::text;
                END IF;
                INSERT INTO codablesync_audience AS a (tbl, id, accounts)
                    VALUES (row_table, row_id, coalesce(codablesync_readers(row_table, row_id), '{}'))
                    ON CONFLICT (tbl, id) DO UPDATE SET accounts = ARRAY(SELECT DISTINCT unnest(a.accounts || EXCLUDED.accounts));
                RETURN OLD;
            END
            $body$
            """)
        for model in models {
            // The backward walks look rows up by their to-one columns (link tables have their
            // index on `target`). Made only when missing: CREATE INDEX IF NOT EXISTS locks the table.
            for edge in model.edges {
                guard case .column(let column) = edge.storage else { continue }
                let index = ServerLog.name("codablesync_\(model.table)_\(column)")
                let exists = try await tx.textRows("SELECT to_regclass($1)::text", [SQLName.quoted(index)]).first?.first ?? nil
                if exists == nil {
                    try await tx.execute("CREATE INDEX IF NOT EXISTS \(SQLName.quoted(index)) ON \(SQLName.quoted(model.table)) (\(SQLName.quoted(column)))")
                }
            }
            try await tx.execute("""
                CREATE OR REPLACE TRIGGER \(SQLName.quoted(ServerLog.name("codablesync_\(model.table)_audience"))) BEFORE DELETE
                ON \(SQLName.quoted(model.table)) FOR EACH ROW EXECUTE FUNCTION codablesync_audience()
                """)
            for edge in model.edges {
                guard case .linkTable(let link) = edge.storage else { continue }
                try await tx.execute("""
                    CREATE OR REPLACE TRIGGER \(SQLName.quoted(ServerLog.name("codablesync_\(link)_audience"))) BEFORE DELETE
                    ON \(SQLName.quoted(link)) FOR EACH ROW EXECUTE FUNCTION codablesync_audience(\(Self.literal(edge.target)))
                    """)
            }
        }
    }

    private static func literal(_ text: String) -> String { StoredValue.text(text).description }

    /// `id` (a text column or parameter) as `table`'s id type, only for rows of `table`: the cast
    /// never meets another table's id.
    private func typedID(_ id: String, ofRowIn tableColumn: String, table: SyncedModel) -> String {
        "(CASE WHEN \(tableColumn) = \(Self.literal(table.table)) THEN \(id) END)::\(table.serverIDType)"
    }

    /// The rows the rows of `scope(tbl, id, writable)` link, one step: the body of a lateral join.
    /// (Ids are compared in the "C" collation everywhere: text id columns have it, and a
    /// recursive query's terms must agree.)
    private var forwardStep: String? {
        var parts: [String] = []
        for model in models {
            for edge in model.edges {
                let owner = typedID("s.id", ofRowIn: "s.tbl", table: model)
                switch edge.storage {
                case .column(let column):
                    let quoted = SQLName.quoted(column)
                    parts.append("""
                        SELECT \(Self.literal(edge.target))::text AS tbl, t.\(quoted)::text COLLATE "C" AS id FROM \(SQLName.quoted(model.table)) t \
                        WHERE t.\(ModelReflection.quotedID) = \(owner) AND t.\(quoted) IS NOT NULL
                        """)
                case .linkTable(let link):
                    parts.append("""
                        SELECT \(Self.literal(edge.target))::text AS tbl, l."target"::text COLLATE "C" AS id FROM \(SQLName.quoted(link)) l \
                        WHERE l."owner" = \(owner)
                        """)
                }
            }
        }
        return parts.isEmpty ? nil : parts.joined(separator: "\nUNION ALL\n")
    }

    /// The rows that link a row of `up(tbl, id)`, one step: the body of a lateral join.
    private var backwardStep: String? {
        var parts: [String] = []
        for model in models {
            for edge in model.edges {
                guard let target = models.first(where: { $0.table == edge.target }) else { continue }
                let linked = typedID("u.id", ofRowIn: "u.tbl", table: target)
                switch edge.storage {
                case .column(let column):
                    parts.append("""
                        SELECT \(Self.literal(model.table))::text AS tbl, t.\(ModelReflection.quotedID)::text COLLATE "C" AS id FROM \(SQLName.quoted(model.table)) t \
                        WHERE t.\(SQLName.quoted(column)) = \(linked)
                        """)
                case .linkTable(let link):
                    parts.append("""
                        SELECT \(Self.literal(model.table))::text AS tbl, l."owner"::text COLLATE "C" AS id FROM \(SQLName.quoted(link)) l \
                        WHERE l."target" = \(linked)
                        """)
                }
            }
        }
        return parts.isEmpty ? nil : parts.joined(separator: "\nUNION ALL\n")
    }

    /// `WITH RECURSIVE scope(tbl, id, writable) AS (…)`: the scope of the account in parameter
    /// `$account` (a row may appear twice, read-only and writable). Other common table
    /// expressions follow with a comma.
    func scope(account: Int) -> String {
        let roots = """
            SELECT tbl, id COLLATE "C", true AS writable FROM codablesync_owners WHERE account = $\(account)
            UNION ALL SELECT tbl, id COLLATE "C", writable FROM codablesync_shares WHERE account = $\(account)
            """
        guard let step = forwardStep else { return "WITH RECURSIVE scope(tbl, id, writable) AS (\(roots))" }
        return """
            WITH RECURSIVE scope(tbl, id, writable) AS (
                \(roots)
                UNION
                SELECT e.tbl, e.id, s.writable FROM scope s CROSS JOIN LATERAL (\(step)) e
            )
            """
    }

    /// The accounts that can read the row `row_table`, `row_id` (the readers function's body).
    /// The owned and shared rows are found by their key (`COLLATE "default"`: the walk's "C"
    /// ids would compare in another collation than the key's, and scan them all; equality is
    /// the same in both).
    private var readersSQL: String {
        let up = backwardStep.map { step in
            "UNION SELECT p.tbl, p.id FROM up u CROSS JOIN LATERAL (\(step)) p"
        } ?? ""
        return """
            WITH RECURSIVE up(tbl, id) AS (SELECT row_table, row_id COLLATE "C" \(up))
            SELECT array_agg(DISTINCT a.account) FROM (
                SELECT o.account FROM codablesync_owners o JOIN up ON o.tbl = up.tbl AND o.id = (up.id COLLATE "default")
                UNION ALL SELECT s.account FROM codablesync_shares s JOIN up ON s.tbl = up.tbl AND s.id = (up.id COLLATE "default")
            ) a
            """
    }

    /// What `account` may do with each row, and each row's owner.
    struct Access {
        /// `true`: writable; `false`: readable only; absent: outside the account's scope.
        var inScope: [SyncedModel.Row: Bool] = [:]
        var owners: [SyncedModel.Row: String] = [:]
    }

    /// `account`'s access to `rows` (server ids), in `tx`: from each row up through the rows
    /// that link it to an owned or shared row of the account (the scope walked backwards, so
    /// the cost is the rows', not the account's size).
    func access(_ tx: Postgres.Transaction, account: String, rows: [(table: String, id: String)]) async throws -> Access {
        var access = Access()
        guard !rows.isEmpty else { return access }
        let up = backwardStep.map { "UNION SELECT u.ctbl, u.cid, p.tbl, p.id FROM up u CROSS JOIN LATERAL (\($0)) p" } ?? ""
        let answer = try await tx.textRows("""
            WITH RECURSIVE up(ctbl, cid, tbl, id) AS (
                SELECT c.tbl, c.id COLLATE "C", c.tbl, c.id COLLATE "C" FROM unnest($2::text[], $3::text[]) AS c(tbl, id)
                \(up)
            ), reached AS (
                SELECT u.ctbl, u.cid, bool_or(r.writable) AS writable FROM up u JOIN (
                    SELECT tbl, id COLLATE "C" AS id, true AS writable FROM codablesync_owners WHERE account = $1
                    UNION ALL SELECT tbl, id COLLATE "C", writable FROM codablesync_shares WHERE account = $1
                ) r ON r.tbl = u.tbl AND r.id = u.id
                GROUP BY u.ctbl, u.cid
            )
            SELECT c.tbl, c.id, a.writable::text, o.account FROM unnest($2::text[], $3::text[]) AS c(tbl, id)
            LEFT JOIN reached a ON a.ctbl = c.tbl AND a.cid = c.id
            LEFT JOIN codablesync_owners o ON o.tbl = c.tbl AND o.id = c.id
            """, [account, ServerLog.arrayLiteral(rows.map(\.table)), ServerLog.arrayLiteral(rows.map(\.id))])
        for row in answer {
            guard row.count == 4, let table = row[0], let id = row[1] else { continue }
            let key = SyncedModel.Row(table: table, id: id)
            if let writable = row[2] { access.inScope[key] = writable == "true" }
            if let owner = row[3] { access.owners[key] = owner }
        }
        return access
    }

    /// Of these rows (server ids) of `model`, those the server has.
    func existing(_ tx: Postgres.Transaction, _ model: SyncedModel, ids: [String]) async throws -> Set<String> {
        guard !ids.isEmpty else { return [] }
        return Set(try await tx.textRows("""
            SELECT x FROM unnest($1::text[]) AS x WHERE EXISTS (
                SELECT 1 FROM \(SQLName.quoted(model.table)) WHERE \(ModelReflection.quotedID) = x::\(model.serverIDType))
            """, [ServerLog.arrayLiteral(ids)]).compactMap { $0.first ?? nil })
    }

    /// Makes `account` the owner of these rows (server ids) that have none.
    func claim(_ tx: Postgres.Transaction, account: String, rows: [SyncedModel.Row]) async throws {
        guard !rows.isEmpty else { return }
        try await tx.execute("""
            INSERT INTO codablesync_owners (tbl, id, account) SELECT t, i, $3 FROM unnest($1::text[], $2::text[]) AS u(t, i)
            ON CONFLICT (tbl, id) DO NOTHING
            """, [ServerLog.arrayLiteral(rows.map(\.table)), ServerLog.arrayLiteral(rows.map(\.id)), account])
    }

    /// The rows (server ids) in `account`'s scope.
    func rows(_ tx: Postgres.Transaction, inScopeOf account: String) async throws -> Set<SyncedModel.Row> {
        Set(try await tx.textRows("\(scope(account: 1)) SELECT DISTINCT tbl, id FROM scope", [account]).compactMap { row in
            guard row.count == 2, let table = row[0], let id = row[1] else { return nil }
            return SyncedModel.Row(table: table, id: id)
        })
    }
}
#endif
