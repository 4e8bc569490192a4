#if Postgres
import CodablePostgres
import CodableSyncProtocol
import Foundation

/// One bearer token of an account, as ``Postgres/SyncServer/tokens(of:)`` lists it: never the
/// token itself (the server keeps only its SHA-256 hash), but what an operator needs to tell an
/// account's devices apart and revoke one (``Postgres/SyncServer/revokeToken(id:of:)``).
///
/// ```swift
/// for token in try await syncServer.tokens(of: alice) where token.label == "old phone" {
///     try await syncServer.revokeToken(id: token.id, of: alice)
/// }
/// ```
///
/// Sendable: plain values.
public struct SyncTokenInfo: Codable, Sendable, Hashable {
    /// The token's public id: the first 12 hex characters of its SHA-256 hash (not a secret, and
    /// nothing that helps to guess the token).
    public let id: String
    /// What the token is for (`"alice's phone"`), as given to
    /// ``Postgres/SyncServer/issueToken(for:label:lifetime:)``; `"first"` for the token
    /// ``Postgres/SyncServer/addAccount(_:tokenLifetime:)`` makes.
    public let label: String?
    /// When it was issued.
    public let created: Date
    /// When it stops being accepted; `nil`: never (until revoked).
    public let expires: Date?
    /// When a request last authenticated with it, to the minute (updated at most once a minute);
    /// `nil`: never used.
    public let lastUsed: Date?

    /// Whether it has expired at `date`.
    ///
    /// ```swift
    /// let stale = try await syncServer.tokens(of: alice).filter { $0.isExpired() }
    /// ```
    package func isExpired(at date: Date = Date()) -> Bool {
        expires.map { $0 <= date } ?? false
    }
}

extension Postgres.SyncServer {
    // MARK: Tokens

    /// How long a token is accepted unless told otherwise: 90 days. ``addAccount(_:tokenLifetime:)``
    /// and ``issueToken(for:label:lifetime:)`` use it; pass `nil` to them for a token that never
    /// expires (until revoked).
    ///
    /// ```swift
    /// let token = try await syncServer.issueToken(for: alice)   // accepted for 90 days
    /// let forever = try await syncServer.issueToken(for: alice, lifetime: nil)
    /// ```
    package static let defaultTokenLifetime: Duration = .seconds(90 * 86_400)

    /// The longest lifetime a token can be given (100 years); `nil` is "never expires".
    static let longestTokenLifetime: Duration = .seconds(100 * 365 * 86_400)

    /// Another bearer token for an existing account: a new device, or one whose token expired.
    /// The token is returned once: the server keeps only its hash.
    ///
    /// ```swift
    /// let phone = try await syncServer.issueToken(for: alice, label: "alice's phone")
    /// let robot = try await syncServer.issueToken(for: alice, label: "backup job", lifetime: nil)  // never expires
    /// ```
    ///
    /// - Parameters:
    ///   - label: what the token is for, shown by ``tokens(of:)`` (1 to 100 characters, no
    ///     control characters); `nil` for none.
    ///   - lifetime: how long it is accepted (90 days unless given, at most 100
    ///     years); `nil`: until it is revoked.
    /// - Throws: `SyncError.Code.invalidArgument` when there is no such account, or for a
    ///   label or lifetime out of range.
    public func issueToken(for account: SyncAccount, label: String? = nil, lifetime: Duration? = .seconds(90 * 86_400)) async throws -> String {
        let seconds = try Self.lifetimeSeconds(lifetime)
        try Self.checkLabel(label)
        try await install()
        let token = Self.newToken()
        let issued = try await log.db.inTransaction { tx in
            guard try await Self.hasAccount(account, in: tx) else {
                throw SyncError(.invalidArgument, "there is no account named \"\(account.name)\"")
            }
            return try await Self.store(token, for: account, label: label, seconds: seconds, tx)
        }
        Self.auditIssued(issued, for: account, label: label)
        return token
    }

    /// The tokens of `account`, oldest first, expired ones included (until
    /// ``removeExpiredTokens()`` deletes them): ids, labels and dates, never the tokens.
    ///
    /// ```swift
    /// for token in try await syncServer.tokens(of: alice) {
    ///     print(token.id, token.label ?? "", token.lastUsed ?? "never used")
    /// }
    /// ```
    ///
    /// - Throws: `SyncError.Code.invalidArgument` when there is no such account.
    public func tokens(of account: SyncAccount) async throws -> [SyncTokenInfo] {
        try await install()
        let rows = try await log.db.inTransaction { tx in
            guard try await Self.hasAccount(account, in: tx) else {
                throw SyncError(.invalidArgument, "there is no account named \"\(account.name)\"")
            }
            return try await tx.textRows("""
                SELECT left(hash, 12), label, extract(epoch FROM created)::text, extract(epoch FROM expires)::text,
                       extract(epoch FROM last_used)::text
                FROM codablesync_tokens WHERE account = $1 ORDER BY created, hash
                """, [account.name])
        }
        return try rows.map { row in
            guard row.count == 5, let id = row[0], let created = Self.date(row[2]) else {
                throw SyncError(.corruptState, "a row of codablesync_tokens for \"\(account.name)\" has no hash or creation date")
            }
            return SyncTokenInfo(id: id, label: row[1], created: created, expires: Self.date(row[3]), lastUsed: Self.date(row[4]))
        }
    }

    /// Stops accepting one token of `account`, by its id (``SyncTokenInfo/id``): a lost device's.
    /// Its other tokens keep working.
    ///
    /// ```swift
    /// try await syncServer.revokeToken(id: "3f2a9c01d4e7", of: alice)
    /// ```
    ///
    /// - Throws: `SyncError.Code.invalidArgument` when `account` has no token with that id
    ///   (or there is no such account).
    public func revokeToken(id: String, of account: SyncAccount) async throws {
        try await install()
        let revoked = try await log.db.inTransaction { tx in
            try await tx.textRows(
                "DELETE FROM codablesync_tokens WHERE account = $1 AND left(hash, 12) = $2 RETURNING left(hash, 12)", [account.name, id])
        }
        guard !revoked.isEmpty else {
            throw SyncError(
                .invalidArgument, "\"\(account.name)\" has no token with the id \"\(Self.auditValue(id))\"")
        }
        SyncAudit.record(
            "tokenRevoked", "a token of \(Self.auditValue(account.name)) was revoked",
            ["account": Self.auditValue(account.name), "token": Self.auditValue(id)])
    }

    /// Stops accepting every token of `account` (its devices must be given a new one). An
    /// account without tokens, or no account by that name, is left as it is.
    ///
    /// ```swift
    /// try await syncServer.revokeTokens(of: mallory)
    /// ```
    public func revokeTokens(of account: SyncAccount) async throws {
        try await install()
        let revoked = try await log.db.inTransaction { tx in
            try await tx.textRows("DELETE FROM codablesync_tokens WHERE account = $1 RETURNING left(hash, 12)", [account.name])
        }
        SyncAudit.record(
            "tokenRevoked", "every token of \(Self.auditValue(account.name)) was revoked (\(revoked.count))",
            ["account": Self.auditValue(account.name), "token": "all", "count": String(revoked.count)])
    }

    /// Deletes the tokens that have expired (of every account) and returns how many; run it now
    /// and then, as ``compact(deletedBefore:)``. Until then an expired token is listed by
    /// ``tokens(of:)`` and refused by ``authenticate(token:)`` saying when it expired; after, it is
    /// refused as unknown.
    ///
    /// ```swift
    /// let removed = try await syncServer.removeExpiredTokens()
    /// ```
    @discardableResult
    public func removeExpiredTokens() async throws -> Int {
        try await install()
        let removed = try await log.db.inTransaction { tx in
            try await tx.textRows("DELETE FROM codablesync_tokens WHERE expires <= now() RETURNING left(hash, 12)", [])
        }
        if !removed.isEmpty {
            SyncAudit.record("tokensExpired", "\(removed.count) expired token(s) deleted", ["count": String(removed.count)])
        }
        return removed.count
    }

    /// The account a bearer token belongs to: the hook an HTTP server calls for every request.
    /// It notes when the token was last used (at most once a minute per token, see
    /// ``tokens(of:)``). Every refusal is audited (`authenticationFailed`, with the first 8 hex
    /// characters of the token's SHA-256 hash, never the token).
    ///
    /// ```swift
    /// let account = try await syncServer.authenticate(token: bearerToken)
    /// ```
    ///
    /// - Throws: `SyncError.Code.unauthorized`, saying whether the token is unknown (or
    ///   revoked) or expired (and when).
    public func authenticate(token: String) async throws -> SyncAccount {
        // Every token this server issues is 64 lowercase hex digits: anything else is refused
        // without a query.
        guard token.utf8.count == 64, token.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            SyncAudit.record(
                "authenticationFailed", "a bearer token that is not one this server could have issued was refused",
                ["reason": "malformed", "length": String(token.utf8.count)])
            throw SyncError(.unauthorized, Self.unknownTokenMessage)
        }
        try await install()
        let rows = try await log.db.textRows("""
            SELECT left(h.hash, 8), t.account, t.expires::text, (t.expires IS NOT NULL AND t.expires <= now())::text,
                   (t.last_used IS NULL OR t.last_used < now() - interval '1 minute')::text
            FROM (SELECT encode(sha256(convert_to($1, 'UTF8')), 'hex') AS hash) AS h
            LEFT JOIN codablesync_tokens t ON t.hash = h.hash
            """, [token])
        guard let row = rows.first, row.count == 5 else {
            throw SyncError(.corruptState, "the token lookup did not answer one row")
        }
        let hashPrefix = row[0] ?? "?"
        guard let name = row[1] else {
            SyncAudit.record(
                "authenticationFailed", "an unknown or revoked bearer token was refused", ["reason": "unknown", "tokenHash": hashPrefix])
            throw SyncError(.unauthorized, Self.unknownTokenMessage)
        }
        if row[3] == "true" {
            SyncAudit.record(
                "authenticationFailed", "an expired bearer token of \(Self.auditValue(name)) was refused",
                ["reason": "expired", "tokenHash": hashPrefix, "account": Self.auditValue(name)])
            throw SyncError(.unauthorized, "the token expired at \(row[2] ?? "?"); ask for a new one")
        }
        if row[4] == "true" {
            // Once a minute at most: the condition again, for requests that raced to here.
            try await log.db.execute("""
                UPDATE codablesync_tokens SET last_used = now()
                WHERE hash = encode(sha256(convert_to($1, 'UTF8')), 'hex') AND (last_used IS NULL OR last_used < now() - interval '1 minute')
                """, [token])
        }
        return SyncAccount(name)
    }

    static let unknownTokenMessage = "the token is not one this server issued, or it was revoked"

    static func hasAccount(_ account: SyncAccount, in db: some Postgres.Queryable) async throws -> Bool {
        try await !db.textRows("SELECT 1::text FROM codablesync_accounts WHERE account = $1", [account.name]).isEmpty
    }

    static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()  // the system's cryptographic source
        return (0..<4).map { _ in String(format: "%016llx", generator.next() as UInt64) }.joined()
    }

    /// A token as stored; its id and expiry (as text, `nil` for never).
    struct Issued {
        let id: String
        let expires: String?
    }

    /// Stores `token`'s hash for `account`; `seconds` from ``lifetimeSeconds(_:)``.
    static func store(_ token: String, for account: SyncAccount, label: String?, seconds: String?, _ tx: Postgres.Transaction) async throws -> Issued {
        let rows = try await tx.textRows("""
            INSERT INTO codablesync_tokens (hash, account, expires, label)
            VALUES (encode(sha256(convert_to($1, 'UTF8')), 'hex'), $2, now() + make_interval(secs => $3::double precision), $4)
            RETURNING left(hash, 12), expires::text
            """, [token, account.name, seconds, label])
        guard let row = rows.first, row.count == 2, let id = row[0] else {
            throw SyncError(.corruptState, "storing a token for \"\(account.name)\" returned no row")
        }
        return Issued(id: id, expires: row[1])
    }

    static func auditIssued(_ issued: Issued, for account: SyncAccount, label: String?) {
        var metadata = ["account": auditValue(account.name), "token": issued.id, "expires": issued.expires ?? "never"]
        if let label { metadata["label"] = auditValue(label) }
        SyncAudit.record("tokenIssued", "a token was issued to \(auditValue(account.name))", metadata)
    }

    /// A lifetime as seconds for SQL (`nil`: never expires), or why it is refused.
    static func lifetimeSeconds(_ lifetime: Duration?) throws -> String? {
        guard let lifetime else { return nil }
        guard lifetime >= .zero, lifetime <= longestTokenLifetime else {
            throw SyncError(
                .invalidArgument, "a token's lifetime must be from 0 to 100 years, not \(lifetime) (nil: a token that never expires)")
        }
        return String(Double(lifetime.components.seconds) + Double(lifetime.components.attoseconds) / 1e18)
    }

    static func checkLabel(_ label: String?) throws {
        guard let label else { return }
        guard !label.isEmpty, label.count <= 100, !hasControlCharacters(label) else {
            throw SyncError(.invalidArgument, "a token's label must be 1 to 100 characters on one line, not \"\(auditValue(label))\"")
        }
    }

    /// Whether `text` has a line break or another control character (an escape sequence in a
    /// terminal, a forged line in a log).
    static func hasControlCharacters(_ text: String) -> Bool {
        text.contains(where: \.isNewline) || text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// `text` made safe for a log line: control characters escaped, at most 100 characters.
    static func auditValue(_ text: String) -> String {
        var safe = ""
        for scalar in text.unicodeScalars.prefix(100) {
            if scalar.properties.generalCategory == .control || scalar.properties.isWhitespace && scalar != " " {
                safe += scalar.escaped(asASCII: true)
            } else {
                safe.unicodeScalars.append(scalar)
            }
        }
        return safe + (text.unicodeScalars.count > 100 ? "…" : "")
    }

    /// A date from `extract(epoch FROM …)::text`.
    private static func date(_ text: String?) -> Date? {
        text.flatMap(Double.init).map { Date(timeIntervalSince1970: $0) }
    }
}
#endif
