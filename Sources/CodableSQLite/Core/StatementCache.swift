/// The prepared statements of one connection, by SQL text: a segmented least-recently-used cache.
///
/// A statement prepared for the first time enters a small *probation* segment; only a second use
/// promotes it to the *protected* segment, where the hot statements live. One-off SQL (a filter
/// with an `IN` list of a new length, a page number spliced by the caller) therefore only ever
/// evicts other one-off SQL, never the statements an app runs all the time. Each segment drops
/// its least recently used statement when full; a statement in use is never dropped.
///
/// Not thread-safe: owned by one ``RawConnection``, used by whoever holds it.
final class StatementCache {
    private final class Entry {
        let statement: Statement
        var lastUse: UInt64
        var isProtected = false

        init(statement: Statement, lastUse: UInt64) {
            self.statement = statement
            self.lastUse = lastUse
        }
    }

    /// Statements used at least twice.
    static let protectedCapacity = 128
    /// Statements used once so far.
    static let probationCapacity = 32

    private var entries: [String: Entry] = [:]
    /// The entry used last: a loop running the same SQL finds it without hashing the text (a
    /// String comparison of the same storage is one pointer comparison).
    private var mostRecent: Entry?
    private var protectedCount = 0
    private var clock: UInt64 = 0

    /// How many statements are cached.
    var count: Int { entries.count }

    /// The cached statement for `sql`, marked as just used, or `nil`.
    @inline(__always)
    func statement(for sql: String) -> Statement? {
        if let recent = mostRecent, recent.statement.sql == sql {
            clock &+= 1
            recent.lastUse = clock
            return recent.statement
        }
        guard let entry = entries[sql] else { return nil }
        mostRecent = entry
        clock &+= 1
        entry.lastUse = clock
        if !entry.isProtected {
            if protectedCount >= Self.protectedCapacity { evictLeastRecentlyUsed(protected: true) }
            entry.isProtected = true
            protectedCount += 1
        }
        return entry.statement
    }

    /// The cached statement for `sql`, without counting a use (for tests and diagnostics).
    func peek(_ sql: String) -> Statement? {
        entries[sql]?.statement
    }

    /// Caches a statement just prepared, on probation.
    func insert(_ statement: Statement) {
        if entries.count - protectedCount >= Self.probationCapacity { evictLeastRecentlyUsed(protected: false) }
        clock &+= 1
        entries[statement.sql] = Entry(statement: statement, lastUse: clock)
    }

    /// Finalizes every cached statement.
    func removeAll() {
        for entry in entries.values {
            entry.statement.upperLayerCache = nil
            // A statement running now may fill its slot again before its use ends.
            if entry.statement.isInUse { entry.statement.isDetached = true }
        }
        mostRecent = nil
        entries.removeAll()
        protectedCount = 0
    }

    deinit {
        for entry in entries.values { entry.statement.upperLayerCache = nil }
    }

    /// Drops the least recently used statement of one segment that is not in use. Runs only when
    /// a segment is full, once per statement prepared or promoted, so a scan of at most
    /// 160 entries costs far less than the prepare that caused it.
    private func evictLeastRecentlyUsed(protected: Bool) {
        var oldest: (sql: String, lastUse: UInt64)?
        for (sql, entry) in entries where entry.isProtected == protected && !entry.statement.isInUse {
            if entry.lastUse < (oldest?.lastUse ?? .max) { oldest = (sql, entry.lastUse) }
        }
        guard let oldest else { return }
        if mostRecent?.statement.sql == oldest.sql { mostRecent = nil }
        entries[oldest.sql]?.statement.upperLayerCache = nil
        entries[oldest.sql] = nil
        if protected { protectedCount -= 1 }
    }
}
