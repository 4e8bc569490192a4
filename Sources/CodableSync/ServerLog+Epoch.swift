#if Postgres
import CodablePostgres
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
///   epoch. A server whose log is behind a device's pulled version has gone back in time (a
///   file-system snapshot restored): it takes a new epoch itself. A device that sees a new epoch
///   pulls everything again and uploads the rows the server lacks.
/// - The **horizon** is the newest version whose tombstone ``compact(deletedBefore:)`` has
///   forgotten. A device that pulled last before it would miss deletes: it pulls everything
///   again and deletes the rows the server no longer has.
extension ServerLog {
    /// The epoch and the horizon; a new epoch first when a device of the current one has pulled
    /// further than this log has ever gone (a device of an older epoch starts over anyway, so
    /// that a restore costs one new epoch, not one per device).
    func epoch(after version: Int64, deviceEpoch: String?) async throws -> (epoch: String, horizon: Int64) {
        try await db.inTransaction { tx in
            let current = try await Self.epoch(tx)
            if version > 0, deviceEpoch == nil || deviceEpoch == current.epoch,
               let last = try await tx.textRows("SELECT last_value::text FROM codablesync_changes_version_seq", []).first?.first,
               let issued = last.flatMap({ Int64($0) }), version > issued {
                _ = try await tx.textRows("SELECT pg_advisory_xact_lock(\(Self.lock))::text", [])
                try await tx.execute("UPDATE codablesync_meta SET value = $1 WHERE key = 'epoch'", UUID().uuidString)
                return try await Self.epoch(tx)
            }
            return current
        }
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
            throw SQLite.Sync.Error(.corruptState, "codablesync_meta has no epoch or horizon")
        }
        return (epoch, horizon)
    }

    /// Forgets the tombstones of rows deleted before `date`, and moves the horizon past them.
    func compact(deletedBefore date: Date) async throws -> Int {
        let cutoff = ISO8601DateFormatter().string(from: date)
        return try await db.inTransaction { tx in
            _ = try await tx.textRows("SELECT pg_advisory_xact_lock(\(Self.lock))::text", [])
            let removed = try await tx.textRows("""
                WITH gone AS (DELETE FROM codablesync_changes WHERE deleted AND at < $1::timestamptz RETURNING version),
                moved AS (UPDATE codablesync_meta SET value = greatest(value::bigint, (SELECT coalesce(max(version), 0) FROM gone))::text
                          WHERE key = 'horizon')
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
    /// Pushes keep their tokens and answers for good (one small row each), so a push sent again
    /// at any time is still recognised.
    @discardableResult
    public func compact(deletedBefore date: Date) async throws -> Int {
        try await install()
        return try await log.compact(deletedBefore: date)
    }
}
#endif
