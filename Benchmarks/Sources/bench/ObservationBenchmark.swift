import CodableSQLite
import Foundation
import GRDB

/// Scenario F: live queries.
///
/// 1. Latency from a commit to the observer holding the new decoded value: a 1,000-row list query,
///    one row updated per commit, median and p99.
/// 2. Write throughput: single-row transactions with 0, 1 and 100 observers on another table.
///
/// Contenders: CodableSQLite `db.observe([Item].self, using:)` and GRDB `ValueObservation`
/// (`values(in:)`), both on a WAL file with `synchronous = NORMAL`.
struct ObservationBenchmark {
    let updates: Int
    let transactions: Int
    static let listRows = 1_000

    init(settings: Settings) {
        let quick = settings.rows < 100_000
        updates = quick ? 50 : 300
        transactions = quick ? 5_000 : 100_000
    }

    /// Only the write throughput of CodableSQLite with `observers` observers: for profiling
    /// (`--observers N`, under callgrind).
    func profileThroughput(observers: Int) async throws -> String {
        let perSecond = try await throughputCodableSQLite(observers: observers)
        return "CodableSQLite, \(observers) observers: \(Int(perSecond)) transactions/s"
    }

    func run() async throws -> String {
        var lines = ["", "F: live queries (file database, WAL, synchronous=NORMAL)"]
        lines.append("  latency from a one-row update to the observer holding the new decoded \(Self.listRows)-row list (\(updates) updates):")
        for (name, measure) in [("CodableSQLite", latencyCodableSQLite), ("GRDB ValueObservation", latencyGRDB)] {
            let samples = try await measure().sorted()
            lines.append("    " + name.padding(toLength: 24, withPad: " ", startingAt: 0)
                + String(format: "median %7.3f ms   p99 %7.3f ms", percentile(samples, 0.5) * 1000, percentile(samples, 0.99) * 1000))
        }
        lines.append("  throughput of \(transactions) single-row transactions, observers on another table (best of 3):")
        for (name, measure) in [("CodableSQLite", throughputCodableSQLite), ("GRDB ValueObservation", throughputGRDB)] {
            // The best of 3 rounds, the configurations interleaved: the machine's noise is larger
            // than the differences measured.
            var perSecond: [Int: Double] = [:]
            for _ in 0..<3 {
                for observers in [0, 1, 100] { perSecond[observers] = max(perSecond[observers] ?? 0, try await measure(observers)) }
            }
            let base = perSecond[0] ?? 1
            lines.append("    " + name.padding(toLength: 24, withPad: " ", startingAt: 0)
                + [0, 1, 100].map { String(format: "%3d: %8.0f/s (%5.1f%%)", $0, perSecond[$0] ?? 0, 100 * (perSecond[$0] ?? 0) / base) }
                .joined(separator: "   "))
        }
        lines.append(try durability())
        return lines.joined(separator: "\n")
    }

    /// What each durability setting costs: single-row transactions through the synchronous API.
    private func durability() throws -> String {
        var line = "durability: single-row transactions per second, WAL file"
        for setting in [SQLite.Database.Durability.processCrash, .powerLoss] {
            var configuration = SQLite.Database.Configuration(path: temporaryDatabasePath("F-durability"))
            configuration.durability = setting
            let db = try SQLite.Database(configuration)
            try Self.setUp(db, items: [])
            let count = setting == .powerLoss ? min(transactions, 2_000) : transactions
            let perSecond = try Self.writeLoop(count) { index in
                try db.write("INSERT INTO log (n) VALUES (:n)", arguments: ["n": .integer(Int64(index))])
            }
            line += String(format: "   %@: %.0f/s", setting == .powerLoss ? ".powerLoss (synchronous=FULL)" : ".processCrash (synchronous=NORMAL)", perSecond)
        }
        return line
    }

    private func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction))]
    }

    private func items(_ count: Int) -> [Item] {
        var items = Item.generate(count: count)
        for index in items.indices { items[index].score = Double(index) }   // item 0 scores 0: the first marker
        return items
    }

    /// Waits for values carrying each update's marker (the score of item 0) and records when
    /// each arrived.
    private final class Arrivals: @unchecked Sendable {  // guarded by `lock`
        private let lock = NSLock()
        private var times: [Double: Date] = [:]
        func record(_ marker: Double) { lock.withLock { if times[marker] == nil { times[marker] = Date() } } }
        func time(of marker: Double) -> Date? { lock.withLock { times[marker] } }
    }

    private func waitFor(_ marker: Double, in arrivals: Arrivals) async throws -> Date {
        let deadline = Date().addingTimeInterval(10)
        while true {
            if let time = arrivals.time(of: marker) { return time }
            guard Date() < deadline else { throw BenchmarkError.verification("the observer never saw update \(marker)") }
            await Task.yield()
        }
    }

    // MARK: Latency

    private func latencyCodableSQLite() async throws -> [Double] {
        let db = try SQLite.Database(path: temporaryDatabasePath("F-latency-ours"))
        try Self.setUp(db, items: items(Self.listRows))
        let arrivals = Arrivals()
        let observer = Task {
            for try await list in db.observe([Item].self, using: Item.selectAll) {
                if let first = list.first { arrivals.record(first.score) }
            }
        }
        defer { observer.cancel() }
        return try await measureLatency(arrivals: arrivals) { marker in
            try await db.write("UPDATE item SET score = :score WHERE id = (SELECT min(id) FROM item)", arguments: ["score": .double(marker)])
        }
    }

    private func latencyGRDB() async throws -> [Double] {
        let pool = try openPool(temporaryDatabasePath("F-latency-grdb"))
        try await pool.write { db in for item in items(Self.listRows) { try item.insert(db) } }
        let arrivals = Arrivals()
        let observation = ValueObservation.tracking { db in try Item.fetchAll(db, sql: Item.selectAll) }
        let observer = Task {
            for try await list in observation.values(in: pool) {
                if let first = list.first { arrivals.record(first.score) }
            }
        }
        defer { observer.cancel() }
        return try await measureLatency(arrivals: arrivals) { marker in
            try await pool.write { db in try db.execute(sql: "UPDATE item SET score = ? WHERE id = (SELECT min(id) FROM item)", arguments: [marker]) }
        }
    }

    private func measureLatency(arrivals: Arrivals, update: (Double) async throws -> Void) async throws -> [Double] {
        _ = try await waitFor(0, in: arrivals)   // the first value
        var samples: [Double] = []
        for index in 1...updates {
            let marker = 1_000_000 + Double(index)
            // From the write call to the observer holding the new value: the write itself is
            // included, so an observer that starts reading before the write returns is not
            // credited with a negative time.
            let started = Date()
            try await update(marker)
            let arrived = try await waitFor(marker, in: arrivals)
            samples.append(arrived.timeIntervalSince(started))
        }
        return samples
    }

    // MARK: Throughput

    private func throughputCodableSQLite(observers: Int) async throws -> Double {
        let db = try SQLite.Database(path: temporaryDatabasePath("F-throughput-ours"))
        try Self.setUp(db, items: [])
        let arrivals = Arrivals()
        let tasks = (0..<observers).map { _ in
            Task {
                for try await n in db.observe(Int.self, using: "SELECT count(*) FROM other") { arrivals.record(Double(n ?? -1)) }
            }
        }
        defer { tasks.forEach { $0.cancel() } }
        if observers > 0 { _ = try await waitFor(0, in: arrivals) }
        return try Self.writeLoop(transactions) { index in
            try db.write("INSERT INTO log (n) VALUES (:n)", arguments: ["n": .integer(Int64(index))])
        }
    }

    private func throughputGRDB(observers: Int) async throws -> Double {
        let pool = try openPool(temporaryDatabasePath("F-throughput-grdb"))
        let arrivals = Arrivals()
        let observation = ValueObservation.tracking { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM other") ?? -1 }
        let tasks = (0..<observers).map { _ in
            Task { for try await n in observation.values(in: pool) { arrivals.record(Double(n)) } }
        }
        defer { tasks.forEach { $0.cancel() } }
        if observers > 0 { _ = try await waitFor(0, in: arrivals) }
        return try Self.writeLoop(transactions) { index in
            try pool.write { db in try db.execute(sql: "INSERT INTO log (n) VALUES (?)", arguments: [index]) }
        }
    }

    /// Synchronous calls, as an app's write path makes them: one transaction per call.
    private static func writeLoop(_ count: Int, _ write: (Int) throws -> Void) throws -> Double {
        let started = Date()
        for index in 0..<count { try write(index) }
        return Double(count) / Date().timeIntervalSince(started)
    }

    private static func setUp(_ db: SQLite.Database, items: [Item]) throws {
        try db.execute(raw: Item.createTable + "; CREATE TABLE log (n INTEGER); CREATE TABLE other (n INTEGER);")
        try SQLite.Encoder(db).encode(items, using: Item.insert)
    }

    private func openPool(_ path: String) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try pool.write { db in try db.execute(sql: Item.createTable + "; CREATE TABLE log (n INTEGER); CREATE TABLE other (n INTEGER);") }
        return pool
    }
}
