// Soak test (outside `swift test`): 8 writers and 8 readers, sync and async, models and SQL, with
// live observations, for a given time on one WAL file. At the end every writer's count must be
// exact, and resident memory must not have grown after the first quarter of the run (30 s of the
// 2-minute CI run).
//
//   swift run -c release soak [seconds, default 120]
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
                            try db.inTransaction {
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
            }
            // Memory: sampled every second; the first quarter is warm-up.
            group.addTask {
                var warm: Double?
                var peak = 0.0
                let warmUntil = Date().addingTimeInterval(seconds / 4)
                while Date() < deadline {
                    try? await Task.sleep(nanoseconds: 1_000_000_000)
                    let now = residentMegabytes()
                    if Date() >= warmUntil {
                        if warm == nil { warm = now }
                        peak = max(peak, now)
                    }
                }
                let base = warm ?? 0
                print(String(format: "soak: resident memory %.1f MB after the warm-up, %.1f MB at most after it", base, peak))
                if peak > base * 1.2 + 16 { fail(String(format: "resident memory grew from %.1f MB to %.1f MB", base, peak)) }
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
        try? FileManager.default.removeItem(atPath: path)
    }
}
