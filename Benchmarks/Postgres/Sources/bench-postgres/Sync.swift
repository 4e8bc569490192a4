// Offline-first sync (CodableSync; no other Swift library syncs SQLite through PostgreSQL, so
// there is no contender): two devices (SQLite files, as two app installs) and one server.
//   push: device A saved `count` new rows offline; the time of A's sync (its pushes, then its
//         pull of the server's log, which brings A's own rows back once);
//   pull: device B's first sync receives them;
//   and the same with every row updated on B (B pushes, A pulls);
//   (--initial-only: these two, for a large row count)
//   latency: both devices in run(), polling only every 10 minutes; the time from A's save to
//         the row being in B's file (A's commit wakes A, the server's NOTIFY wakes B).
// Memory: the resident size the process grew by while B's first sync received the rows (sampled
// every 10 ms; Linux), which streamed batches keep bounded whatever the row count.
import CodableSync
import Foundation

struct SyncedItem: UUIDModel, Sendable, Equatable {
    let id: UUID
    var title: String
    var score: Double
    var done: Bool
    var created: Date
}

struct SyncTimings {
    var pushNew = 0.0, pullNew = 0.0, pushUpdates = 0.0, pullUpdates = 0.0
    var latencies: [Double] = []
    var pullGrowthMegabytes = 0.0
}

func syncBenchmark(url: String, count: Int, rounds: Int, initialOnly: Bool = false) async throws -> SyncTimings {
    let server = try await Postgres.Database(url: url)
    for table in ["SyncedItem", "codablesync_changes", "codablesync_devices"] {
        try await server.execute("DROP TABLE IF EXISTS \"\(table)\" CASCADE")
    }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bench-sync-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let a = try SQLite.Database(path: folder.appendingPathComponent("a.sqlite").path)
    let b = try SQLite.Database(path: folder.appendingPathComponent("b.sqlite").path)
    let syncA = try SQLite.Sync(local: a, server: server, models: [SyncedItem.self], pollInterval: .seconds(600))
    let syncB = try SQLite.Sync(local: b, server: server, models: [SyncedItem.self], pollInterval: .seconds(600))
    _ = try await syncA.deviceID   // the outbox and triggers exist before the rows are saved
    _ = try await syncB.deviceID

    var result = SyncTimings()
    let start = Date(timeIntervalSinceReferenceDate: 800_000_000)
    var items = (0..<count).map { SyncedItem(id: UUID(), title: "item \($0)", score: Double($0) / 7, done: $0 % 3 == 0, created: start + Double($0)) }
    try await a.inTransaction { tx in _ = try await tx.save(items) }
    result.pushNew = try await measure { try await syncA.sync() }
    let before = residentMegabytes()
    let sampling = Task {
        var peak = before
        while !Task.isCancelled {
            peak = max(peak, residentMegabytes())
            try? await Task.sleep(for: .milliseconds(10))
        }
        return max(peak, residentMegabytes())
    }
    result.pullNew = try await measure { try await syncB.sync() }
    sampling.cancel()
    result.pullGrowthMegabytes = await sampling.value - before
    guard try await b.count(SyncedItem.self) == count else { throw BenchError("B did not receive every row") }
    if initialOnly {
        await server.close()
        return result
    }
    for index in items.indices { items[index].title += " (updated)"; items[index].done.toggle() }
    try await b.inTransaction { tx in _ = try await tx.save(items) }
    result.pushUpdates = try await measure { try await syncB.sync() }
    result.pullUpdates = try await measure { try await syncA.sync() }
    guard try await a.get(SyncedItem.self, id: items[count / 2].id) == items[count / 2] else { throw BenchError("A did not receive B's update") }

    let runningA = Task { try await syncA.run() }
    let runningB = Task { try await syncB.run() }
    try await Task.sleep(for: .seconds(1))   // both listening
    for round in 0..<rounds {
        var item = items[round]
        item.title = "latency round \(round)"
        let begin = ContinuousClock.now
        try await a.save(item)
        while try await b.get(SyncedItem.self, id: item.id)?.title != item.title {
            try await Task.sleep(for: .microseconds(200))
            if ContinuousClock.now - begin > .seconds(30) { throw BenchError("a change took over 30 s to reach the other device") }
        }
        let elapsed = ContinuousClock.now - begin
        result.latencies.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
    runningA.cancel()
    runningB.cancel()
    _ = await runningA.result
    _ = await runningB.result
    await server.close()
    return result
}

func printSync(_ timings: SyncTimings, count: Int, initialOnly: Bool = false) {
    func seconds(_ value: Double) -> String { String(format: "%.2f s", value) }
    func rate(_ value: Double) -> String { String(format: "%.0f rows/s", Double(count) / value) }
    print("")
    print("sync (CodableSync), \(count) rows, batches of 500 | time | rate")
    print("---|---|---")
    print("A pushes \(count) new rows (and pulls its own back) | \(seconds(timings.pushNew)) | \(rate(timings.pushNew))")
    print("B's first sync receives them | \(seconds(timings.pullNew)) | \(rate(timings.pullNew))")
    if initialOnly {
        print("memory: the process grew by \(String(format: "%.1f MB", timings.pullGrowthMegabytes)) while B received the \(count) rows")
        return
    }
    print("B pushes \(count) updates (and pulls its own back) | \(seconds(timings.pushUpdates)) | \(rate(timings.pushUpdates))")
    print("A receives them | \(seconds(timings.pullUpdates)) | \(rate(timings.pullUpdates))")
    print("")
    print("one change from device A to device B, both in run() (\(timings.latencies.count) rounds) | median | 95th percentile")
    print("---|---|---")
    print("A saves → the row is in B's file | \(String(format: "%.2f ms", median(timings.latencies) * 1000)) | \(String(format: "%.2f ms", percentile95(timings.latencies) * 1000))")
    print("")
    print("memory: the process grew by \(String(format: "%.1f MB", timings.pullGrowthMegabytes)) while B received the \(count) rows")
}

/// The process's resident memory now, from /proc/self/statm (0 where there is none).
func residentMegabytes() -> Double {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = statm.split(separator: " ")
    guard fields.count > 1, let pages = Double(fields[1]) else { return 0 }
    return pages * 4096 / 1_048_576
}
