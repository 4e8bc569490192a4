#if Postgres
import CodablePostgres
import CodableSyncProtocol
import Foundation

/// Which server a device talks to, and how far back its log goes:
///
/// ```
/// codablesync_meta(key PRIMARY KEY, value)   -- 'epoch' (made once), 'horizon' (a version)
/// ```
///
/// - The **epoch** names the server's history: the id made when the log was created, the
///   database's oid, and (where the role may read them) the cluster's system identifier and
///   timeline. A database restored from a dump (a new oid), a cluster restored from a base
///   backup or a replica promoted after a failover (a new timeline or system) each has another
///   epoch. A device that sees a new epoch pulls everything again and uploads its rows. A device
///   whose pulled version is ahead of everything the log has issued (a file-system snapshot of
///   the server restored) is told so, and does the same.
/// - The **horizon** is the newest version whose tombstone ``compact(deletedBefore:)`` has
///   forgotten. A device that pulled last before it would miss deletes: it pulls everything
///   again and deletes the rows the server no longer has.
extension ServerLog {
    /// The epoch and the horizon, and whether a device that pulled up to `version` of this epoch
    /// is ahead of everything this log has ever issued (the server went back in time under it:
    /// that device alone starts over, so no client can make every device start over).
    func epoch(after version: Int64, deviceEpoch: String?, in tx: Postgres.Transaction) async throws -> (epoch: String, horizon: Int64, ahead: Bool) {
        let current = try await Self.epoch(tx)
        guard version > 0, deviceEpoch == current.epoch,
              let last = try await tx.textRows("SELECT last_value::text FROM codablesync_changes_version_seq", []).first?.first,
              let issued = last.flatMap({ Int64($0) }) else { return (current.epoch, current.horizon, false) }
        return (current.epoch, current.horizon, version > issued)
    }

    /// The horizon alone (a push's changes made over a version before it may link rows whose
    /// tombstones are forgotten).
    func horizon(_ tx: Postgres.Transaction) async throws -> Int64 {
        try await tx.textRows("SELECT value FROM codablesync_meta WHERE key = 'horizon'", []).first?.first?.flatMap { Int64($0) } ?? 0
    }

    private static func epoch(_ tx: Postgres.Transaction) async throws -> (epoch: String, horizon: Int64) {
        let row = try await tx.textRows("""
            SELECT concat_ws('/', (SELECT value FROM codablesync_meta WHERE key = 'epoch'),
                (SELECT oid::text FROM pg_database WHERE datname = current_database()),
                CASE WHEN has_function_privilege('pg_control_system()', 'EXECUTE')
                    THEN (SELECT system_identifier::text FROM pg_control_system()) END,
                CASE WHEN has_function_privilege('pg_control_checkpoint()', 'EXECUTE')
                    THEN (SELECT timeline_id::text FROM pg_control_checkpoint()) END),
                (SELECT value FROM codablesync_meta WHERE key = 'horizon')
            """, []).first
        guard let row, row.count == 2, let epoch = row[0], let horizon = row[1].flatMap({ Int64($0) }) else {
            throw SyncError(.corruptState, "codablesync_meta has no epoch or horizon")
        }
        return (epoch, horizon)
    }

    /// Forgets the tombstones of rows deleted before `date`, and moves the horizon past them.
    func compact(deletedBefore date: Date) async throws -> Int {
        let cutoff = ISO8601DateFormatter().string(from: date)
        return try await db.inTransaction { tx in
            _ = try await tx.textRows("SELECT pg_advisory_xact_lock(\(Self.lock))::text", [])
            let removed = try await tx.textRows("""
                WITH gone AS (DELETE FROM codablesync_changes WHERE deleted AND at < $1::timestamptz RETURNING version, tbl, id),
                moved AS (UPDATE codablesync_meta SET value = greatest(value::bigint, (SELECT coalesce(max(version), 0) FROM gone))::text
                          WHERE key = 'horizon'),
                -- Who could read them, and the removals before the horizon: a device behind it
                -- starts over, which removes what is not in its scope any more.
                audience AS (DELETE FROM codablesync_audience a USING gone g WHERE a.tbl = g.tbl AND a.id = g.id),
                removals AS (DELETE FROM codablesync_removals WHERE version <= (SELECT max(version) FROM gone)),
                -- The push ledger, with the same retention: each device's newest push stays (its
                -- retry is the one that can still come), older ones go.
                pushes AS (DELETE FROM codablesync_pushes p WHERE p.at < $1::timestamptz
                           AND NOT EXISTS (SELECT 1 FROM codablesync_devices d WHERE d.token = p.token))
                SELECT count(*)::text FROM gone
                """, [cutoff]).first?.first
            return removed.flatMap { $0.flatMap { Int($0) } } ?? 0
        }
    }
}

extension Postgres.SyncServer {
    /// Forgets the tombstones (the log's entries of deleted rows) older than `date`, so that the
    /// log does not grow with every row ever deleted; returns how many it forgot. A device that
    /// last pulled before the newest of them (offline longer than that) then starts over: it
    /// pulls everything again and deletes the rows the server no longer has; its changes not
    /// pushed yet are kept and pushed. Run it now and then (daily, say, keeping 90 days).
    ///
    /// ```swift
    /// try await syncServer.compact(deletedBefore: Date.now.addingTimeInterval(-90 * 86_400))
    /// ```
    ///
    /// The push ledger (each push's token and the shape of its answer, without values) is pruned
    /// with the same cutoff, except each device's newest push: a device sends a push again until
    /// it is answered, so its newest is the one a retry can name. A copy of a push older than the
    /// cutoff that arrives again (a network's duplicate kept for that long) is not recognised.
    @discardableResult
    public func compact(deletedBefore date: Date) async throws -> Int {
        try await install()
        return try await log.compact(deletedBefore: date)
    }

    /// The server's retention, enforced: compacts now and then every `interval`, forgetting
    /// tombstones and pushes older than `retention`, until the task is cancelled. Every server
    /// process of a fleet may run it (compactions take the log's order lock, one at a time). A
    /// compaction that fails (the database unreachable) is tried again at the next interval.
    ///
    /// ```swift
    /// try await withThrowingDiscardingTaskGroup { group in
    ///     group.addTask { try await syncServer.enforceRetention(.seconds(90 * 86_400)) }
    ///     group.addTask { try await app.runService() }
    /// }
    /// ```
    ///
    /// A device offline longer than `retention` starts over when it comes back (it pulls
    /// everything again; its changes not pushed yet are kept), and so does a copy of a file older
    /// than it; a push older than it delivered again is refused (`startOverNeeded`).
    ///
    /// - Throws: `CancellationError` when cancelled; `SyncError.Code.invalidArgument` for a
    ///   retention or interval that is not positive.
    public func enforceRetention(_ retention: Duration, every interval: Duration = .seconds(3_600)) async throws {
        guard retention > .zero, interval > .zero else {
            throw SyncError(.invalidArgument, "a retention and its interval must be positive, not \(retention) and \(interval)")
        }
        let seconds = Double(retention.components.seconds) + Double(retention.components.attoseconds) / 1e18
        while true {
            try Task.checkCancellation()
            do {
                try await compact(deletedBefore: Date().addingTimeInterval(-seconds))
            } catch let error as CancellationError {
                throw error
            } catch {
                // Unreachable now: the next interval tries again.
            }
            try await Task.sleep(for: interval)
        }
    }
}
#endif
