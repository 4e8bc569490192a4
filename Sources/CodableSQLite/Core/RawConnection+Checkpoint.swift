import CSQLite

/// How the writer keeps the write-ahead log from growing without end.
///
/// SQLite's own automatic checkpoint copies the log back into the database every 1,000 pages but
/// never waits for readers. The log can only start again from its beginning when, at the moment a
/// write begins, no reader is reading an older snapshot out of it. A database that is read all the
/// time (a server, an app with a live query per screen) may never have that moment, and its `-wal`
/// file grows by every page ever written: hundreds of megabytes in a minute, and every read gets
/// slower as the log's index grows.
///
/// The writer therefore replaces the automatic checkpoint with this policy, run after each commit:
/// - from ``passiveCheckpointThreshold`` pages on, a passive checkpoint (what SQLite does by default: it
///   copies what no reader needs, waits for no one);
/// - from ``restartCheckpointThreshold`` pages on, a *restart* checkpoint: it waits a moment
///   (``restartCheckpointWait``) for the readers of older snapshots to finish their statement,
///   copies the whole log back, and the next write starts the log again from its beginning. New
///   reads go on meanwhile; writes wait for it, which happens once per 40 MB written. When readers
///   are still busy after the moment, it is tried again 1,000 pages later, so a long read costs
///   the writer a few short waits rather than one long one.
///
/// Either checkpoint failing (busy readers, a full disk) loses nothing: the log keeps the pages
/// and a later commit tries again. `Tests/…/Core/CheckpointTests.swift` shows the log staying
/// small under constant reads.
extension RawConnection {
    /// Pages in the log from which a commit runs a passive checkpoint (SQLite's default).
    static let passiveCheckpointThreshold: Int32 = 1_000
    /// Pages in the log from which a commit waits for readers and restarts it (40 MB of 4 KiB pages).
    static let restartCheckpointThreshold: Int32 = 10_000
    /// How long, in milliseconds, a restart checkpoint waits for readers (or less: the busy timeout).
    static let restartCheckpointWait: Int32 = 100

    /// Installs the checkpoint policy above on this (writer) connection.
    func installCheckpointPolicy() {
        nextRestartCheckpoint = RawConnection.restartCheckpointThreshold
        sqlite3_wal_hook(handle, { context, handle, schema, pages in
            guard let context, let handle else { return SQLITE_OK }
            let connection = Unmanaged<RawConnection>.fromOpaque(context).takeUnretainedValue()
            if pages >= connection.nextRestartCheckpoint {
                sqlite3_busy_timeout(handle, min(RawConnection.restartCheckpointWait, connection.busyTimeoutMilliseconds))
                let result = sqlite3_wal_checkpoint_v2(handle, schema, SQLITE_CHECKPOINT_RESTART, nil, nil)
                sqlite3_busy_timeout(handle, connection.busyTimeoutMilliseconds)
                connection.nextRestartCheckpoint = result == SQLITE_OK
                    ? RawConnection.restartCheckpointThreshold
                    : pages.addingReportingOverflow(RawConnection.passiveCheckpointThreshold).partialValue
            } else if pages >= RawConnection.passiveCheckpointThreshold {
                _ = sqlite3_wal_checkpoint_v2(handle, schema, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            } else {
                connection.nextRestartCheckpoint = RawConnection.restartCheckpointThreshold  // the log started again
            }
            // The commit already succeeded: a checkpoint's result must not turn it into an error.
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }
}
