@testable import CodableSQLite
import Foundation
import Testing

/// The writer's checkpoint policy (`RawConnection+Checkpoint.swift`): a database read all the time
/// keeps a write-ahead log of bounded size.
@Suite("Core: the write-ahead log stays small")
struct CheckpointTests {
    /// Sizes in bytes of the `-wal` file of `path` (0 when there is none).
    static func logSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size]) as? Int) ?? 0
    }

    @Test func constantReadersDoNotMakeTheLogGrowWithoutEnd() throws {
        let path = TestDatabases.temporaryPath("checkpoint")
        let db = try SQLite.Database(path: path)
        try db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY, payload BLOB NOT NULL)")
        try db.write("INSERT INTO t (payload) VALUES (zeroblob(400000))")

        // Three threads hold read snapshots of a few milliseconds without pause, so there is hardly
        // ever a moment with no reader: SQLite's own checkpoint could never start the log again.
        let done = Locked(false)
        let readsDone = Locked(0)
        let readers = (0..<3).map { _ in
            let thread = Thread {
                while !done.withLock({ $0 }) {
                    do {
                        try db.read { conn in
                            _ = try conn.read("SELECT id, length(payload) AS n FROM t")
                            usleep(3_000)
                        }
                        readsDone.withLock { $0 += 1 }
                    } catch {}
                }
            }
            thread.start()
            return thread
        }
        defer { done.withLock { $0 = true } }

        // About 100 MB of pages written in 250 commits, 40 MB more than the restart threshold 2.5 times.
        var largestLog = 0
        for round in 0..<250 {
            try db.write("UPDATE t SET payload = zeroblob(?) WHERE id = 1", arguments: [.integer(Int64(400_000 + round))])
            largestLog = max(largestLog, Self.logSize(path))
        }
        done.withLock { $0 = true }
        for thread in readers { while !thread.isFinished { usleep(1_000) } }

        #expect(readsDone.withLock { $0 } > 0)
        // The restart threshold is 10,000 pages (41 MB at 4 KiB); a restart delayed by busy
        // readers is tried again 1,000 pages (4 MB) later.
        #expect(largestLog < 60_000_000, "the log grew to \(largestLog) bytes")
        let stored = try db.read("SELECT length(payload) AS n FROM t")
        #expect(stored.first?["n"] == .integer(400_249))
        #expect(try db.checkIntegrity().isEmpty)
    }

    @Test func aReadHeldOpenOnTheWritingThreadDelaysTheRestartButNeverTheWrite() throws {
        let path = TestDatabases.temporaryPath("checkpoint-held")
        let db = try SQLite.Database(path: path)
        try db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY, payload BLOB NOT NULL)")
        try db.write("INSERT INTO t (payload) VALUES (zeroblob(400000))")
        let started = Date()
        // A read block that writes: its snapshot stays open while the log passes the threshold,
        // so every restart attempt inside finds a busy reader and gives up after a short wait.
        let count = try db.read { conn in
            _ = try conn.read("SELECT count(*) AS n FROM t")
            for round in 0..<150 {
                try db.write("UPDATE t SET payload = zeroblob(?) WHERE id = 1", arguments: [.integer(Int64(400_000 + round))])
            }
            return try conn.read("SELECT length(payload) AS n FROM t").first?["n"]
        }
        // Whether the read block's snapshot is the first one or not, every write committed, and
        // the writes did not each wait the busy timeout (150 × 5 s).
        #expect(count != nil)
        #expect(Date().timeIntervalSince(started) < 60)
        #expect(try db.read("SELECT length(payload) AS n FROM t").first?["n"] == .integer(400_149))
    }
}
