// Soak test (outside `swift test`): 8 writers and 8 readers, sync and async, models and SQL, with
// live observations, for a given time on one WAL file. It fails if any operation fails, if a
// writer's count is not exact at the end, if the database is damaged, if the write-ahead log grows
// past twice the writer's restart threshold, or if the heap memory in use after the database is
// closed exceeds what it was before it opened by more than 8 MB (a leak of a few bytes per
// operation shows there). Resident memory is reported: it includes what the allocator keeps for
// reuse, which is not a leak.
//
//   swift run -c release soak [seconds, default 120]
import CHeapUsage
import CodableSQLite
import Foundation

struct SoakItem: Codable, Model, Sendable {
    var id: Int64?
    var writer: Int
    var n: Int
    var note: String
}

/// A counter shared by threads and tasks.
final class Counter: @unchecked Sendable {  // guarded by `lock`
    private let lock = NSLock()
    private var value = 0
    func add(_ amount: Int = 1) { lock.lock(); value += amount; lock.unlock() }
    var current: Int { lock.lock(); defer { lock.unlock() }; return value }
}

func residentMegabytes() -> Double {
    #if os(Linux)
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
          let pages = statm.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return 0 }
    return Double(pages * Int(sysconf(Int32(_SC_PAGESIZE)))) / 1_048_576
    #else
    return 0
    #endif
}

func fail(_ message: String) -> Never {
    print("soak: FAILED: \(message)")
    exit(1)
}

@main
enum Soak {
    static func main() async {
        let seconds = Double(CommandLine.arguments.dropFirst().first ?? "120") ?? 120
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("soak-\(UUID().uuidString).sqlite").path
        let heapBefore = cheapusage_bytes_in_use()
        let isClosed = await run(seconds: seconds, path: path)
        // Async work that ended may still be releasing its last references on its queue.
        for _ in 0..<50 where !isClosed() { try? await Task.sleep(nanoseconds: 100_000_000) }
        if !isClosed() { fail("the database was not released 5 seconds after its last use") }
        // The database, its connections, caches and observations are gone: what they allocated must be too.
        let heapAfter = cheapusage_bytes_in_use()
        let grown = (Double(heapAfter) - Double(heapBefore)) / 1_048_576
        print(String(format: "soak: heap in use %.1f MB before the database opened, %.1f MB after it closed", Double(heapBefore) / 1_048_576, Double(heapAfter) / 1_048_576))
        if grown > 8 { fail(String(format: "%.1f MB of heap memory not given back: a leak", grown)) }
        try? FileManager.default.removeItem(atPath: path)
        print("soak: passed")
    }

    /// Runs the soak; returns whether the database has been released.
    static func run(seconds: Double, path: String) async -> @Sendable () -> Bool {
        let db: SQLite.Database
        do {
            db = try SQLite.Database(path: path)
            try await db.execute(raw: "CREATE TABLE events (writer INTEGER NOT NULL, n INTEGER NOT NULL)")
            try await db.save(SoakItem(id: nil, writer: -1, n: 0, note: "seed"))
        } catch {
            fail("cannot open \(path): \(error)")
        }
        let deadline = Date().addingTimeInterval(seconds)
        let events = (0..<8).map { _ in Counter() }      // SQL rows each writer committed
        let items = (0..<8).map { _ in Counter() }       // models each writer committed
        let reads = Counter()
        let observed = Counter()
        let failures = Counter()

        @Sendable func record(_ error: any Error, _ who: String) {
            failures.add()
            print("soak: \(who): \(error)")
        }

        // Writers 0–3: synchronous, on threads of their own.
        let threads = (0..<4).map { writer in
            let thread = Thread {
                var n = 0
                while Date() < deadline {
                    do {
                        if n % 3 == 0 {
                            try db.inTransaction { _ in
                                try db.write("INSERT INTO events VALUES (?, ?)", arguments: [.integer(Int64(writer)), .integer(Int64(n))])
                                try db.save(SoakItem(id: nil, writer: writer, n: n, note: "sync in a transaction"))
                            }
                            events[writer].add()
                            items[writer].add()
                        } else {
                            try db.write("INSERT INTO events VALUES (?, ?)", arguments: [.integer(Int64(writer)), .integer(Int64(n))])
                            events[writer].add()
                        }
                    } catch {
                        record(error, "sync writer \(writer)")
                    }
                    n += 1
                }
            }
            thread.start()
            return thread
        }

        // Readers 0–3: synchronous too.
        let readerThreads = (0..<4).map { reader in
            let thread = Thread {
                while Date() < deadline {
                    do {
                        if reader % 2 == 0 {
                            _ = try db.read("SELECT writer, count(*) AS n FROM events GROUP BY writer")
                        } else {
                            _ = try db.get(with: Filter(\SoakItem.writer, is: .equal(to: reader)).sort(by: \.n, ascending: false).limit(20))
                        }
                        reads.add()
                    } catch {
                        record(error, "sync reader \(reader)")
                    }
                }
            }
            thread.start()
            return thread
        }

        // Writers 4–7 and readers 4–7: async, and two live observations.
        await withTaskGroup(of: Void.self) { group in
            for writer in 4..<8 {
                group.addTask {
                    var n = 0
                    while Date() < deadline {
                        do {
                            if n % 2 == 0 {
                                try await db.save(SoakItem(id: nil, writer: writer, n: n, note: "async"))
                                items[writer].add()
                            } else {
                                try await db.write("INSERT INTO events VALUES (?, ?)", arguments: [.integer(Int64(writer)), .integer(Int64(n))])
                                events[writer].add()
                            }
                        } catch {
                            record(error, "async writer \(writer)")
                        }
                        n += 1
                    }
                }
            }
            for reader in 4..<8 {
                group.addTask {
                    while Date() < deadline {
                        do {
                            if reader % 2 == 0 {
                                _ = try await db.count(with: Filter(\SoakItem.n, is: .greater(than: 10)))
                            } else {
                                _ = try await db.read { conn in try conn.read("SELECT max(n) AS m FROM events") }
                            }
                            reads.add()
                        } catch {
                            record(error, "async reader \(reader)")
                        }
                    }
                }
            }
            group.addTask {
                let watcher = Task {
                    for try await _ in db.observe(Int.self, using: "SELECT count(*) FROM events") { observed.add() }
                }
                let batches = Task {
                    for try await _ in db.changes(to: SoakItem.self) { observed.add() }
                }
                while Date() < deadline { try? await Task.sleep(nanoseconds: 100_000_000) }
                watcher.cancel()
                batches.cancel()
                _ = await (watcher.result, batches.result)
            }
            // Memory and the log, sampled every second.
            group.addTask {
                var peak = 0.0
                var largestLog = 0
                var seconds = 0
                while Date() < deadline {
                    try? await Task.sleep(nanoseconds: 1_000_000_000)
                    seconds += 1
                    let resident = residentMegabytes()
                    peak = max(peak, resident)
                    let log = ((try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size]) as? Int) ?? 0
                    largestLog = max(largestLog, log)
                    if seconds % 15 == 0 {
                        let file = ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0
                        print(String(format: "soak: %3d s, resident memory %.1f MB, database %.1f MB, write-ahead log %.1f MB", seconds, resident, Double(file) / 1_048_576, Double(log) / 1_048_576))
                    }
                }
                print(String(format: "soak: resident memory %.1f MB at most, write-ahead log %.1f MB at most", peak, Double(largestLog) / 1_048_576))
                // The writer restarts the log from 10,000 pages (40 MB) on; busy readers can delay that a little.
                if largestLog > 100 * 1_048_576 { fail("the write-ahead log grew to \(largestLog) bytes") }
            }
        }
        for thread in threads + readerThreads { while !thread.isFinished { usleep(10_000) } }

        // Exact counts.
        do {
            for writer in 0..<8 {
                let rows = try await db.read("SELECT count(*) AS n FROM events WHERE writer = ?", arguments: [.integer(Int64(writer))])
                let stored = rows.first?["n"]?.intValue ?? -1
                if stored != events[writer].current { fail("writer \(writer): \(events[writer].current) events committed, \(stored) stored") }
                let models = try await db.count(with: Filter(\SoakItem.writer, is: .equal(to: writer)))
                if models != items[writer].current { fail("writer \(writer): \(items[writer].current) models saved, \(models) stored") }
            }
            let problems = try await db.checkIntegrity()
            if !problems.isEmpty { fail("integrity: \(problems)") }
        } catch {
            fail("verification: \(error)")
        }
        if failures.current > 0 { fail("\(failures.current) operations failed") }
        let writes = events.map(\.current).reduce(0, +) + items.map(\.current).reduce(0, +)
        print("soak: \(Int(seconds)) s, \(writes) writes, \(reads.current) reads, \(observed.current) observed values and batches, exact counts, integrity ok")
        return { [weak db] in db == nil }
    }
}
