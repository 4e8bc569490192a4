#if Postgres
import Foundation
import PostgresNIO

/// What the server sends when an observed table changes, and the SQL that makes it do so.
///
/// Each observed table gets four statement-level triggers (insert, update, delete, truncate) that
/// call one function, `codablepostgres_notify()`. It sends, on the channel ``channel``, a JSON
/// payload per statement that changed rows:
///
/// ```json
/// {"x": "7731", "s": "public", "t": "Item", "e": "U", "n": [1, 2], "o": [1, 2]}
/// ```
///
/// `x` is the transaction's id (the notifications of one transaction share it), `s` and `t` the
/// table's schema and name (a listener takes only its own schema's: the same model tables in
/// another schema of the database, such as another tenant's, are not its business),
/// `e` the statement (`I`, `U`, `D`), `n` and `o` the ids of the new and old rows (from the
/// statement's transition tables). The transaction's last notification is its end marker,
/// `"e": "."` (see ``commitFunction(schema:)``). A statement that changed more than 1,000 rows, a payload that
/// would pass 7,900 bytes (NOTIFY's limit is 8,000) and `TRUNCATE` send `"e": "*"` without ids:
/// the table changed, read it again.
///
/// PostgreSQL delivers notifications only when their transaction commits, in commit order, to
/// every connection that listens: so observers see every client's commits (other app instances,
/// `psql`), never a rolled-back one. The triggers stay with the table (other app instances may be
/// observing it); a write to an observed table pays for its transition tables and one NOTIFY.
enum ChangeNotifications {
    /// The channel the triggers notify and the listening connection listens to.
    static let channel = Postgres.Database.changesChannel
    /// How many ids a statement's notification names at most.
    static let idLimit = 1_000

    /// The trigger names and the events they fire on, with the transition tables they see.
    static let triggers: [(name: String, event: String, referencing: String)] = [
        ("codablepostgres_notify_insert", "INSERT", "REFERENCING NEW TABLE AS new_rows"),
        ("codablepostgres_notify_update", "UPDATE", "REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows"),
        ("codablepostgres_notify_delete", "DELETE", "REFERENCING OLD TABLE AS old_rows"),
        ("codablepostgres_notify_truncate", "TRUNCATE", ""),
    ]

    /// The version of the functions' text: an installer replaces functions of another version
    /// only (replacing needs to own them; the same version is left alone).
    static let version = "codablepostgres notify v4"

    /// A trigger function as every one of ours is made: it runs as its owner with a fixed
    /// `search_path` (so writers of any role and `search_path`, `psql` or a migration, can write
    /// an observed table) and carries ``version``.
    static func triggerFunction(_ name: String, _ body: String) -> String {
        """
        CREATE OR REPLACE FUNCTION \(name)() RETURNS trigger LANGUAGE plpgsql
        SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $body$
        -- \(version)
        \(body)
        $body$
        """
    }

    /// The function the table triggers call; it names the marker table with its schema.
    static func function(schema: String) -> String {
        triggerFunction("codablepostgres_notify", """
        DECLARE
            tx text := txid_current()::text;
            new_ids json; old_ids json; new_count bigint := 0; old_count bigint := 0; payload text;
        BEGIN
            IF TG_OP IN ('INSERT', 'UPDATE') THEN
                EXECUTE format('SELECT count(*), json_agg(k) FROM (SELECT %I AS k FROM new_rows LIMIT \(idLimit + 1)) s', TG_ARGV[0])
                    INTO new_count, new_ids;
            END IF;
            IF TG_OP IN ('UPDATE', 'DELETE') THEN
                EXECUTE format('SELECT count(*), json_agg(k) FROM (SELECT %I AS k FROM old_rows LIMIT \(idLimit + 1)) s', TG_ARGV[0])
                    INTO old_count, old_ids;
            END IF;
            IF TG_OP <> 'TRUNCATE' AND new_count = 0 AND old_count = 0 THEN
                RETURN NULL;
            END IF;
            payload := json_build_object('x', tx, 's', TG_TABLE_SCHEMA, 't', TG_TABLE_NAME, 'e', left(TG_OP, 1), 'n', new_ids, 'o', old_ids)::text;
            IF TG_OP = 'TRUNCATE' OR new_count > \(idLimit) OR old_count > \(idLimit) OR octet_length(payload) > 7900 THEN
                payload := json_build_object('x', tx, 's', TG_TABLE_SCHEMA, 't', TG_TABLE_NAME, 'e', '*')::text;
            END IF;
            -- The transaction's first notifying statement queues its end marker (see commitFunction).
            IF current_setting('codablepostgres.marked', true) IS DISTINCT FROM tx THEN
                PERFORM set_config('codablepostgres.marked', tx, true);
                INSERT INTO \(SQLName.quoted(schema)).codablepostgres_commits VALUES (tx::bigint);
            END IF;
            PERFORM pg_notify('\(channel)', payload);
            RETURN NULL;
        END
        """)
    }

    /// The end of a transaction's notifications: a row of `codablepostgres_commits` (one per
    /// notifying transaction, inserted by its first statement) fires a deferred constraint
    /// trigger at commit, after every statement, which notifies `{"x": …, "t": "", "e": "."}` and
    /// deletes the row. So the listener knows when a transaction's batch is whole without
    /// waiting. (A `SET CONSTRAINTS ALL IMMEDIATE` fires it early: the listener then closes the
    /// rest of the transaction's group after a quiet period.)
    static let markerTable = "CREATE UNLOGGED TABLE IF NOT EXISTS codablepostgres_commits (x bigint PRIMARY KEY)"

    static func commitFunction(schema: String) -> String {
        triggerFunction("codablepostgres_commit", """
        BEGIN
            PERFORM pg_notify('\(channel)', json_build_object('x', NEW.x::text, 't', '', 'e', '.')::text);
            DELETE FROM \(SQLName.quoted(schema)).codablepostgres_commits WHERE x = NEW.x;
            RETURN NULL;
        END
        """)
    }

    static let commitTrigger = """
        CREATE CONSTRAINT TRIGGER codablepostgres_commit AFTER INSERT ON codablepostgres_commits \
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION codablepostgres_commit()
        """

    /// Makes `table` and every table its values are read from (``PostgresTable/graphTables``:
    /// link tables, which name rows by their owner's id, and related models' tables) notify.
    /// Returns whether it made any table's triggers (else they were there: made when the table was
    /// created, see ``createTriggersIfObserved(table:idColumn:on:)``, or by an earlier call).
    @discardableResult
    static func install(on table: PostgresTable, in database: Postgres.Database) async throws -> Bool {
        var made = try await install(table: table.schema.table, idColumn: table.id.name, model: table.schema.modelType, in: database)
        for relationship in table.schema.relationships {
            if relationship.isToMany, table.targets[relationship.name] != nil {
                made = try await install(table: relationship.linkTable, idColumn: "owner", model: table.schema.modelType, in: database) || made
            }
            if let target = table.targets[relationship.name] { made = try await install(on: target, in: database) || made }
        }
        return made
    }

    /// Creates the function (or brings it up to date) and the table's triggers when they are
    /// missing, in one transaction under an advisory lock, so that app instances doing it at
    /// once take turns. Whether it made the triggers.
    private static func install(table name: String, idColumn: String, model: Any.Type, in database: Postgres.Database) async throws -> Bool {
        guard !database.notifyingTables.withLock({ $0.contains(name) }) else { return false }
        let made = try await database.transaction { session in
            try await setUp(model: model, in: database, on: session)
            return try await createTriggers(table: name, idColumn: idColumn, on: session)
        }
        database.notifyingTables.withLock { _ = $0.insert(name) }
        return made
    }

    /// Sets up the schema for observation, if it is not: the functions, the marker table and its
    /// trigger (under the advisory lock, in `session`'s transaction); the listener follows the
    /// schema. An observer of a table that does not exist yet does this alone, so that the table
    /// is made observable when it is created (``createTriggersIfObserved(table:idColumn:on:)``).
    static func setUp(model: Any.Type, in database: Postgres.Database, on session: Postgres.Session) async throws {
        try await takeLock(on: session)
        guard let schema = try await session.rows("SELECT current_schema()::text").first?.decode(String.self) else {
            throw ModelError(.unexpectedResult, model, "the server named no current schema to install change notifications in")
        }
        database.listener.follow(schema: schema)
        _ = try await session.rows(markerTable)
        var version = PostgresBindings()
        version.append("%\(Self.version)%")
        for (name, sql) in [("codablepostgres_notify", function(schema: schema)), ("codablepostgres_commit", commitFunction(schema: schema))] {
            let current = try await session.integers("""
                SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace \
                WHERE n.nspname = current_schema() AND p.proname = '\(name)' AND p.prosrc LIKE $1
                """, version)
            if current.first == 0 { _ = try await session.rows(sql) }
        }
        let hasMarker = try await session.integers(
            "SELECT count(*) FROM pg_trigger WHERE tgrelid = to_regclass('codablepostgres_commits') AND tgname = 'codablepostgres_commit'")
        if hasMarker.first == 0 { _ = try await session.rows(commitTrigger) }
    }

    /// The table's four triggers, when they are missing; whether it made them.
    private static func createTriggers(table name: String, idColumn: String, on session: Postgres.Session) async throws -> Bool {
        let quotedTable = SQLName.quoted(name)
        var binds = PostgresBindings()
        binds.append(quotedTable)
        let names = triggers.map { "'\($0.name)'" }.joined(separator: ", ")
        let existing = try await session.integers(
            "SELECT count(*) FROM pg_trigger WHERE tgrelid = to_regclass($1) AND tgname IN (\(names))", binds)
        guard existing.first != Int64(triggers.count) else { return false }
        let id = SQLName.literal(idColumn)
        for trigger in triggers {
            _ = try await session.rows("DROP TRIGGER IF EXISTS \(trigger.name) ON \(quotedTable)")
            _ = try await session.rows("""
                CREATE TRIGGER \(trigger.name) AFTER \(trigger.event) ON \(quotedTable) \(trigger.referencing) \
                FOR EACH STATEMENT EXECUTE FUNCTION codablepostgres_notify(\(id))
                """)
        }
        return true
    }

    /// The transaction-scoped advisory lock under which the schema is set up for observation and
    /// triggers are made: instances doing it at once take turns.
    private static func takeLock(on session: Postgres.Session) async throws {
        var lock = PostgresBindings()
        lock.append(Int64(bitPattern: SQLName.stableHash("CodablePostgres change notifications")))
        _ = try await session.rows("SELECT pg_advisory_xact_lock($1)", lock)
    }

    /// In the transaction that creates a table (and its link tables): when the schema is set up
    /// for observation (the notify function is there: some instance observes, or observed, a model
    /// in it), the new table gets its triggers at once, so an observer that began before the table
    /// existed hears its first rows by id.
    static func createTriggersIfObserved(table name: String, idColumn: String, on session: Postgres.Session) async throws {
        // After a set-up in progress commits (it holds the same lock), or before it begins.
        try await takeLock(on: session)
        let observed = try await session.integers("""
            SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace \
            WHERE n.nspname = current_schema() AND p.proname = 'codablepostgres_notify'
            """)
        if observed.first ?? 0 > 0 { _ = try await createTriggers(table: name, idColumn: idColumn, on: session) }
    }

    /// One notification: what one statement of a committed transaction changed.
    struct Statement: Sendable {
        /// `I`, `U`, `D`, `*` (rows unknown), or `.` (the transaction's end marker).
        let kind: String
        /// The whole payload, for decoding the ids as the observer's id type.
        let payload: Data

        /// The ids named by the payload, as `ID`; `nil` when it names none (`*`) or they are not
        /// `ID`s.
        func ids<ID: Decodable & Hashable>(as type: ID.Type) -> (new: Set<ID>, old: Set<ID>)? {
            guard kind != "*", let ids = try? JSONDecoder().decode(IDs<ID>.self, from: payload) else { return nil }
            return (Set(ids.n ?? []), Set(ids.o ?? []))
        }
    }

    /// The parts of a payload that route it.
    struct Header: Decodable {
        let x: String
        /// The table's schema (absent from the end marker, and from functions before v4).
        let s: String?
        let t: String
        let e: String
    }

    private struct IDs<ID: Decodable>: Decodable {
        let n: [ID]?
        let o: [ID]?
    }

    /// What one committed transaction changed in one table.
    struct TableCommit: Sendable {
        let table: String
        let statements: [Statement]

        /// The batch of ids this commit makes: rows named by updates that kept their id are
        /// updated; an update that changed an id deletes the old and inserts the new.
        func batch<ID: Decodable & Hashable & Sendable>(as type: ID.Type) -> ChangeBatch<ID> {
            var batch = ChangeBatch<ID>(inserted: [], updated: [], deleted: [], isComplete: true)
            for statement in statements {
                guard let (new, old) = statement.ids(as: ID.self) else {
                    batch.isComplete = false
                    continue
                }
                switch statement.kind {
                case "I": batch.inserted.formUnion(new)
                case "D": batch.deleted.formUnion(old)
                default: batch.noteUpdate(old: old, new: new)
                }
            }
            return batch
        }

        /// Whether this commit may have changed the row with this id.
        func mayChange<ID: Decodable & Hashable>(id: ID) -> Bool {
            statements.contains { statement in
                guard let (new, old) = statement.ids(as: ID.self) else { return true }
                return new.contains(id) || old.contains(id)
            }
        }
    }
}
#endif

#if Postgres
extension Postgres.Transaction {
    /// Tells every listener (observers, sync's commit signals) at commit that `table` changed
    /// in a way its rows do not show (CodableSync's shares: who may read them changed). For a
    /// transaction that writes no observed table itself.
    package func announceChange(of table: String) async throws {
        try await session.announceChange(of: table)
    }
}
#endif
