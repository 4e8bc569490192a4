#if Postgres
import CodablePostgres
import CodableSyncProtocol
import Foundation

extension Postgres.SyncServer {
    // MARK: Shares by invitation

    /// The row form of ``offerShare(_:with:access:by:)``.
    package func offerShare(table: String, id: String, with account: SyncAccount, access: SyncAccess = .readWrite, by owner: SyncAccount) async throws {
        let (model, serverID) = try await ownedRow(table: table, id: id, by: owner, toDo: "share")
        let stored = try await log.db.inTransaction { tx in
            try await ensureOffers(tx)
            return try await tx.textRows("""
                INSERT INTO codablesync_offers (tbl, id, account, owner, writable)
                SELECT $1, $2, account, $4, $5::boolean FROM codablesync_accounts WHERE account = $3
                ON CONFLICT (tbl, id, account, owner) DO UPDATE SET writable = EXCLUDED.writable, created = now()
                RETURNING account
                """, [model.table, serverID, account.name, owner.name, access == .readWrite ? "true" : "false"])
        }
        SyncAudit.record(
            "shareOffered",
            "\(Self.auditValue(owner.name)) offered to share \(model.name) \(serverID) with \(Self.auditValue(account.name))"
                + (stored.isEmpty ? ", which is no account: the offer reaches no one" : ""),
            ["account": Self.auditValue(owner.name), "target": Self.auditValue(account.name), "table": model.table, "id": serverID,
             "access": access.rawValue, "reason": stored.isEmpty ? "unknownAccount" : ""].filter { !$0.value.isEmpty })
    }

    /// Offers `account` a share of `value`'s row (with every row it links), which
    /// reaches it only once it accepts (``acceptShare(table:id:from:as:)``; it sees its offers with
    /// ``pendingShares(for:)``). Offering again replaces the offer's access;
    /// ``revokeShare(_:from:by:)`` withdraws it. Audited (`shareOffered`).
    ///
    /// ```swift
    /// try await syncServer.offerShare(list, with: bob, access: .read, by: alice)
    /// ```
    ///
    /// As with ``share(_:with:access:by:)``, ownership is checked first, and an offer to a
    /// name that is no account succeeds and reaches no one (nothing is stored): the answer does
    /// not tell which names exist.
    ///
    /// - Throws: `SyncError.Code.forbidden` when `owner` does not own the row (or it does
    ///   not exist), `.invalidArgument` for a table that is not a synced model's or an id that is
    ///   not one of its.
    public func offerShare<T: Model>(_ value: T, with account: SyncAccount, access: SyncAccess = .readWrite, by owner: SyncAccount) async throws {
        try await offerShare(table: T.tableName, id: SyncedModel.idText(value), with: account, access: access, by: owner)
    }

    /// The shares offered to `account` that it has not accepted or declined, oldest first.
    ///
    /// ```swift
    /// let offers = try await syncServer.pendingShares(for: bob)
    /// ```
    public func pendingShares(for account: SyncAccount) async throws -> [SyncPendingShare] {
        try await install()
        guard try await hasOffersTable(log.db) else { return [] }
        let rows = try await log.db.textRows("""
            SELECT tbl, id, owner, writable::text, extract(epoch FROM created)::text
            FROM codablesync_offers WHERE account = $1 ORDER BY created, tbl, id, owner
            """, [account.name])
        return try rows.map { row in
            guard row.count == 5, let table = row[0], let id = row[1], let owner = row[2], let epoch = row[4].flatMap(Double.init) else {
                throw SyncError(.corruptState, "a row of codablesync_offers for \"\(account.name)\" has empty columns")
            }
            // The id as devices write it (a UUID in capitals), not as the server stores it.
            let canonical = models.first { $0.table == table }?.canonicalID(id) ?? id
            return SyncPendingShare(
                table: table, id: canonical, from: SyncAccount(owner), access: row[3] == "true" ? .readWrite : .read,
                created: Date(timeIntervalSince1970: epoch))
        }
    }

    /// Accepts a share `owner` offered `account`: from now on it is a share as
    /// ``share(_:with:access:by:)`` makes, and the rows reach the account's devices at their
    /// next pull. Audited (`shareAccepted`).
    ///
    /// ```swift
    /// try await syncServer.acceptShare(table: "List", id: listID, from: alice, as: bob)
    /// ```
    ///
    /// - Throws: `SyncError.Code.invalidArgument` when there is no such offer (never
    ///   made, withdrawn, declined or accepted already), or `owner` no longer owns the row (the
    ///   offer is dropped then).
    public func acceptShare(table: String, id: String, from owner: SyncAccount, as account: SyncAccount) async throws {
        try await install()
        let (model, serverID) = try rowNamed(table: table, id: id)
        // nil: accepted; otherwise why not (the offer's removal is kept either way).
        let refusal: String? = try await log.db.inTransaction { tx in
            // The server's lock first, as revokeShare takes it (before the offer's row).
            try await ServerLog.lockScopes(tx)
            try await ensureOffers(tx)
            let taken = try await tx.textRows("""
                DELETE FROM codablesync_offers WHERE tbl = $1 AND id = $2 AND account = $3 AND owner = $4 RETURNING writable::text
                """, [model.table, serverID, account.name, owner.name])
            guard let writable = taken.first?.first else {
                return "\(owner.name) has not offered \(account.name) a share of \(model.name) \(id) (or it was withdrawn or answered already)"
            }
            let owns = try await tx.textRows(
                "SELECT 1::text FROM codablesync_owners WHERE tbl = $1 AND id = $2 AND account = $3", [model.table, serverID, owner.name])
            guard !owns.isEmpty else { return "\(owner.name) no longer owns \(model.name) \(id): its offer is void" }
            _ = try await addShare(model: model, serverID: serverID, with: account, access: writable == "true" ? .readWrite : .read, tx)
            return nil
        }
        if let refusal { throw SyncError(.invalidArgument, refusal) }
        SyncAudit.record(
            "shareAccepted", "\(Self.auditValue(account.name)) accepted the share of \(model.name) \(serverID) from \(Self.auditValue(owner.name))",
            ["account": Self.auditValue(account.name), "target": Self.auditValue(owner.name), "table": model.table, "id": serverID])
    }

    /// Declines a share `owner` offered `account`: the offer is dropped, nothing reaches the
    /// account (the owner may offer again). Audited (`shareDeclined`).
    ///
    /// ```swift
    /// try await syncServer.declineShare(table: "List", id: listID, from: mallory, as: bob)
    /// ```
    ///
    /// - Throws: `SyncError.Code.invalidArgument` when there is no such offer.
    public func declineShare(table: String, id: String, from owner: SyncAccount, as account: SyncAccount) async throws {
        try await install()
        let (model, serverID) = try rowNamed(table: table, id: id)
        let taken = try await log.db.inTransaction { tx in
            try await ensureOffers(tx)
            return try await tx.textRows(
                "DELETE FROM codablesync_offers WHERE tbl = $1 AND id = $2 AND account = $3 AND owner = $4 RETURNING 1::text",
                [model.table, serverID, account.name, owner.name])
        }
        guard !taken.isEmpty else {
            throw SyncError(
                .invalidArgument, "\(owner.name) has not offered \(account.name) a share of \(model.name) \(id) (or it was withdrawn or answered already)")
        }
        SyncAudit.record(
            "shareDeclined", "\(Self.auditValue(account.name)) declined the share of \(model.name) \(serverID) from \(Self.auditValue(owner.name))",
            ["account": Self.auditValue(account.name), "target": Self.auditValue(owner.name), "table": model.table, "id": serverID])
    }

    /// Drops the offers of a row to `account` (``revokeShare(_:from:by:)``), under the
    /// server's lock.
    func withdrawOffers(table: String, id: String, from account: SyncAccount, _ tx: Postgres.Transaction) async throws {
        guard try await hasOffersTable(tx) else { return }
        try await tx.execute("DELETE FROM codablesync_offers WHERE tbl = $1 AND id = $2 AND account = $3", [table, id, account.name])
    }

    private func hasOffersTable(_ db: some Postgres.Queryable) async throws -> Bool {
        try await db.textRows("SELECT to_regclass('codablesync_offers')::text", []).first?.first.flatMap { $0 } != nil
    }

    /// The offers' table, made on first use (under the server's lock, so that two servers do not
    /// race to create it): servers that never offer a share have none.
    private func ensureOffers(_ tx: Postgres.Transaction) async throws {
        guard try await !hasOffersTable(tx) else { return }
        try await ServerLog.lockScopes(tx)
        try await tx.execute("""
            CREATE TABLE IF NOT EXISTS codablesync_offers (
                tbl text, id text, account text, owner text, writable boolean NOT NULL, created timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (tbl, id, account, owner))
            """)
        try await tx.execute("CREATE INDEX IF NOT EXISTS codablesync_offers_account ON codablesync_offers (account)")
    }
}
#endif
