// Scenarios A–D through each library's model API on one PostgreSQL server (loopback):
//   A  insert 100,000 items        B  fetch all 100,000      C  10,000 lookups by id
//   D  update 100,000 items (A and D in one transaction each)
//   G  save and load 10,000 movies with their studios and casts (Relationships.swift)
// Then live queries (CodablePostgres only; see Observation.swift): latency across two app
// instances, and A and D on an observed table.
// Contenders: the floor, postgres-nio by hand on a table of the same columns (Floor.swift),
// CodablePostgres (`extension Item: CodableModels.Model {}`) and Fluent 1.57 with
// fluent-postgres-driver 2.14 (a hand-declared FluentKit model of the same record).
//
// Last, offline-first sync through the server (CodableSync only; see Sync.swift).
//
//   bench-postgres URL [--quick] [--ours] [--floor] [--sync]   (--ours: CodablePostgres's A–D only,
//   three times, for profiling; --floor: the floor and CodablePostgres alternately, three times
//   each, medians; --sync [--rows N] [--initial-only]: the sync benchmark alone)
import CodablePostgres
import FluentKit
import FluentPostgresDriver
import Foundation
import PostgresNIO

extension Item: CodableModels.Model {}

struct Timings {
    let contender: String
    var seconds: [String: Double] = [:]
    var checksums: [String: Checksum] = [:]
}

func measure(_ work: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await work()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// The same data for every contender.
struct Workload: Sendable {
    let url: String
    let items: [Item]
    let changed: [Item]
    let ids: [Int64]

    init(url: String, count: Int) {
        self.url = url
        items = Item.generate(count: count)
        changed = Item.updated(items)
        var random = SplitMix(seed: 42)
        ids = (0..<count / 10).map { _ in Int64(random.next() % UInt64(count)) + 1 }
    }
}

func codablePostgres(_ work: Workload) async throws -> Timings {
    let (url, items, changed, ids) = (work.url, work.items, work.changed, work.ids)
    var result = Timings(contender: "CodablePostgres")
    let db = try await Postgres.Database(url: url)
    try await db.execute("DROP TABLE IF EXISTS \"Item\"")
    _ = try await db.count(Item.self)  // creates the table outside the timing, as Fluent's migration below
    result.seconds["A"] = try await measure { try await db.inTransaction { tx in _ = try await tx.save(items) } }
    var all: [Item] = []
    result.seconds["B"] = try await measure { all = try await db.get(with: Filter<Item>().sort(by: \.id)) }
    result.checksums["B"] = { var sum = Checksum(); sum.add(all); return sum }()
    var found = Checksum()
    result.seconds["C"] = try await measure {
        for id in ids { if let item = try await db.get(Item.self, id: id) { found.add(item) } }
    }
    result.checksums["C"] = found
    result.seconds["D"] = try await measure { try await db.inTransaction { tx in _ = try await tx.save(changed) } }
    var after = Checksum()
    after.add(try await db.get(with: Filter<Item>().sort(by: \.id)))
    result.checksums["D"] = after
    await db.close()
    return result
}

func fluent(_ work: Workload) async throws -> Timings {
    let (url, items, changed, ids) = (work.url, work.items, work.changed, work.ids)
    var result = Timings(contender: "Fluent")
    let databases = Databases(threadPool: NIOThreadPool.singleton, on: MultiThreadedEventLoopGroup.singleton)
    databases.use(try .postgres(url: url, maxConnectionsPerEventLoop: 2), as: .psql)
    guard let db = databases.database(logger: Logger(label: "bench"), on: MultiThreadedEventLoopGroup.singleton.any()) else {
        throw FluentError.noResults
    }
    try? await db.schema(FluentItem.schema).delete()
    try await FluentItem.createTable(on: db)
    // Fluent binds every value: 10 per row, and a statement takes at most 65,535 values.
    result.seconds["A"] = try await measure {
        try await db.transaction { tx in
            for start in stride(from: 0, to: items.count, by: 1_000) {
                try await items[start..<min(start + 1_000, items.count)].map(FluentItem.init).create(on: tx)
            }
        }
    }
    var all: [FluentItem] = []
    result.seconds["B"] = try await measure { all = try await FluentItem.query(on: db).sort(\.$id).all() }
    result.checksums["B"] = { var sum = Checksum(); sum.add(all.map(\.item)); return sum }()
    var found = Checksum()
    result.seconds["C"] = try await measure {
        for id in ids { if let item = try await FluentItem.find(id, on: db) { found.add(item.item) } }
    }
    result.checksums["C"] = found
    // Fluent updates one model per statement: the models fetched in B, changed.
    let models = all
    result.seconds["D"] = try await measure {
        try await db.transaction { tx in
            for (model, item) in zip(models, changed) {
                model.set(item)
                try await model.update(on: tx)
            }
        }
    }
    var after = Checksum()
    after.add(try await FluentItem.query(on: db).sort(\.$id).all().map(\.item))
    result.checksums["D"] = after
    await databases.shutdownAsync()
    return result
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    print("usage: bench-postgres URL [--quick]   (Benchmarks/Postgres/run starts a server and passes its URL)")
    exit(2)
}
let count = arguments.contains("--quick") ? 10_000 : 100_000
if arguments.contains("--sync") {
    // --rows N: another row count (the initial sync of 1,000,000 rows in bounded memory).
    let rows = arguments.firstIndex(of: "--rows").flatMap { arguments.indices.contains($0 + 1) ? Int(arguments[$0 + 1]) : nil } ?? count
    let initialOnly = arguments.contains("--initial-only")
    print("Sync benchmark: \(rows) rows, loopback server")
    printSync(try await syncBenchmark(url: arguments[1], count: rows, rounds: 50, initialOnly: initialOnly), count: rows, initialOnly: initialOnly)
    exit(0)
}
let work = Workload(url: arguments[1], count: count)
print("PostgreSQL benchmark: \(count) items, \(count / 10) lookups, one run per contender, loopback server")
if arguments.contains("--ours") {
    for _ in 0..<3 {
        let run = try await codablePostgres(work)
        print(["A", "B", "C", "D"].map { "\($0) \(String(format: "%.3f s", run.seconds[$0] ?? 0))" }.joined(separator: "  "))
    }
    exit(0)
}
/// Stops the run unless every contender read what `reference` read.
func checkSameRows(_ reference: Timings, _ others: [Timings]) {
    for other in others {
        for scenario in ["B", "C", "D"] where reference.checksums[scenario] != other.checksums[scenario] {
            print("checksums differ in \(scenario) between \(reference.contender) and \(other.contender): "
                + "\(reference.checksums[scenario].map(String.init(describing:)) ?? "-") vs \(other.checksums[scenario].map(String.init(describing:)) ?? "-")")
            exit(1)
        }
    }
}

func seconds(_ value: Double) -> String { String(format: "%.3f s", value) }

if arguments.contains("--floor") {
    // Alternately, so that the server's and the machine's drift touch both alike.
    var runs: [(floor: Timings, ours: Timings)] = []
    for round in 1...3 {
        let ours = try await codablePostgres(work)
        let floor = try await floorPostgresNIO(work)
        checkSameRows(ours, [floor])
        runs.append((floor, ours))
        print("round \(round): " + ["A", "B", "C", "D"].map { scenario in
            "\(scenario) floor \(seconds(floor.seconds[scenario] ?? 0)) ours \(seconds(ours.seconds[scenario] ?? 0))"
        }.joined(separator: "  "))
    }
    print("scenario (median of 3) | postgres-nio by hand | CodablePostgres | CodablePostgres / floor")
    print("---|---:|---:|---:")
    for scenario in ["A", "B", "C", "D"] {
        let floor = median(runs.map { $0.floor.seconds[scenario] ?? 0 }), ours = median(runs.map { $0.ours.seconds[scenario] ?? 0 })
        print("\(scenario) | \(seconds(floor)) | \(seconds(ours)) | \(String(format: "%.2fx", ours / floor))")
    }
    exit(0)
}
let ours = try await codablePostgres(work)
let floor = try await floorPostgresNIO(work)
let theirs = try await fluent(work)
checkSameRows(ours, [floor, theirs])
print("scenario | postgres-nio by hand (floor) | CodablePostgres | Fluent | CodablePostgres / floor | Fluent / CodablePostgres")
print("---|---:|---:|---:|---:|---:")
for scenario in ["A", "B", "C", "D"] {
    let f = floor.seconds[scenario] ?? 0, a = ours.seconds[scenario] ?? 0, b = theirs.seconds[scenario] ?? 0
    print("\(scenario) | \(seconds(f)) | \(seconds(a)) | \(seconds(b)) | \(String(format: "%.2fx", a / f)) | \(String(format: "%.2fx", b / a))")
}

// G: relationships.
let movieCount = count >= 100_000 ? 10_000 : 2_000
let movies = MovieGraph.movies(count: movieCount)
let ourGraph = try await graphCodablePostgres(url: work.url, movies: movies, repetitions: 3)
let theirGraph = try await graphFluent(url: work.url, movies: movies, repetitions: 3)
guard ourGraph.summary == theirGraph.summary, ourGraph.summary.count == movieCount else {
    print("G: the contenders loaded different graphs (\(ourGraph.summary.count) and \(theirGraph.summary.count) movies)")
    exit(1)
}
print("")
print("G: \(movieCount) movies × 5 actors from a pool of \(movieCount * 2), studios from 100 (median of 3) | CodablePostgres | Fluent | Fluent / CodablePostgres")
print("---|---|---|---")
print("save | \(String(format: "%.3f s", ourGraph.save)) | \(String(format: "%.3f s", theirGraph.save)) | \(String(format: "%.2fx", theirGraph.save / ourGraph.save))")
print("load | \(String(format: "%.3f s", ourGraph.load)) | \(String(format: "%.3f s", theirGraph.load)) | \(String(format: "%.2fx", theirGraph.load / ourGraph.load))")

// Our run above left "Item" with the updated items (Fluent's table is another): observe them now.
let observed = try await observation(work, rounds: count >= 100_000 ? 200 : 50)
print("")
print("live queries (CodablePostgres) | median | 95th percentile")
print("---|---|---")
print("a save in instance 1 → instance 2's 1,000-row list observer has it | \(String(format: "%.2f ms", median(observed.listLatencies) * 1000)) | \(String(format: "%.2f ms", percentile95(observed.listLatencies) * 1000))")
print("(reading that list once | \(String(format: "%.2f ms", median(observed.listReads) * 1000)) | \(String(format: "%.2f ms", percentile95(observed.listReads) * 1000)))")
print("a save in instance 1 → instance 2's observer of that id has it | \(String(format: "%.2f ms", median(observed.rowLatencies) * 1000)) | \(String(format: "%.2f ms", percentile95(observed.rowLatencies) * 1000))")
print("(reading that row once | \(String(format: "%.2f ms", median(observed.rowReads) * 1000)) | \(String(format: "%.2f ms", percentile95(observed.rowReads) * 1000)))")
print("")
print("writes to an observed table (best of 2, alternating) | not observed | observed (notify triggers) | observed / not")
print("---|---|---|---")
print("A insert | \(String(format: "%.3f s", observed.plainA)) | \(String(format: "%.3f s", observed.observedA)) | \(String(format: "%.2fx", observed.observedA / observed.plainA))")
print("D update | \(String(format: "%.3f s", observed.plainD)) | \(String(format: "%.3f s", observed.observedD)) | \(String(format: "%.2fx", observed.observedD / observed.plainD))")
printSync(try await syncBenchmark(url: work.url, count: count, rounds: count >= 100_000 ? 200 : 50), count: count)
