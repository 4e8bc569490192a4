// Live queries on PostgreSQL (CodablePostgres only: Fluent has none).
//   latency: instance 1 saves one row; instance 2 (another Postgres.Database, as another app
//   would be) observes a 1,000-row list and the row by id; the time from the start of the save
//   to the observer holding the new value, through LISTEN/NOTIFY.
//   cost: A and D again on a table that is observed (its notify triggers installed).
import CodablePostgres
import Foundation

struct ObservationTimings {
    var listLatencies: [Double] = []
    var rowLatencies: [Double] = []
    var listReads: [Double] = []
    var rowReads: [Double] = []
    var plainA = 0.0
    var plainD = 0.0
    var observedA = 0.0
    var observedD = 0.0
}

func observation(_ work: Workload, rounds: Int) async throws -> ObservationTimings {
    var result = ObservationTimings()
    let writer = try await Postgres.Database(url: work.url)
    let reader = try await Postgres.Database(url: work.url)
    let firstThousand = Filter(\Item.id, is: .less(than: 1001)).sort(by: \.id)
    var base = try await writer.get(with: firstThousand)
    guard base.count == 1000 else { throw BenchError("expected 1,000 items, found \(base.count)") }
    // What one read costs, for comparison: the part of the latency that is not notification.
    for _ in 0..<20 {
        result.listReads.append(try await measure { _ = try await reader.get(with: firstThousand) })
        result.rowReads.append(try await measure { _ = try await reader.get(Item.self, id: base[499].id) })
    }

    // The observed list and row hand each new value's marker (a title) to the loop below.
    for (label, byID) in [("list", false), ("row", true)] {
        let (markers, continuation) = AsyncStream.makeStream(of: [String].self)
        let watched = base[499].id
        let observing = Task {
            if byID {
                for try await item in reader.observe(Item.self, id: watched) { continuation.yield([item?.title ?? ""]) }
            } else {
                for try await items in reader.observe(firstThousand) { continuation.yield(items.map(\.title)) }
            }
        }
        var iterator = markers.makeAsyncIterator()
        _ = await iterator.next()  // the current value
        for round in 0..<rounds {
            let marker = "\(label) round \(round)"
            base[499].title = marker
            let start = ContinuousClock.now
            try await writer.save(base[499])
            while let titles = await iterator.next(), !titles.contains(marker) {}
            let elapsed = ContinuousClock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            if byID { result.rowLatencies.append(seconds) } else { result.listLatencies.append(seconds) }
        }
        observing.cancel()
        continuation.finish()
    }

    await reader.close()
    await writer.close()

    // Writes to an observed table: A and D with and without the notify triggers, alternating
    // (twice each, the faster kept), each on a fresh connection pool.
    for round in 0..<4 {
        let observed = round % 2 == 1
        let db = try await Postgres.Database(url: work.url)
        try await db.execute("DELETE FROM \"Item\"")
        var counting: Task<Void, any Error>?
        if observed {
            counting = Task { for try await _ in db.observe(count: Filter<Item>()) {} }
            _ = try await db.changes(to: Item.self)  // returns once the triggers and the listener are ready
        } else {
            for trigger in ["insert", "update", "delete", "truncate"] {
                try await db.execute("DROP TRIGGER IF EXISTS codablepostgres_notify_\(trigger) ON \"Item\"")
            }
        }
        let a = try await measure { try await db.inTransaction { tx in _ = try await tx.save(work.items) } }
        let d = try await measure { try await db.inTransaction { tx in _ = try await tx.save(work.changed) } }
        if observed {
            result.observedA = round < 2 ? a : min(result.observedA, a)
            result.observedD = round < 2 ? d : min(result.observedD, d)
        } else {
            result.plainA = round < 2 ? a : min(result.plainA, a)
            result.plainD = round < 2 ? d : min(result.plainD, d)
        }
        counting?.cancel()
        await db.close()
    }
    return result
}
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

func percentile95(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, sorted.count * 95 / 100)]
}
