#if Postgres
import CodablePostgres
import CodableSyncProtocol
import Foundation

/// An account and a bearer token for it, as ``Postgres/SyncServer/addAccount(_:tokenLifetime:)``
/// makes them. The server keeps only the token's SHA-256 hash: give the token to the account's
/// devices now, it cannot be read back. It expires after the lifetime given
/// (90 days, unless told; `nil`: never).
///
/// ```swift
/// let carol = try await syncServer.addAccount("carol", tokenLifetime: .seconds(90 * 86_400))
/// print(carol.token)
/// ```
///
/// Sendable: plain values.
public struct SyncCredentials: Sendable, Hashable {
    /// The account made.
    public let account: SyncAccount
    /// Its first bearer token (labelled `"first"` in ``Postgres/SyncServer/tokens(of:)``): a secret.
    public let token: String
}

extension Postgres.SyncServer {
    // MARK: Accounts

    /// Creates an account and a first bearer token for it, labelled `"first"` (more:
    /// ``issueToken(for:label:lifetime:)``; listed by ``tokens(of:)``). Audited (`accountCreated`,
    /// `tokenIssued`).
    ///
    /// ```swift
    /// let alice = try await server.addAccount("alice")                  // a token for 90 days
    /// let robot = try await server.addAccount("robot", tokenLifetime: nil)  // one that never expires
    /// print(alice.token)   // give it to alice's devices
    /// ```
    ///
    /// - Parameter tokenLifetime: how long the token is accepted (90
    ///   days, unless given; at most 100 years); `nil`: until it is revoked.
    /// - Throws: `SyncError.Code.invalidArgument` for an empty or taken name (or one over
    ///   100 characters, or with a line break or another control character), or a lifetime out
    ///   of range.
    public func addAccount(_ name: String, tokenLifetime: Duration? = .seconds(90 * 86_400)) async throws -> SyncCredentials {
        guard !name.isEmpty, name.count <= 100, !Self.hasControlCharacters(name) else {
            throw SyncError(
                .invalidArgument, "an account's name must be 1 to 100 characters on one line, not \"\(Self.auditValue(name))\"")
        }
        let seconds = try Self.lifetimeSeconds(tokenLifetime)
        try await install()
        let account = SyncAccount(name)
        let token = Self.newToken()
        let issued = try await log.db.inTransaction { tx in
            let created = try await tx.textRows(
                "INSERT INTO codablesync_accounts (account) VALUES ($1) ON CONFLICT DO NOTHING RETURNING account", [name])
            guard !created.isEmpty else { throw SyncError(.invalidArgument, "an account named \"\(name)\" exists already") }
            return try await Self.store(token, for: account, label: Self.firstTokenLabel, seconds: seconds, tx)
        }
        SyncAudit.record("accountCreated", "the account \(Self.auditValue(name)) was created", ["account": Self.auditValue(name)])
        Self.auditIssued(issued, for: account, label: Self.firstTokenLabel)
        return SyncCredentials(account: account, token: token)
    }

    /// The label of the token ``addAccount(_:tokenLifetime:)`` makes.
    static let firstTokenLabel = "first"

    // MARK: Scoped push and pull

    /// ``push(_:)`` on behalf of `account` (see ``transport(for:)``).
    package func push(_ push: SyncPush, as account: SyncAccount) async throws -> SyncPushResult {
        try await apply(push, account: account.name)
    }

    /// ``pull(_:)`` on behalf of `account` (see ``transport(for:)``).
    package func pull(_ pull: SyncPull, as account: SyncAccount) async throws -> SyncPullResult {
        try await answer(pull, account: account.name)
    }

    /// A transport that pushes and pulls on behalf of `account`: a device of a server-side
    /// process, a test, or your own API in front of the server (after your own authentication),
    /// without HTTP in between.
    ///
    /// ```swift
    /// let sync = try SQLite.Sync(local: db, transport: server.transport(for: alice), models: [Note.self])
    /// let answer = try await server.transport(for: alice).pull(request)   // a pull decoded by your API
    /// ```
    ///
    /// Its pushes are scoped: a change to a row outside the account's write scope (another
    /// account's, or shared with it read-only), or a value linking a row it cannot read, is
    /// refused alone (``SyncRefusal/Reason/forbidden``), with nothing of the row in the answer;
    /// rows a push creates become the account's; a device id or push token of another account's
    /// throws `SyncError.Code.unauthorized` (nothing is applied or told). Its pulls bring the
    /// changes of rows in the account's scope (owned, shared with it, and what those link), the
    /// deletes of rows it could read, and removals (as deletes) of rows a revoked share took out
    /// of its scope.
    public func transport(for account: SyncAccount) -> some SyncTransport {
        AccountTransport(server: self, account: account)
    }

    // MARK: Sharing

    /// The row form of ``share(_:with:access:by:)`` (the HTTP endpoint names rows by table and id).
    package func share(table: String, id: String, with account: SyncAccount, access: SyncAccess = .readWrite, by owner: SyncAccount? = nil) async throws {
        let (model, serverID) = try await ownedRow(table: table, id: id, by: owner, toDo: "share")
        let reached = try await log.db.inTransaction { tx in
            try await addShare(model: model, serverID: serverID, with: account, access: access, tx)
        }
        guard reached || owner != nil else {
            throw SyncError(.invalidArgument, "there is no account named \"\(account.name)\" to share with")
        }
        SyncAudit.record(
            "shared",
            "\(Self.auditValue(owner?.name ?? "the server")) shared \(model.name) \(serverID) with \(Self.auditValue(account.name))"
                + (reached ? "" : ", which is no account: the share reaches no one"),
            ["account": Self.auditValue(owner?.name ?? ""), "target": Self.auditValue(account.name), "table": model.table, "id": serverID,
             "access": access.rawValue, "reason": reached ? "" : "unknownAccount"].filter { !$0.value.isEmpty })
    }

    /// Adds (or changes) a share in `tx`, and logs again the rows that joined the account's scope;
    /// `false` (and nothing stored) when `account` does not exist.
    func addShare(model: SyncedModel, serverID: String, with account: SyncAccount, access: SyncAccess, _ tx: Postgres.Transaction) async throws -> Bool {
        let scopes = ServerScopes(models: models)
        try await ServerLog.lockScopes(tx)
        let before = try await scopes.rows(tx, inScopeOf: account.name)
        // Only for an account that exists (in the same statement: one created later does not get it).
        let stored = try await tx.textRows("""
            INSERT INTO codablesync_shares (tbl, id, account, writable)
            SELECT $1, $2, account, $4::boolean FROM codablesync_accounts WHERE account = $3
            ON CONFLICT (tbl, id, account) DO UPDATE SET writable = EXCLUDED.writable
            RETURNING account
            """, [model.table, serverID, account.name, access == .readWrite ? "true" : "false"])
        // The rows that joined the scope are logged again, so that a pull after a version
        // from before the share brings them.
        let joined = try await scopes.rows(tx, inScopeOf: account.name).subtracting(before)
        for model in models {
            try await log.relogExisting(tx, table: model.table, ids: joined.filter { $0.table == model.table }.map(\.id))
        }
        // Running devices pull at once (their signals are commits to synced tables).
        if !joined.isEmpty { try await tx.announceChange(of: model.table) }
        return !stored.isEmpty
    }

    /// Shares `value`'s row (with every row it links) with `account`; a share that
    /// exists changes its access. The rows reach the account's devices at their next pull.
    /// Audited (`shared`, `shareRefused`).
    ///
    /// ```swift
    /// try await syncServer.share(list, with: bob, access: .read, by: alice)
    /// ```
    ///
    /// **What an account learns.** Ownership is checked first: an account that does not own the
    /// row is refused (`forbidden`) whoever it names. An owner sharing with a name that is no
    /// account is answered as for any account (success), and the share reaches no one: nothing is
    /// stored, so an account created later under that name does not get it (the audit log says
    /// so). Over HTTP an account cannot tell which names exist from the answers. (A share with a
    /// name that exists still takes a little longer: timing is not hidden.) Without `owner` (the
    /// server's own code, trusted) an unknown name is an error instead, to catch typos.
    ///
    /// **Immediate, not by invitation.** The rows reach the account without it being asked: a
    /// share cannot change or remove anything of the recipient's (its own rows stay its own, and
    /// a shared row's changes are its owner's), it only adds rows to its devices, which
    /// ``revokeShare(_:from:by:)`` or the owner's delete take away again. An app that wants
    /// consent uses ``offerShare(_:with:access:by:)`` instead, and the recipient
    /// ``acceptShare(table:id:from:as:)``.
    ///
    /// - Parameter owner: the account asking; when given, it must own the row.
    /// - Throws: `SyncError.Code.forbidden` when `owner` does not own the row (or it does
    ///   not exist), `.invalidArgument` for a table that is not a synced model's, an id that is not
    ///   one of its, or (without `owner`) an account that does not exist.
    public func share<T: Model>(_ value: T, with account: SyncAccount, access: SyncAccess = .readWrite, by owner: SyncAccount? = nil) async throws {
        try await share(table: T.tableName, id: SyncedModel.idText(value), with: account, access: access, by: owner)
    }

    /// The row form of ``revokeShare(_:from:by:)``.
    package func revokeShare(table: String, id: String, from account: SyncAccount, by owner: SyncAccount? = nil) async throws {
        let (model, serverID) = try await ownedRow(table: table, id: id, by: owner, toDo: "stop sharing")
        let scopes = ServerScopes(models: models)
        try await log.db.inTransaction { tx in
            try await ServerLog.lockScopes(tx)
            try await withdrawOffers(table: model.table, id: serverID, from: account, tx)
            let before = try await scopes.rows(tx, inScopeOf: account.name)
            try await tx.execute("DELETE FROM codablesync_shares WHERE tbl = $1 AND id = $2 AND account = $3", [model.table, serverID, account.name])
            let left = before.subtracting(try await scopes.rows(tx, inScopeOf: account.name)).sorted { ($0.table, $0.id) < ($1.table, $1.id) }
            guard !left.isEmpty else { return }
            try await tx.execute("""
                INSERT INTO codablesync_removals (version, account, tbl, id)
                SELECT nextval(pg_get_serial_sequence('codablesync_changes', 'version')), $1, t, i FROM unnest($2::text[], $3::text[]) AS u(t, i)
                """, [account.name, ServerLog.arrayLiteral(left.map(\.table)), ServerLog.arrayLiteral(left.map(\.id))])
            try await tx.announceChange(of: model.table)
        }
        SyncAudit.record(
            "unshared", "\(Self.auditValue(owner?.name ?? "the server")) stopped sharing \(model.name) \(serverID) with \(Self.auditValue(account.name))",
            ["account": Self.auditValue(owner?.name ?? ""), "target": Self.auditValue(account.name), "table": model.table, "id": serverID]
                .filter { !$0.value.isEmpty })
    }

    /// Ends a share (and withdraws an offer of one, ``offerShare(_:with:access:by:)``): the
    /// rows it brought and the account reaches no other way are removed from the account's
    /// devices at their next pull (local removals: nothing is deleted on the server). Audited
    /// (`unshared`).
    ///
    /// ```swift
    /// try await syncServer.revokeShare(list, from: bob, by: alice)
    /// ```
    ///
    /// Ending a share that does not exist does nothing, and succeeds: whether `account` is a name
    /// no account has, or an account the row is not shared with, the answer is the same (an
    /// account learns nothing of which names exist).
    ///
    /// - Throws: `SyncError.Code.forbidden` when `owner` does not own the row (or it does
    ///   not exist), `.invalidArgument` for a table that is not a synced model's or an id that is
    ///   not one of its.
    public func revokeShare<T: Model>(_ value: T, from account: SyncAccount, by owner: SyncAccount? = nil) async throws {
        try await revokeShare(table: T.tableName, id: SyncedModel.idText(value), from: account, by: owner)
    }

    /// The accounts a row is shared with, and how.
    public func shares(table: String, id: String) async throws -> [SyncAccount: SyncAccess] {
        try await install()
        let (model, serverID) = try rowNamed(table: table, id: id)
        var shares: [SyncAccount: SyncAccess] = [:]
        for row in try await log.db.textRows(
            "SELECT account, writable::text FROM codablesync_shares WHERE tbl = $1 AND id = $2", [model.table, serverID]) {
            if row.count == 2, let name = row[0] { shares[SyncAccount(name)] = row[1] == "true" ? .readWrite : .read }
        }
        return shares
    }

    func rowNamed(table: String, id: String) throws -> (SyncedModel, String) {
        guard let model = models.first(where: { $0.table == table }) else {
            throw SyncError(.invalidArgument, "\(table) is not the table of a model this server syncs")
        }
        guard let canonical = model.canonicalID(id) else {
            throw SyncError(.invalidArgument, "\(id) is not an id of \(model.name)")
        }
        return (model, model.serverText(canonical))
    }

    /// The model and server id of a row `owner` (when given) owns, for it `toDo` something with;
    /// a refusal is audited (`shareRefused`).
    func ownedRow(table: String, id: String, by owner: SyncAccount?, toDo: String) async throws -> (SyncedModel, String) {
        try await install()
        let (model, serverID) = try rowNamed(table: table, id: id)
        // Ownership first: someone who owns nothing learns nothing of other accounts' names.
        if let owner {
            let owns = try await log.db.textRows(
                "SELECT 1::text FROM codablesync_owners WHERE tbl = $1 AND id = $2 AND account = $3", [model.table, serverID, owner.name])
            guard !owns.isEmpty else {
                SyncAudit.record(
                    "shareRefused", "\(Self.auditValue(owner.name)) tried to \(toDo) \(model.name) \(serverID), which it does not own",
                    ["account": Self.auditValue(owner.name), "table": model.table, "id": serverID, "reason": "notOwner"])
                throw SyncError(.forbidden, "\(owner.name) does not own \(model.name) \(id), so it cannot \(toDo) it")
            }
        }
        return (model, serverID)
    }
}

extension Postgres.SyncServer {
    /// Whether a pull of `account` after `version` would bring a change (a signal for the
    /// account's devices, not for everyone's).
    func hasChanges(after version: Int64, for account: SyncAccount) async throws -> Bool {
        try await install()
        let entries = try await log.changes(after: version, limit: 1, scoped: (ServerScopes(models: models), account.name))
        return entries.contains { !$0.isTop }
    }

    /// The log's newest version (changes and removals).
    func newestVersion() async throws -> Int64 {
        try await install()
        let row = try await log.db.textRows("""
            SELECT greatest((SELECT max(version) FROM codablesync_changes), (SELECT max(version) FROM codablesync_removals), 0)::text
            """, []).first
        return row?.first?.flatMap { Int64($0) } ?? 0
    }

    /// The accounts the log's entries after `version` concern (the readers of the rows changed,
    /// the audience of those deleted, the accounts of removals), and the log's newest version,
    /// read in one statement: which waiting devices a commit may have news for. `nil` accounts:
    /// more than `limit` entries (each costs a walk of the links back to the accounts: past a
    /// few dozen, every waiter's own check is cheaper), or `version` is 0 (anyone may be concerned).
    func accountsConcerned(after version: Int64, limit: Int = 64) async throws -> (accounts: Set<String>?, top: Int64) {
        try await install()
        let rows = try await log.db.textRows("""
            WITH e AS (SELECT version, tbl, id, deleted FROM codablesync_changes WHERE version > $1::bigint ORDER BY version LIMIT $2::int + 1)
            SELECT 'top', greatest((SELECT max(version) FROM codablesync_changes), (SELECT max(version) FROM codablesync_removals), $1::bigint)::text
            UNION ALL SELECT 'entries', count(*)::text FROM e
            UNION ALL SELECT DISTINCT 'account', a FROM (
                SELECT unnest(codablesync_readers(e.tbl, e.id)) AS a FROM e WHERE NOT e.deleted AND (SELECT count(*) FROM e) <= $2::int
                UNION SELECT unnest(d.accounts) FROM e JOIN codablesync_audience d ON d.tbl = e.tbl AND d.id = e.id WHERE e.deleted
                UNION SELECT r.account FROM codablesync_removals r WHERE r.version > $1::bigint) x
            """, [String(max(version, 0)), String(limit)])
        var top = version, entries = 0, accounts = Set<String>()
        for row in rows where row.count == 2 {
            guard let kind = row[0], let value = row[1] else { continue }
            switch kind {
            case "top": top = Int64(value) ?? version
            case "entries": entries = Int(value) ?? 0
            default: accounts.insert(value)
            }
        }
        return (version > 0 && entries <= limit ? accounts : nil, top)
    }
}

/// ``Postgres/SyncServer/transport(for:)``.
private struct AccountTransport: SyncTransport {
    let server: Postgres.SyncServer
    let account: SyncAccount
    func push(_ push: SyncPush) async throws -> SyncPushResult { try await server.push(push, as: account) }
    func pull(_ pull: SyncPull) async throws -> SyncPullResult { try await server.pull(pull, as: account) }
    func serverChanges() async throws -> AsyncThrowingStream<Void, any Swift.Error>? { try await server.serverChanges() }
}
#endif
