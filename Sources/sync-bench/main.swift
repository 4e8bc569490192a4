// The sync server's measurements over HTTP (BENCHMARKS.md, "Sync for many users"): a Hummingbird
// server in this process on 127.0.0.1, devices as SQLite files syncing through HTTPSyncTransport,
// a PostgreSQL server given by URL (Scripts/throwaway-postgres starts one):
//
//     swift run -c release --traits Server sync-bench --postgres URL [--quick] [--direct]
//
//  1. initial sync: one device pushes N rows (default 100,000), a new device of the account pulls
//     them all: rows per second each way;
//  2. device to device: a running device (live pushes: the server's event stream) gets another
//     device's saved row: median and p99 over 200 rows;
//  3. many accounts: A accounts (default 1,000) × 3 devices, each account's first device pushes 10
//     rows and the two others pull them: syncs per second, and the CPU time of the PostgreSQL
//     server's processes and of this process (the HTTP server and the devices) per sync;
//  4. pushes while others pull: 8 tasks push 10 rows at a time while 8 others pull, for 10 s:
//     each kind's rate and median and p99 request time;
//  5. one account floods: 8 tasks of one account send the largest pushes the protocol takes
//     (SyncPush.maximumChanges changes each), as fast as they are answered, while a device of
//     another account saves a row and syncs 20 times: its rounds' median and longest time, and
//     how many of the flood's requests the server refused (429) or applied;
//  6. idle live devices: one event stream per account of scenario 3 (1,000) on raw sockets: the
//     process's resident memory they add (the server's: a socket costs the client a descriptor
//     only), then a commit of one account: how long until its stream hears it, and how many of
//     the other streams heard anything (targeted wake-ups: none).
//
// Devices and server share this machine's cores: the numbers are a floor for a server of its own.
import Foundation

#if Server
import CodableSync
import CodableSyncHummingbird
import Hummingbird
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct BenchNote: UUIDModel, Sendable {
    let id: UUID
    var title: String
    var body: String
    var n: Int
}

let models: [any (Model & Sendable).Type] = [BenchNote.self]

struct Failure: Error, CustomStringConvertible { let description: String }

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: "--\(name)"), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

let quick = CommandLine.arguments.contains("--quick")
let rowCount = option("rows").flatMap(Int.init) ?? (quick ? 10_000 : 100_000)
let accountCount = option("accounts").flatMap(Int.init) ?? (quick ? 50 : 1_000)
let mixedSeconds = quick ? 3.0 : 10.0
/// Rows per push or pull request (`SQLite.Sync`'s default, 500, unless `--batch N`).
let batchSize = option("batch").flatMap(Int.init) ?? 500
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sync-bench-\(UUID().uuidString)")

/// `--direct`: devices call the server in this process as their account, without HTTP (the
/// scopes' cost without the transport's).
let direct = CommandLine.arguments.contains("--direct")
nonisolated(unsafe) var directServer: Postgres.SyncServer?  // set once, before any device is made

func device(_ url: URL, token: String) async throws -> (db: SQLite.Database, sync: SQLite.Sync) {
    let db = try SQLite.Database(path: folder.appendingPathComponent("\(UUID().uuidString).sqlite").path)
    if direct, let server = directServer {
        let account = try await server.authenticate(token: token)
        return (db, try SQLite.Sync(local: db, transport: server.transport(for: account), models: models, batchSize: batchSize))
    }
    return (db, try SQLite.Sync(local: db, transport: HTTPSyncTransport(server: url, token: token), models: models, batchSize: batchSize))
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
}

func milliseconds(_ value: Double) -> String { String(format: "%.1f ms", value * 1000) }

/// CPU seconds (user + system) of the processes named `name`, or of this process.
func cpuSeconds(ofProcessesNamed name: String?) -> Double {
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    let pids = name == nil ? ["self"] : ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).filter { Int($0) != nil }
    var total = 0.0
    for pid in pids {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { continue }
        if let name, stat[stat.index(after: open)..<close] != name { continue }
        let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { continue }
        total += (user + system) / ticks
    }
    return total
}

@available(macOS 14, iOS 17, tvOS 17, *)
func run(postgresURL: String) async throws {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let postgres = try await Postgres.Database(url: postgresURL)
    let server = try Postgres.SyncServer(database: postgres, models: models)
    directServer = server
    let router = Router()
    router.addSyncRoutes(SyncHTTPEndpoint(server: server))
    let (ports, portContinuation) = AsyncStream<Int>.makeStream()
    let app = Application(
        router: router, server: .syncHTTP1, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) })
    let serving = Task { try await app.run() }
    defer { serving.cancel() }
    var portIterator = ports.makeAsyncIterator()
    guard let port = await portIterator.next(), let url = URL(string: "http://127.0.0.1:\(port)/sync") else {
        throw Failure(description: "the HTTP server did not start")
    }
    let run = UUID().uuidString.prefix(8)

    // 1. Initial sync.
    let bulk = try await server.addAccount("bulk-\(run)")
    let writer = try await device(url, token: bulk.token)
    let body = String(repeating: "x", count: 100)
    _ = try await writer.db.save((0..<rowCount).map { BenchNote(id: UUID(), title: "note \($0)", body: body, n: $0) })
    var clock = ContinuousClock.now
    try await writer.sync.sync()
    let pushed = seconds(ContinuousClock.now - clock)
    let reader = try await device(url, token: bulk.token)
    clock = .now
    try await reader.sync.sync()
    let pulled = seconds(ContinuousClock.now - clock)
    let received = try await reader.db.count(BenchNote.self)
    guard received == rowCount else { throw Failure(description: "the new device has \(received) rows, not \(rowCount)") }
    print(String(format: "initial sync over HTTP: %d rows pushed in %.2f s (%.0f rows/s), pulled into a new device in %.2f s (%.0f rows/s)",
                 rowCount, pushed, Double(rowCount) / pushed, pulled, Double(rowCount) / pulled))

    // 2. Device to device.
    let pair = try await server.addAccount("pair-\(run)")
    let sender = try await device(url, token: pair.token), receiver = try await device(url, token: pair.token)
    let latest = receiver.db.observe(Filter<BenchNote>().sort(by: \.n, ascending: false).limit(1))
    var latestIterator = latest.makeAsyncIterator()
    let live = Task { try await receiver.sync.run() }
    defer { live.cancel() }
    _ = try await latestIterator.next()
    var latencies: [Double] = []
    for n in 1...(quick ? 50 : 200) {
        let started = ContinuousClock.now
        _ = try await sender.db.save(BenchNote(id: UUID(), title: "live \(n)", body: "", n: n))
        try await sender.sync.sync()
        while let values = try await latestIterator.next(), values.first?.n != n {}
        latencies.append(seconds(ContinuousClock.now - started))
    }
    print("device to device over HTTP: median \(milliseconds(percentile(latencies, 0.5))), p99 \(milliseconds(percentile(latencies, 0.99))) "
          + "(\(latencies.count) rows: save, push, the other device's event, pull, apply)")
    live.cancel()

    // 3. Many accounts.
    var made: [String] = []
    for index in 0..<accountCount { made.append(try await server.addAccount("user-\(run)-\(index)").token) }
    let tokens = made
    let serverCPU = cpuSeconds(ofProcessesNamed: "postgres"), ownCPU = cpuSeconds(ofProcessesNamed: nil)
    clock = .now
    try await withThrowingTaskGroup(of: Void.self) { group in
        let next = Locked(0)
        for _ in 0..<16 {
            group.addTask {
                while true {
                    let index = next.withLock { value -> Int in defer { value += 1 }; return value }
                    guard index < tokens.count else { return }
                    let first = try await device(url, token: tokens[index])
                    _ = try await first.db.save((0..<10).map { BenchNote(id: UUID(), title: "account \(index) note \($0)", body: body, n: $0) })
                    try await first.sync.sync()
                    for _ in 0..<2 {
                        let other = try await device(url, token: tokens[index])
                        try await other.sync.sync()
                        guard try await other.db.count(BenchNote.self) == 10 else { throw Failure(description: "account \(index) did not get its rows") }
                    }
                }
            }
        }
        try await group.waitForAll()
    }
    let elapsed = seconds(ContinuousClock.now - clock)
    let syncs = Double(accountCount * 3)
    let serverSpent = cpuSeconds(ofProcessesNamed: "postgres") - serverCPU, ownSpent = cpuSeconds(ofProcessesNamed: nil) - ownCPU
    print(String(format: "%d accounts × 3 devices over HTTP: %.1f s, %.0f syncs/s; CPU per sync: PostgreSQL %.2f ms, this process (HTTP server and devices) %.2f ms",
                 accountCount, elapsed, syncs / elapsed, serverSpent / syncs * 1000, ownSpent / syncs * 1000))

    // 4. Pushes while others pull.
    let pushTimes = Locked<[Double]>([]), pullTimes = Locked<[Double]>([])
    let deadline = ContinuousClock.now + .seconds(mixedSeconds)
    try await withThrowingTaskGroup(of: Void.self) { group in
        for task in 0..<16 {
            group.addTask {
                let token = tokens[task % tokens.count]
                let own = try await device(url, token: token)
                var n = 0
                while ContinuousClock.now < deadline {
                    let started = ContinuousClock.now
                    if task < 8 {
                        _ = try await own.db.save((0..<10).map { BenchNote(id: UUID(), title: "mixed \(n + $0)", body: body, n: n + $0) })
                        n += 10
                        try await own.sync.sync()
                        pushTimes.withLock { $0.append(seconds(ContinuousClock.now - started)) }
                    } else {
                        try await own.sync.sync()
                        pullTimes.withLock { $0.append(seconds(ContinuousClock.now - started)) }
                    }
                }
            }
        }
        try await group.waitForAll()
    }
    let pushes = pushTimes.withLock { $0 }, pulls = pullTimes.withLock { $0 }
    print(String(format: "pushes while others pull (8 + 8 devices, %.0f s): %.0f pushes/s of 10 rows", mixedSeconds, Double(pushes.count) / mixedSeconds)
          + " (median \(milliseconds(percentile(pushes, 0.5))), p99 \(milliseconds(percentile(pushes, 0.99))))"
          + String(format: ", %.0f pulls/s", Double(pulls.count) / mixedSeconds)
          + " (median \(milliseconds(percentile(pulls, 0.5))), p99 \(milliseconds(percentile(pulls, 0.99))))")

    // 5. One account floods, another syncs.
    let flooder = try await server.addAccount("flood-\(run)"), victim = try await server.addAccount("victim-\(run)")
    let victimDevice = try await device(url, token: victim.token)
    try await victimDevice.sync.sync()
    let floodEnd = Locked(false), floodCounts = Locked((applied: 0, refused: 0, failed: 0))
    let flooding = Task {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    while !floodEnd.withLock({ $0 }) {
                        let changes = (0..<SyncPush.maximumChanges).map { index in
                            let note = BenchNote(id: UUID(), title: "flood", body: body, n: index)
                            return SyncChange(table: BenchNote.tableName, id: note.id.uuidString,
                                              value: (try? JSONEncoder().encode(note)).map { String(decoding: $0, as: UTF8.self) },
                                              seq: Int64(index + 1), version: 0)
                        }
                        var request = URLRequest(url: url.appendingPathComponent("push"))
                        request.httpMethod = "POST"
                        request.setValue("Bearer \(flooder.token)", forHTTPHeaderField: "Authorization")
                        request.httpBody = try? JSONEncoder().encode(SyncPush(device: UUID().uuidString, token: UUID().uuidString, acknowledged: nil, changes: changes))
                        let status = ((try? await URLSession.shared.data(for: request))?.1 as? HTTPURLResponse)?.statusCode ?? 0
                        floodCounts.withLock { counts in
                            if status == 200 { counts.applied += 1 } else if status == 429 { counts.refused += 1 } else { counts.failed += 1 }
                        }
                        if status == 429 { try? await Task.sleep(for: .milliseconds(50)) }
                    }
                }
            }
        }
    }
    // The flood under way first.
    while floodCounts.withLock({ $0.applied + $0.refused + $0.failed }) == 0 { try await Task.sleep(for: .milliseconds(50)) }
    var rounds: [Double] = []
    for n in 0..<20 {
        let started = ContinuousClock.now
        _ = try await victimDevice.db.save(BenchNote(id: UUID(), title: "victim \(n)", body: body, n: n))
        try await victimDevice.sync.sync()
        rounds.append(seconds(ContinuousClock.now - started))
    }
    floodEnd.withLock { $0 = true }
    await flooding.value
    let counts = floodCounts.withLock { $0 }
    print("one account floods (8 tasks, pushes of \(SyncPush.maximumChanges) changes): another account's round median \(milliseconds(percentile(rounds, 0.5))), "
          + "longest \(milliseconds(rounds.max() ?? .nan)) (20 rounds); the flood: \(counts.applied) pushes applied, \(counts.refused) refused (429), \(counts.failed) failed")

    // 6. Idle live devices, one per account: their streams' memory, then one account's commit.
    raiseDescriptorLimit()
    // Devices up to date: the log's newest version (an account's whole pull ends there).
    let newest = try await server.pull(SyncPull(device: "bench", after: 0, limit: 10_000), as: try await server.authenticate(token: tokens[0])).version
    let before = residentBytes()
    var idle: [IdleStream] = []
    for token in tokens {
        idle.append(try await onThread { try IdleStream(port: port, token: token, after: newest) })
    }
    let during = residentBytes()
    for stream in idle { _ = stream.drain() }
    let woken = idle[0]
    // A device of the first account, synced already (its first sync is not the measure).
    let committer = try await device(url, token: tokens[0])
    try await committer.sync.sync()
    _ = try await onThread { woken.drain() }
    let started = ContinuousClock.now
    _ = try await committer.db.save(BenchNote(id: UUID(), title: "to an idle device", body: "", n: 0))
    try await committer.sync.sync()
    guard try await onThread({ try woken.read(until: "event: changed") }) else { throw Failure(description: "the idle device's stream closed") }
    let heard = seconds(ContinuousClock.now - started)
    let others = idle.dropFirst().filter { $0.drain().contains("event: changed") }.count
    print(String(format: "%d idle live devices (event streams, one per account): %.1f MB for the server, %.1f KB a device; a commit heard by its account's device in %@, by %d of the %d others (told of no change of theirs)",
                 idle.count, Double(during - before) / 1e6, Double(during - before) / Double(max(idle.count, 1)) / 1e3,
                 milliseconds(heard), others, idle.count - 1))
    idle.removeAll()
    await postgres.close()
}

guard let url = option("postgres") else {
    FileHandle.standardError.write(Data("usage: sync-bench --postgres URL [--quick] [--rows N] [--accounts N]\n".utf8))
    exit(2)
}
guard #available(macOS 14, iOS 17, tvOS 17, *) else { exit(2) }
do {
    try await run(postgresURL: url)
} catch {
    FileHandle.standardError.write(Data("sync-bench: \(error)\n".utf8))
    exit(1)
}
#else
FileHandle.standardError.write(Data("sync-bench needs the Server trait: swift run -c release --traits Server sync-bench --postgres URL\n".utf8))
exit(2)
#endif
