#if Postgres
import CodablePostgres
import CodableSQLite
import Foundation

/// An account on a sync server: whose rows a device pulls, and which it may write. The server
/// knows it from the request (a bearer token, ``Postgres/SyncServer/authenticate(token:)``),
/// never from the request's body.
///
/// ```swift
/// let account = try await syncServer.authenticate(token: bearerToken)
/// let answer = try await syncServer.pull(request, as: account)
/// ```
///
/// Sendable: a plain value.
public struct SyncAccount: Codable, Sendable, Hashable, CustomStringConvertible {
    public let name: String
    public init(_ name: String) { self.name = name }
    public var description: String { name }
}

/// What a share lets its account do with the shared value and every row it links.
///
/// ```swift
/// try await syncServer.share(groceries, with: bob, access: .read, by: alice)
/// ```
///
/// Sendable: a plain enum.
public enum SyncAccess: String, Codable, Sendable, Hashable {
    /// Pull the rows; pushes that change them are refused (``SyncRefusal/Reason/forbidden``).
    case read
    /// Pull and change them.
    case readWrite
}

/// An account and a bearer token for it, as ``Postgres/SyncServer/addAccount(_:tokenLifetime:)``
/// makes them. The server keeps only the token's SHA-256 hash: give the token to the account's
/// devices now, it cannot be read back.
///
/// ```swift
/// let carol = try await syncServer.addAccount("carol", tokenLifetime: .seconds(90 * 86_400))
/// print(carol.token)
/// ```
///
/// Sendable: plain values.
public struct SyncCredentials: Sendable, Hashable {
    public let account: SyncAccount
    public let token: String
}

extension Postgres.SyncServer {
    // MARK: Accounts and tokens

    /// Creates an account and a first bearer token for it.
    ///
    /// ```swift
    /// let alice = try await server.addAccount("alice")
    /// print(alice.token)   // give it to alice's devices
    /// ```
    ///
    /// - Parameter tokenLifetime: how long the token is accepted; `nil`: until it is revoked.
    /// - Throws: `SQLite.Sync.Error.Code.invalidArgument` for an empty or taken name (or one over
    ///   100 characters).
    public func addAccount(_ name: String, tokenLifetime: Duration? = nil) async throws -> SyncCredentials {
        guard !name.isEmpty, name.count <= 100, !name.contains(where: \.isNewline) else {
            throw SQLite.Sync.Error(.invalidArgument, "an account's name must be 1 to 100 characters on one line, not \"\(name)\"")
        }
        try await install()
        let account = SyncAccount(name)
        let token = Self.newToken()
        try await log.db.inTransaction { tx in
            let created = try await tx.textRows(
                "INSERT INTO codablesync_accounts (account) VALUES ($1) ON CONFLICT DO NOTHING RETURNING account", [name])
            guard !created.isEmpty else { throw SQLite.Sync.Error(.invalidArgument, "an account named \"\(name)\" exists already") }
            try await Self.store(token, for: account, lifetime: tokenLifetime, tx)
        }
        return SyncCredentials(account: account, token: token)
    }

    /// Another bearer token for an existing account (a new device, a token that expired).
    ///
    /// - Throws: `SQLite.Sync.Error.Code.invalidArgument` when there is no such account.
    public func issueToken(for account: SyncAccount, lifetime: Duration? = nil) async throws -> String {
        try await install()
        let token = Self.newToken()
        try await log.db.inTransaction { tx in
            guard try await Self.hasAccount(account, in: tx) else {
                throw SQLite.Sync.Error(.invalidArgument, "there is no account named \"\(account.name)\"")
            }
            try await Self.store(token, for: account, lifetime: lifetime, tx)
        }
        return token
    }

    /// Stops accepting every token of `account` (its devices must be given a new one).
    public func revokeTokens(of account: SyncAccount) async throws {
        try await install()
        try await log.db.execute("DELETE FROM codablesync_tokens WHERE account = $1", account.name)
    }

    /// The account a bearer token belongs to: the hook an HTTP server calls for every request.
    ///
    /// - Throws: `SQLite.Sync.Error.Code.unauthorized`, saying whether the token is unknown or
    ///   expired (and when).
    public func authenticate(token: String) async throws -> SyncAccount {
        try await install()
        let rows = try await log.db.textRows("""
            SELECT account, expires::text, (expires IS NOT NULL AND expires <= now())::text FROM codablesync_tokens
            WHERE hash = encode(sha256(convert_to($1, 'UTF8')), 'hex')
            """, [token])
        guard let row = rows.first, row.count == 3, let name = row[0] else {
            throw SQLite.Sync.Error(.unauthorized, "the token is not one this server issued, or it was revoked")
        }
        if row[2] == "true" { throw SQLite.Sync.Error(.unauthorized, "the token expired at \(row[1] ?? "?")") }
        return SyncAccount(name)
    }

    private static func hasAccount(_ account: SyncAccount, in db: some Postgres.Queryable) async throws -> Bool {
        try await !db.textRows("SELECT 1::text FROM codablesync_accounts WHERE account = $1", [account.name]).isEmpty
    }

    private static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()  // the system's cryptographic source
        return (0..<4).map { _ in String(format: "%016llx", generator.next() as UInt64) }.joined()
    }

    private static func store(_ token: String, for account: SyncAccount, lifetime: Duration?, _ tx: Postgres.Transaction) async throws {
        let seconds = lifetime.map { String(Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18) }
        try await tx.execute("""
            INSERT INTO codablesync_tokens (hash, account, expires)
            VALUES (encode(sha256(convert_to($1, 'UTF8')), 'hex'), $2, now() + make_interval(secs => $3::double precision))
            """, token, account.name, seconds)
    }

    // MARK: Scoped push and pull

    /// ``push(_:)`` on behalf of `account`: a change to a row outside the account's write scope
    /// (another account's, or shared with it read-only), or a value linking a row it cannot read,
    /// is refused alone (``SyncRefusal/Reason/forbidden``), with nothing of the row in the answer;
    /// rows the push creates become the account's.
    ///
    /// - Throws: `SQLite.Sync.Error.Code.unauthorized` for a device id or push token of another
    ///   account's (nothing is applied or told).
    public func push(_ push: SyncPush, as account: SyncAccount) async throws -> SyncPushResult {
        try await apply(push, account: account.name)
    }

    /// ``pull(_:)`` on behalf of `account`: the changes of rows in its scope (owned, shared with
    /// it, and what those link), the deletes of rows it could read, and removals (as deletes) of
    /// rows a revoked share took out of its scope.
    public func pull(_ pull: SyncPull, as account: SyncAccount) async throws -> SyncPullResult {
        try await answer(pull, account: account.name)
    }

    /// A transport that pushes and pulls on behalf of `account`: a device of a server-side
    /// process, or a test, without HTTP in between.
    ///
    /// ```swift
    /// let sync = try SQLite.Sync(local: db, transport: server.transport(for: alice), models: [Note.self])
    /// ```
    public func transport(for account: SyncAccount) -> some SyncTransport {
        AccountTransport(server: self, account: account)
    }

    // MARK: Sharing

    /// Shares the row `id` of `table` (with every row it links) with `account`; a share that
    /// exists changes its access. The rows reach the account's devices at their next pull.
    ///
    /// - Parameter owner: the account asking; when given, it must own the row.
    /// - Throws: `SQLite.Sync.Error.Code.forbidden` when `owner` does not own the row (or it does
    ///   not exist), `.invalidArgument` for a table that is not a synced model's or an unknown
    ///   account.
    public func share(table: String, id: String, with account: SyncAccount, access: SyncAccess = .readWrite, by owner: SyncAccount? = nil) async throws {
        let (model, serverID) = try await sharedRow(table: table, id: id, with: account, by: owner)
        let scopes = ServerScopes(models: models)
        try await log.db.inTransaction { tx in
            _ = try await tx.textRows("SELECT pg_advisory_xact_lock(\(ServerLog.lock))::text", [])
            let before = try await scopes.rows(tx, inScopeOf: account.name)
            try await tx.execute("""
                INSERT INTO codablesync_shares (tbl, id, account, writable) VALUES ($1, $2, $3, $4::boolean)
                ON CONFLICT (tbl, id, account) DO UPDATE SET writable = EXCLUDED.writable
                """, model.table, serverID, account.name, access == .readWrite ? "true" : "false")
            // The rows that joined the scope are logged again, so that a pull after a version
            // from before the share brings them.
            let joined = try await scopes.rows(tx, inScopeOf: account.name).subtracting(before)
            for model in models {
                try await log.relogExisting(tx, table: model.table, ids: joined.filter { $0.table == model.table }.map(\.id))
            }
            // Running devices pull at once (their signals are commits to synced tables).
            if !joined.isEmpty { try await tx.announceChange(of: model.table) }
        }
    }

    /// ``share(table:id:with:access:by:)`` for a model value.
    public func share<T: Model>(_ value: T, with account: SyncAccount, access: SyncAccess = .readWrite, by owner: SyncAccount? = nil) async throws {
        try await share(table: T.tableName, id: SyncedModel.idText(value), with: account, access: access, by: owner)
    }

    /// Ends a share: the rows it brought and the account reaches no other way are removed from the
    /// account's devices at their next pull (local removals: nothing is deleted on the server).
    ///
    /// - Throws: as ``share(table:id:with:access:by:)``.
    public func revokeShare(table: String, id: String, from account: SyncAccount, by owner: SyncAccount? = nil) async throws {
        let (model, serverID) = try await sharedRow(table: table, id: id, with: account, by: owner)
        let scopes = ServerScopes(models: models)
        try await log.db.inTransaction { tx in
            _ = try await tx.textRows("SELECT pg_advisory_xact_lock(\(ServerLog.lock))::text", [])
            let before = try await scopes.rows(tx, inScopeOf: account.name)
            try await tx.execute("DELETE FROM codablesync_shares WHERE tbl = $1 AND id = $2 AND account = $3", model.table, serverID, account.name)
            let left = before.subtracting(try await scopes.rows(tx, inScopeOf: account.name)).sorted { ($0.table, $0.id) < ($1.table, $1.id) }
            guard !left.isEmpty else { return }
            try await tx.execute("""
                INSERT INTO codablesync_removals (version, account, tbl, id)
                SELECT nextval(pg_get_serial_sequence('codablesync_changes', 'version')), $1, t, i FROM unnest($2::text[], $3::text[]) AS u(t, i)
                """, account.name, ServerLog.arrayLiteral(left.map(\.table)), ServerLog.arrayLiteral(left.map(\.id)))
            try await tx.announceChange(of: model.table)
        }
    }

    /// ``revokeShare(table:id:from:by:)`` for a model value.
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

    private func rowNamed(table: String, id: String) throws -> (SyncedModel, String) {
        guard let model = models.first(where: { $0.table == table }) else {
            throw SQLite.Sync.Error(.invalidArgument, "\(table) is not the table of a model this server syncs")
        }
        guard let canonical = model.canonicalID(id) else {
            throw SQLite.Sync.Error(.invalidArgument, "\(id) is not an id of \(model.name)")
        }
        return (model, model.serverText(canonical))
    }

    private func sharedRow(table: String, id: String, with account: SyncAccount, by owner: SyncAccount?) async throws -> (SyncedModel, String) {
        try await install()
        let (model, serverID) = try rowNamed(table: table, id: id)
        // Ownership first: someone who owns nothing learns nothing of other accounts' names.
        if let owner {
            let owns = try await log.db.textRows(
                "SELECT 1::text FROM codablesync_owners WHERE tbl = $1 AND id = $2 AND account = $3", [model.table, serverID, owner.name])
            guard !owns.isEmpty else {
                throw SQLite.Sync.Error(.forbidden, "\(owner.name) does not own \(model.name) \(id), so it cannot share it")
            }
        }
        guard try await Self.hasAccount(account, in: log.db) else {
            throw SQLite.Sync.Error(.invalidArgument, "there is no account named \"\(account.name)\" to share with")
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
