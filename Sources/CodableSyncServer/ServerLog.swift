#if Postgres
import CodablePostgres
import CodableSyncProtocol
import Foundation

/// The server's side, plain SQL on PostgreSQL that an app's own API can sit in front of: a
/// change log with a version per changed row, filled by triggers on the synced tables (whoever
/// writes them), the last push applied per device (its last outbox entry and its token), and
/// every push ever applied, by token, with its answer.
///
/// ```
/// codablesync_changes(version bigserial PRIMARY KEY, tbl, id, deleted, origin)
/// codablesync_devices(device PRIMARY KEY, pushed, token UNIQUE)
/// codablesync_pushes(token PRIMARY KEY, device, upto, answer)
/// ```
///
/// The log keeps one entry per row, its latest change (a delete is a tombstone): a device that
/// pulls everything after its version gets every row that changed since, once.
///
/// Versions are in commit order, so a pull never passes over a version that commits later, and
/// no lock is held while a transaction works: an entry is written with a provisional version
/// (`pending`), and at commit a deferred trigger (`codablesync_order`) takes the order lock and
/// numbers the transaction's entries anew, after every version already committed. The lock is
/// held from there to the commit's end only: pushes of different accounts (and server-side
/// writers) do their work in parallel, and queue only for their commits' last step.
struct ServerLog: Sendable {
    let db: Postgres.Database

    /// (The log's functions run with `enable_seqscan` off: a log that grew since its statistics
    /// were last taken looks empty to the planner, which would scan it whole for each row.)
    ///
    /// The advisory lock that orders the log's versions: taken by each writing transaction at its
    /// commit (``install(_:)``'s `codablesync_order`), and for a whole transaction by the few
    /// that draw versions themselves (shares, revokes, compaction). Any constant of our own.
    static let lock = "7261901"
    /// The advisory lock of the accounts' scopes: shared by every push for its transaction (its
    /// authorization holds until it commits), exclusive for a change of scopes (a share, a
    /// revoke, an accepted offer), which waits for the pushes under way. Taken before ``lock``.
    static let scopeLock = "7261903"
    /// The class of the advisory locks of one device and of one push token (with the text's hash):
    /// a device's pushes are applied one at a time, pushes of different devices in parallel.
    static let deviceLockClass = "7261902"

    /// Takes the scope lock and the order lock for the rest of `tx`: for a change of scopes.
    static func lockScopes(_ tx: Postgres.Transaction) async throws {
        _ = try await tx.textRows("SELECT pg_advisory_xact_lock(\(scopeLock))::text, pg_advisory_xact_lock(\(lock))::text", [])
    }

    /// One changed row in the log.
    struct Change: Sendable {
        let version: Int64
        let table: String
        let id: String
        let deleted: Bool
        var kind = Kind.change

        enum Kind: String {
            /// The row's latest change.
            case change
            /// A row that left the pulling account's scope (a revoked share): a delete on its devices.
            case removal
            /// Not a row: the log's newest version, where a scoped pull that has seen everything ends.
            case top
        }
        var isRemoval: Bool { kind == .removal }
        var isTop: Bool { kind == .top }
    }

    /// Creates the log, the device table, the trigger function and each model's table and
    /// trigger. Idempotent, and safe while other devices do the same (under the lock).
    func install(_ models: [SyncedModel]) async throws {
        for model in models { try await model.prepareServer(db) }
        try await db.inTransaction { tx in
            _ = try await tx.textRows("SELECT pg_advisory_xact_lock(\(Self.lock))::text", [])
            try await tx.execute("""
                CREATE TABLE IF NOT EXISTS codablesync_changes (
                    version bigserial PRIMARY KEY, tbl text NOT NULL, id text NOT NULL,
                    deleted boolean NOT NULL, origin text)
                """)
            try await tx.execute("CREATE UNIQUE INDEX IF NOT EXISTS codablesync_changes_row ON codablesync_changes (tbl, id)")
            // Entries whose versions are provisional until their transaction commits (rows logged
            // before this column: final). Found at commit by their versions (the primary key),
            // not by an index of `pending`, whose dead entries every later commit would walk.
            try await tx.execute("ALTER TABLE codablesync_changes ADD COLUMN IF NOT EXISTS pending boolean")
            try await tx.execute("ALTER TABLE codablesync_changes ALTER COLUMN pending SET DEFAULT true")
            try await tx.execute("DROP INDEX IF EXISTS codablesync_changes_pending")
            // The device whose push wrote the row as it is stored (its pulls leave the entry out:
            // it has that value); NULL for any other change, side effects of a push included.
            try await tx.execute("ALTER TABLE codablesync_changes ADD COLUMN IF NOT EXISTS pushed_by text")
            // When each change was logged, for the tombstone horizon (logs made before it: now).
            try await tx.execute("ALTER TABLE codablesync_changes ADD COLUMN IF NOT EXISTS at timestamptz NOT NULL DEFAULT now()")
            // The server's own id (its part of the epoch) and the tombstone horizon.
            try await tx.execute("CREATE TABLE IF NOT EXISTS codablesync_meta (key text PRIMARY KEY, value text NOT NULL)")
            try await tx.execute("""
                INSERT INTO codablesync_meta (key, value) VALUES ('epoch', $1), ('horizon', '0') ON CONFLICT (key) DO NOTHING
                """, [UUID().uuidString])
            try await tx.execute("CREATE TABLE IF NOT EXISTS codablesync_devices (device text PRIMARY KEY, pushed bigint NOT NULL, token text)")
            // Servers set up before pushes had tokens. (Not `ADD COLUMN IF NOT EXISTS … UNIQUE`,
            // which adds another index each time on some PostgreSQL versions.)
            try await tx.execute("ALTER TABLE codablesync_devices ADD COLUMN IF NOT EXISTS token text")
            try await tx.execute("CREATE UNIQUE INDEX IF NOT EXISTS codablesync_devices_token ON codablesync_devices (token)")
            // Every push applied, for good: one sent again at any time, in any order (a client's
            // retry, a proxy's), is answered as it was the first time and changes nothing.
            // (Servers set up before this table know their devices' last pushes, without answers.)
            try await tx.execute("""
                CREATE TABLE IF NOT EXISTS codablesync_pushes (
                    token text PRIMARY KEY, device text NOT NULL, upto bigint NOT NULL, answer text)
                """)
            try await tx.execute("ALTER TABLE codablesync_pushes ADD COLUMN IF NOT EXISTS at timestamptz NOT NULL DEFAULT now()")
            try await tx.execute("""
                INSERT INTO codablesync_pushes (token, device, upto)
                SELECT token, device, pushed FROM codablesync_devices WHERE token IS NOT NULL
                ON CONFLICT (token) DO NOTHING
                """)
            try await tx.execute("""
                CREATE OR REPLACE FUNCTION codablesync_log() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $body$
                DECLARE
                    row_table text := TG_TABLE_NAME;
                    row_id text;
                    is_delete boolean := TG_OP = 'DELETE';
                BEGIN
                    IF TG_NARGS > 0 THEN
                        -- A link table of a to-many relationship: the change is its owner's (a
                        -- pull reads the owner as it is now; gone, it is a delete).
                        row_table := TG_ARGV[0];
                        is_delete := false;
                        IF TG_OP = 'DELETE' THEN row_id := OLD.owner::text; ELSE row_id := NEW.owner::text; END IF;
                    ELSIF TG_OP = 'DELETE' THEN
                        row_id := OLD.id::text;
                    ELSE
                        row_id := NEW.id::text;
                    END IF;
                    DELETE FROM codablesync_changes WHERE tbl = row_table AND id = row_id;
                    INSERT INTO codablesync_changes (tbl, id, deleted, origin)
                        VALUES (row_table, row_id, is_delete, nullif(current_setting('codablesync.origin', true), ''));
                    RETURN NULL;
                END
                $body$
                """)
            // At commit, the transaction's entries get their versions, in commit order: under the
            // order lock, held to the commit's end, after every version committed before. Fired
            // per entry, deferred, in the order they were written, so in the order of their
            // provisional versions: the first whose entry is still pending (one probe of the
            // primary key) numbers it and every later pending one (a range of the primary key:
            // this transaction's, and others' not committed, which it cannot see); the others
            // find theirs numbered already.
            try await tx.execute("""
                CREATE OR REPLACE FUNCTION codablesync_order() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $body$
                BEGIN
                    IF EXISTS (SELECT 1 FROM codablesync_changes WHERE version = NEW.version AND pending) THEN
                        PERFORM pg_advisory_xact_lock(\(Self.lock));
                        UPDATE codablesync_changes SET version = nextval(pg_get_serial_sequence('codablesync_changes', 'version')), pending = NULL
                        WHERE version >= NEW.version AND pending;
                    END IF;
                    RETURN NULL;
                END
                $body$
                """)
            // A push's rows stored as sent, marked by their (tbl, id) index.
            try await tx.execute("""
                CREATE OR REPLACE FUNCTION codablesync_mark_pushed(row_table text, row_ids text[], device text) RETURNS void
                LANGUAGE sql SET enable_seqscan = off AS $body$
                    UPDATE codablesync_changes SET pushed_by = device WHERE tbl = row_table AND id = ANY(row_ids) AND origin = device
                $body$
                """)
            if try await tx.textRows("SELECT 1::text FROM pg_trigger WHERE tgname = 'codablesync_order' AND tgrelid = 'codablesync_changes'::regclass", []).isEmpty {
                try await tx.execute("""
                    CREATE CONSTRAINT TRIGGER codablesync_order AFTER INSERT ON codablesync_changes
                    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION codablesync_order()
                    """)
            }
            // Servers before commit-ordered versions took the lock for a whole statement on a
            // synced table (`codablesync_lock()`): those triggers go.
            let statementLocks = try await tx.textRows(
                "SELECT tgname, tgrelid::regclass::text FROM pg_trigger WHERE tgfoid = to_regproc('codablesync_lock')", [])
            for trigger in statementLocks where trigger.count == 2 {
                guard let name = trigger[0], let table = trigger[1] else { continue }
                try await tx.execute("DROP TRIGGER IF EXISTS \(SQLName.quoted(name)) ON \(table)")
            }
            try await tx.execute("DROP FUNCTION IF EXISTS codablesync_lock()")
            for model in models {
                let table = SQLName.quoted(model.table)
                let literal = StoredValue.text(model.table).description
                let logTrigger = Self.name("codablesync_\(model.table)")
                // Rows written before the table was synced are logged once, as changed now.
                try await tx.execute("""
                    INSERT INTO codablesync_changes (tbl, id, deleted)
                    SELECT \(literal), \(ModelReflection.quotedID)::text, false FROM \(table)
                    WHERE NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = \(StoredValue.text(logTrigger).description)
                                      AND tgrelid = \(StoredValue.text(table).description)::regclass)
                    ON CONFLICT (tbl, id) DO NOTHING
                    """)
                // An update that changes nothing (every save is an upsert) is not logged.
                try await tx.execute("""
                    CREATE OR REPLACE TRIGGER \(SQLName.quoted(logTrigger)) AFTER INSERT OR DELETE ON \(table)
                    FOR EACH ROW EXECUTE FUNCTION codablesync_log()
                    """)
                try await tx.execute("""
                    CREATE OR REPLACE TRIGGER \(SQLName.quoted(Self.name("codablesync_\(model.table)_update"))) AFTER UPDATE ON \(table)
                    FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION codablesync_log()
                    """)
                for target in model.links {
                    try await tx.execute("""
                        CREATE OR REPLACE TRIGGER \(SQLName.quoted(Self.name("codablesync_\(target)"))) AFTER INSERT OR UPDATE OR DELETE
                        ON \(SQLName.quoted(target)) FOR EACH ROW EXECUTE FUNCTION codablesync_log(\(literal))
                        """)
                }
            }
            try await ServerScopes(models: models).install(tx)
        }
    }

    /// The changes after `version`, oldest first, at most `limit`. (Ordered by the column, not by
    /// the selected text: `ORDER BY version` would name the output column, and sort "10" before
    /// "9".)
    ///
    /// For an `account`, only the rows of its scope (``ServerScopes``), the deletes of rows it
    /// could read when they went, and the removals of rows that left its scope, in one order.
    /// An answer may end at a later version than its last change: the log's newest version, or
    /// the horizon when that is newer (``Change/isTop``, last, when fewer than `limit` changes
    /// are picked), read in the same snapshot, so that the device does not scan the changes left
    /// out again, and does not end below the horizon.
    ///
    /// `version` and `limit` come from a request: below 0 they read as 0, and a limit as 1; no
    /// arithmetic on them can overflow. Read in `db`: a pull's transaction, so that the log, the
    /// epoch and the values are of one snapshot.
    func changes(
        after version: Int64, limit: Int, scoped: (scopes: ServerScopes, account: String)? = nil, excludingOrigin device: String? = nil,
        in db: (any Postgres.Queryable)? = nil
    ) async throws -> [Change] {
        let db = db ?? self.db
        let version = max(version, 0), limit = max(limit, 1)
        var arguments: [String?] = [String(version), String(limit)]
        func parameter(_ value: String) -> String {
            arguments.append(value)
            return "$\(arguments.count)"
        }
        // A device's own pushes (the rows stored as it pushed them) do not go back to it.
        let others = device.map { " AND c.pushed_by IS DISTINCT FROM \(parameter($0))" } ?? ""
        var prefix = "WITH"
        var entries = "SELECT c.version, c.tbl, c.id, c.deleted, 'change' AS kind FROM codablesync_changes c WHERE c.version > $1::bigint\(others)"
        if let (scopes, account) = scoped {
            // A small scope (a user's rows, few against the log's entries after `version`) is
            // computed, and looked up in the log row by row (its index on tbl, id). A scope about
            // as large as those entries (a new device of a big account) is not computed at all:
            // the log is read in version order, each entry asked whether the account can read
            // its row (codablesync_readers, a walk back to the owned and shared rows), until the
            // page is full; so a page costs its own entries, not the account's whole scope.
            let newest = try await db.textRows("SELECT coalesce(max(version), 0)::text FROM codablesync_changes", [])
                .first?.first.flatMap { $0.flatMap { Int64($0) } } ?? 0
            // Roots counted up to what decides (both at least 0: no overflow).
            let cap = (newest - min(version, newest)) / 8 + 1
            let roots = try await db.textRows("""
                SELECT ((SELECT count(*) FROM (SELECT 1 FROM codablesync_owners WHERE account = $1 LIMIT $2::bigint) o)
                        + (SELECT count(*) FROM (SELECT 1 FROM codablesync_shares WHERE account = $1 LIMIT $2::bigint) s))::text
                """, [account, String(cap)]).first?.first.flatMap { $0.flatMap { Int64($0) } } ?? 0
            let account = parameter(account)
            if roots < cap {
                prefix = scopes.scope(account: arguments.count) + ", in_scope AS (SELECT DISTINCT tbl, id FROM scope),"
                entries = """
                    SELECT c.version, c.tbl, c.id, c.deleted, 'change' AS kind FROM in_scope s CROSS JOIN LATERAL (
                        SELECT version, tbl, id, deleted FROM codablesync_changes c
                        WHERE c.tbl = s.tbl AND c.id = (s.id COLLATE "default") AND c.version > $1::bigint\(others)) c
                    UNION
                    SELECT c.version, c.tbl, c.id, c.deleted, 'change' FROM codablesync_changes c
                    JOIN codablesync_audience a ON a.tbl = c.tbl AND a.id = c.id
                    WHERE c.version > $1::bigint AND c.deleted AND \(account) = ANY(a.accounts)\(others)
                    UNION ALL
                    SELECT r.version, r.tbl, r.id, true, 'removal' FROM codablesync_removals r
                    WHERE r.account = \(account) AND r.version > $1::bigint AND NOT EXISTS (SELECT 1 FROM in_scope s WHERE s.tbl = r.tbl AND s.id = r.id)
                    """
            } else {
                // One ordered scan of the log (its primary key) and one of the account's
                // removals, each stopped by the page's LIMIT (a LIMIT over both would sort them
                // whole), then merged. A deleted row's audience is looked up by its key.
                entries = """
                    (SELECT c.version, c.tbl, c.id, c.deleted, 'change' AS kind FROM codablesync_changes c
                     WHERE c.version > $1::bigint\(others)
                       AND (\(account) = ANY(codablesync_readers(c.tbl, c.id))
                            OR (c.deleted AND coalesce((SELECT \(account) = ANY(a.accounts) FROM codablesync_audience a WHERE a.tbl = c.tbl AND a.id = c.id), false)))
                     ORDER BY c.version LIMIT $2::int)
                    UNION ALL
                    (SELECT r.version, r.tbl, r.id, true, 'removal' FROM codablesync_removals r
                     WHERE r.account = \(account) AND r.version > $1::bigint
                       AND NOT coalesce(\(account) = ANY(codablesync_readers(r.tbl, r.id)), false)
                     ORDER BY r.version LIMIT $2::int)
                    """
            }
        }
        let rows = try await db.textRows("""
            \(prefix) picked AS (
                SELECT x.version, x.tbl, x.id, x.deleted, x.kind FROM (\(entries)) x ORDER BY x.version LIMIT $2::int)
            SELECT version::text, tbl, id, deleted::text, kind FROM (
                SELECT version, tbl, id, deleted, kind, 0 AS part FROM picked
                UNION ALL
                -- The horizon too: when the newest entries were tombstones a compaction forgot,
                -- an answer that saw the whole log still ends at or past it (a device ending
                -- below it would take itself for one that must start over).
                SELECT greatest((SELECT max(version) FROM codablesync_changes), (SELECT max(version) FROM codablesync_removals),
                                (SELECT value::bigint FROM codablesync_meta WHERE key = 'horizon')),
                       '', '', false, 'top', 1
                WHERE (SELECT count(*) FROM picked) < $2::int
            ) y WHERE y.version IS NOT NULL ORDER BY y.part, y.version
            """, arguments)
        return try rows.map { row in
            guard row.count == 5, let version = row[0].flatMap({ Int64($0) }), let table = row[1], let id = row[2],
                  let deleted = row[3] else {
                throw SyncError(.corruptState, "a row of codablesync_changes is not (version, tbl, id, deleted)")
            }
            return Change(version: version, table: table, id: id, deleted: deleted == "true", kind: row[4].flatMap(Change.Kind.init) ?? .change)
        }
    }

    /// Where a push starts, decided in its transaction: see ``beginPush(_:_:upTo:)``.
    struct PushStart {
        /// The push was applied before (its token is known): its first answer, to give again
        /// (with the rows' values as they are now); nothing of it is applied again.
        var answer: StoredAnswer?
        /// Entries up to this one were applied by an earlier send of the same push.
        let previous: Int64
        /// The id the push's changes are the device's under (a copy's new id).
        let device: String
        /// Whether ``device`` is new: the pushing file is a copy of another device's.
        let isNewDevice: Bool
    }

    /// In a push's transaction, before anything is written: takes the lock, records the push
    /// (up to outbox entry `seq`) under its token, and marks the writes as the device's.
    ///
    /// - The token is one of a push applied before: the same push sent again, at any time and in
    ///   any order (its answer was lost; a client or a proxy retried). Nothing of it is applied
    ///   again (others may have written since, and later pushes of the device with them), and its
    ///   first answer is given again (``PushStart/answer``).
    /// - The device's last recorded push is the one it says was answered (or it has none): a new
    ///   push.
    /// - Otherwise the server knows a push of this device id that the device does not: the file
    ///   is a copy (or a restored backup) of another device's. Its changes are all applied, as a
    ///   new device's, which the answer names; unless the push it says was answered is one the
    ///   ledger no longer keeps (older than the retention, ``compact(deletedBefore:)``):
    ///   `startOverNeeded`, and the device starts over under a new id.
    ///
    /// With an `account`, a device id or push token another account used is refused
    /// (`unauthorized`) before anything is read or written.
    func beginPush(_ tx: Postgres.Transaction, _ push: SyncPush, upTo seq: Int64, account: String? = nil) async throws -> PushStart {
        // The scopes stay as they are until this push commits (shared: other pushes go on), and
        // this device's pushes (and this token's) wait for each other; both in one order, the
        // scope lock first, then the two keys by value, so that no two pushes wait for each other.
        _ = try await tx.textRows("""
            SELECT pg_advisory_xact_lock_shared(\(Self.scopeLock))::text,
                   (SELECT count(pg_advisory_xact_lock(\(Self.deviceLockClass), k)::text) FROM (
                       SELECT DISTINCT k FROM unnest(ARRAY[hashtext('device ' || $1), hashtext('token ' || $2)]) AS u(k) ORDER BY k) keys)::text
            """, [push.device, push.token])
        if let account {
            let owners = try await tx.textRows("""
                SELECT d.account FROM codablesync_devices d WHERE d.device = $1 OR d.token = $2
                UNION ALL SELECT d.account FROM codablesync_pushes p JOIN codablesync_devices d ON d.device = p.device WHERE p.token = $2
                """, [push.device, push.token])
            // A device recorded before accounts (no account yet) becomes the first one's to push.
            if owners.contains(where: { row in row.first.flatMap { $0 }.map { $0 != account } ?? false }) {
                throw SyncError(.unauthorized, "device \(push.device) or push \(push.token) belongs to another account than \(account)")
            }
        }
        if let applied = try await tx.textRows(
            "SELECT device, answer FROM codablesync_pushes WHERE token = $1", [push.token]).first,
           applied.count == 2, let device = applied[0] {
            let answer: StoredAnswer
            if let stored = applied[1] {
                do {
                    answer = try StoredAnswer(text: stored)
                } catch {
                    throw SyncError(.corruptState, "the answer codablesync_pushes keeps for push \(push.token) is not a push's answer: \(error)")
                }
            } else {
                // Applied before answers were kept: only whether the device became a copy is known.
                answer = StoredAnswer(SyncPushResult(device: device == push.device ? nil : device))
            }
            return PushStart(answer: answer, previous: .max, device: device, isNewDevice: false)
        }
        var start: PushStart
        if let sent = try await tx.textRows(
            "SELECT device, pushed::text FROM codablesync_devices WHERE token = $1", [push.token]).first,
           sent.count == 2, let device = sent[0], let pushed = sent[1].flatMap({ Int64($0) }) {
            start = PushStart(previous: pushed, device: device, isNewDevice: device != push.device)
        } else {
            let known = try await tx.textRows(
                "SELECT pushed::text, token FROM codablesync_devices WHERE device = $1", [push.device]).first
            let pushed = known.flatMap { $0.first ?? nil }.flatMap { Int64($0) }
            let token = known.flatMap { $0.count > 1 ? $0[1] : nil }
            switch (pushed, token) {
            case (nil, _):
                start = PushStart(previous: 0, device: push.device, isNewDevice: false)
            case (let pushed?, nil):
                // Recorded before pushes had tokens: entries up to `pushed` are applied.
                start = PushStart(previous: pushed, device: push.device, isNewDevice: false)
            case (_, let token?) where token == push.acknowledged:
                start = PushStart(previous: 0, device: push.device, isNewDevice: false)
            default:
                // A copy names a push the ledger keeps. One that names a push the ledger has
                // forgotten (older than its retention) may be a copy of an old file, or an old
                // push delivered again: applying it could bring back values long overwritten.
                if let acknowledged = push.acknowledged,
                   try await tx.textRows("SELECT 1::text FROM codablesync_pushes WHERE token = $1", [acknowledged]).isEmpty {
                    throw SyncError(.startOverNeeded, """
                        push \(push.token) of device \(push.device) follows push \(acknowledged), which this server no longer \
                        remembers (older than its retention): the device must pull everything again under a new device id; \
                        nothing of this push is applied
                        """)
                }
                start = PushStart(previous: 0, device: UUID().uuidString, isNewDevice: true)
            }
        }
        _ = try await tx.textRows("SELECT set_config('codablesync.origin', $1, true)", [start.device])
        try await tx.execute("""
            INSERT INTO codablesync_devices (device, pushed, token, account) VALUES ($1, $2::bigint, $3, $4)
            ON CONFLICT (device) DO UPDATE SET pushed = greatest(codablesync_devices.pushed, EXCLUDED.pushed), token = EXCLUDED.token,
                account = coalesce(codablesync_devices.account, EXCLUDED.account)
            """, [start.device, String(seq), push.token, account])
        try await tx.execute("INSERT INTO codablesync_pushes (token, device, upto) VALUES ($1, $2, $3::bigint)", [push.token, start.device, String(seq)])
        return start
    }

    /// Keeps a push's answer with it (in its transaction), to give again when it is sent again:
    /// its shape, without the rows' values (which may be another account's, and are read again
    /// for a replay, as the account may read them then).
    func recordAnswer(_ tx: Postgres.Transaction, token: String, _ answer: SyncPushResult) async throws {
        try await tx.execute("UPDATE codablesync_pushes SET answer = $2 WHERE token = $1", [token, try StoredAnswer(answer).text()])
    }

    /// A push's answer as the ledger keeps it: without values, with the places that had one.
    struct StoredAnswer: Codable {
        var answer: SyncPushResult
        /// The conflicts and refusals whose answer carried the row's value.
        var valuedConflicts: [Int]
        var valuedRefusals: [Int]

        init(_ answer: SyncPushResult) {
            var stripped = answer
            valuedConflicts = answer.conflicts.indices.filter { answer.conflicts[$0].value != nil }
            valuedRefusals = answer.refused.indices.filter { answer.refused[$0].serverValue != nil }
            for index in stripped.conflicts.indices { stripped.conflicts[index].value = nil }
            for index in stripped.refused.indices { stripped.refused[index].serverValue = nil }
            self.answer = stripped
        }

        /// The ledger's text: this form, or a whole answer (kept before values were left out).
        init(text: String) throws {
            let data = Data(text.utf8)
            if let stored = try? JSONDecoder().decode(StoredAnswer.self, from: data) {
                self = stored
            } else {
                self.init(try JSONDecoder().decode(SyncPushResult.self, from: data))
            }
        }

        func text() throws -> String { String(decoding: try JSONEncoder().encode(self), as: UTF8.self) }
    }

    /// Of the rows of `table` (ids in the server's text, each with the version its change was
    /// made over), those another device or a server-side writer changed after that version,
    /// with whether the change was a delete: the push overwrites them.
    func overwritten(_ tx: Postgres.Transaction, table: String, rows: [(id: String, base: Int64)], device: String) async throws -> [(id: String, deleted: Bool)] {
        guard !rows.isEmpty else { return [] }
        return try await tx.textRows("""
            SELECT c.id, c.deleted::text FROM codablesync_changes c
            JOIN unnest($2::text[], $3::bigint[]) AS p(id, base) ON c.id = p.id
            WHERE c.tbl = $1 AND c.version > p.base AND c.origin IS DISTINCT FROM $4
            """, [table, Self.arrayLiteral(rows.map(\.id)), "{" + rows.map { String($0.base) }.joined(separator: ",") + "}", device]
        ).compactMap { row in
            guard row.count == 2, let id = row[0] else { return nil }
            return (id, row[1] == "true")
        }
    }

    /// Logs rows of `table` (ids in the server's text) as changed now, by no device, so that
    /// every device (the pushing one too) pulls them, and a later push of an older copy meets
    /// them as another writer's change: rows a device's delete could not remove, and merges.
    /// ``relog(_:table:ids:)`` for the rows that are not deleted.
    func relogExisting(_ tx: Postgres.Transaction, table: String, ids: [String]) async throws {
        guard !ids.isEmpty else { return }
        try await tx.execute("""
            WITH moved AS (DELETE FROM codablesync_changes WHERE tbl = $1 AND id = ANY($2::text[]) AND NOT deleted RETURNING tbl, id)
            INSERT INTO codablesync_changes (tbl, id, deleted, origin) SELECT tbl, id, false, NULL FROM moved
            """, [table, Self.arrayLiteral(ids)])
    }

    func relog(_ tx: Postgres.Transaction, table: String, ids: [String]) async throws {
        guard !ids.isEmpty else { return }
        try await tx.execute("DELETE FROM codablesync_changes WHERE tbl = $1 AND id = ANY($2::text[])", [table, Self.arrayLiteral(ids)])
        try await tx.execute("""
            INSERT INTO codablesync_changes (tbl, id, deleted, origin) SELECT $1, unnest($2::text[]), false, NULL
            """, [table, Self.arrayLiteral(ids)])
    }

    /// Marks the log entries of rows a push stored as the device sent them (in its transaction):
    /// that device's pulls leave them out. Rows the push changed otherwise (merged, links
    /// dropped, deletes kept) and its side effects on other rows are not marked.
    func markPushed(_ tx: Postgres.Transaction, table: String, ids: [String], device: String) async throws {
        guard !ids.isEmpty else { return }
        _ = try await tx.textRows("SELECT codablesync_mark_pushed($1, $2::text[], $3)::text", [table, Self.arrayLiteral(ids), device])
    }

    /// A trigger's name within PostgreSQL's 63 bytes (a longer one would be cut, and two triggers
    /// of one long table name would become one).
    static func name(_ name: String) -> String {
        SQLName.fitted(name, toBytes: 63)
    }

    /// A PostgreSQL array literal of texts, each quoted.
    static func arrayLiteral(_ texts: [String]) -> String {
        "{" + texts.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
            .joined(separator: ",") + "}"
    }
}
#endif
