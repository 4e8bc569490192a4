#if Postgres
import CodableSync
import Foundation
import Testing

/// The sync server without a global lock: pushes of different devices (and server-side writers)
/// work in parallel, and the log's versions are in commit order, so that a pull never passes over
/// a change that commits later. A real PostgreSQL; devices as SQLite files.
@Suite("Sync: parallel pushes, commit-ordered versions", .serverShare, .needsPostgres, .serialized, .hangLimit(minutes: 3))
struct SyncFleetTests {
    typealias Note = SyncTests.Note
    typealias Device = SyncTests.Device
    typealias Item = SyncScopesTests.Item
    typealias List = SyncScopesTests.List

    /// The ids of the notes on `store`.
    static func noteIDs(_ store: some ModelStore) async throws -> Set<UUID> {
        Set(try await store.get(Note.self).map(\.id))
    }

    @Test("a slow transaction's row is not passed over: other devices' pushes commit while it is open, and the pull after it commits brings it")
    func slowTransactionIsNotPassedOver() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let reader = try Device(server: server), writer = try Device(server: server)
        try await reader.sync.sync()
        try await writer.sync.sync()   // both installed: the slow writer below writes a synced table

        // A server-side writer takes its version (provisional) first, and holds its transaction.
        let (opened, openedSignal) = AsyncStream<Void>.makeStream()
        let (release, releaseSignal) = AsyncStream<Void>.makeStream()
        let slowNote = Note(id: UUID(), text: "slow", done: false)
        let slow = Task {
            try await server.inTransaction { tx in
                try await tx.save(slowNote)
                openedSignal.yield()
                for await _ in release { break }
            }
        }
        var openedIterator = opened.makeAsyncIterator()
        await openedIterator.next()

        // Meanwhile other pushes commit, and the reader pulls them: a global lock would hold them
        // until the slow transaction ends (then `fast` would not finish before `release`).
        let fast = Task {
            var ids: Set<UUID> = []
            for index in 0..<5 {
                let note = Note(id: UUID(), text: "fast \(index)", done: false)
                try await writer.db.save(note)
                try await writer.sync.sync()
                ids.insert(note.id)
            }
            return ids
        }
        let fastIDs = try await Self.value(of: fast, orRelease: releaseSignal)
        try await reader.sync.sync()
        #expect(try await Self.noteIDs(reader.db) == fastIDs, "the reader has the committed pushes, not the open transaction's row")

        releaseSignal.yield()
        try await slow.value
        try await reader.sync.sync()
        #expect(try await Self.noteIDs(reader.db) == fastIDs.union([slowNote.id]), "the slow row, committed last, reaches the reader")
        await server.close()
    }

    /// `task`'s value; if it does not finish within a minute (it waits for the slow transaction:
    /// a global lock), the slow transaction is released so that the test fails instead of hanging.
    static func value<T: Sendable>(of task: Task<T, any Error>, orRelease release: AsyncStream<Void>.Continuation) async throws -> T {
        let watchdog = Task {
            try await Task.sleep(for: .seconds(60))
            release.yield()
        }
        defer { watchdog.cancel() }
        return try await task.value
    }

    @Test("slow and fast writers interleaved at random (pushes of 4 devices, server-side transactions held open): every pull has every row committed before it began")
    func interleavedWritersNeverMissARow() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let reader = try Device(server: server)
        let writers = try (0..<4).map { _ in try Device(server: server) }
        try await reader.sync.sync()
        for writer in writers { try await writer.sync.sync() }
        let committed = Locked<Set<UUID>>([])
        let rounds = 12
        try await withThrowingTaskGroup(of: Void.self) { group in
            // Devices pushing a note a round.
            for (index, writer) in writers.enumerated() {
                group.addTask {
                    for round in 0..<rounds {
                        let note = Note(id: UUID(), text: "device \(index) round \(round)", done: false)
                        try await writer.db.save(note)
                        try await writer.sync.sync()
                        committed.withLock { _ = $0.insert(note.id) }
                    }
                }
            }
            // Server-side writers whose transactions stay open a while after taking a version.
            for index in 0..<2 {
                group.addTask {
                    for round in 0..<rounds {
                        let note = Note(id: UUID(), text: "server \(index) round \(round)", done: false)
                        try await server.inTransaction { tx in
                            try await tx.save(note)
                            try await Task.sleep(for: .milliseconds(Int.random(in: 5...60)))
                        }
                        committed.withLock { _ = $0.insert(note.id) }
                    }
                }
            }
            // The reader: after each pull, every row committed before the pull began is here.
            group.addTask {
                var pulls = 0
                while true {
                    let before = committed.withLock { $0 }
                    try await reader.sync.sync()
                    pulls += 1
                    let missing = before.subtracting(try await Self.noteIDs(reader.db))
                    #expect(missing.isEmpty, "pull \(pulls) passed over \(missing.count) rows committed before it began")
                    if before.count == rounds * (writers.count + 2) { break }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await Self.noteIDs(reader.db) == committed.withLock { $0 })
        #expect(try await Self.noteIDs(server) == committed.withLock { $0 })
        await server.close()
    }

    @Test("pushes of two devices to the same rows at once: each waits for the other's commit, and the later one reports the earlier as a conflict")
    func concurrentPushesToOneRow() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let a = try Device(server: server), b = try Device(server: server)
        let note = Note(id: UUID(), text: "first", done: false)
        try await a.db.save(note)
        try await a.sync.sync()
        try await b.sync.sync()
        let statesA = a.sync.states, statesB = b.sync.states
        var edited = note
        edited.text = "from A"
        try await a.db.save(edited)
        edited.text = "from B"
        try await b.db.save(edited)
        async let pushA: Void = a.sync.sync()
        async let pushB: Void = b.sync.sync()
        _ = try await (pushA, pushB)
        // One of them lost, and its device was told (whichever committed second saw the other).
        func conflicts(_ states: AsyncStream<SQLite.Sync.State>) async -> Int {
            var count = 0
            for await state in states {
                if case .conflict = state { count += 1 }
                if case .idle = state { break }
            }
            return count
        }
        let reported = await conflicts(statesA) + conflicts(statesB)
        #expect(reported == 1, "exactly one of the two pushes overwrote the other: \(reported) conflicts reported")
        try await a.sync.sync()
        try await b.sync.sync()
        let stored = try #require(try await server.get(Note.self).first)
        #expect(try await a.db.get(Note.self) == [stored])
        #expect(try await b.db.get(Note.self) == [stored])
        await server.close()
    }

    @Test("a device's own pushes do not come back to it in full: its next pull leaves them out, other devices get them, and a start from version 0 gets everything")
    func ownChangesAreNotDownloadedAgain() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let endpoint = try Postgres.SyncServer(database: server, models: SyncTests.models)
        let other = Note(id: UUID(), text: "from elsewhere", done: false)
        _ = try await endpoint.push(SyncPush(device: "other", token: UUID().uuidString, acknowledged: nil, changes: [
            SyncChange(table: Note.tableName, id: other.id.uuidString, value: String(decoding: try JSONEncoder().encode(other), as: UTF8.self), seq: 1),
        ]))
        let first = try await endpoint.pull(SyncPull(device: "mine", after: 0, limit: 100))
        let mine = (0..<3).map { Note(id: UUID(), text: "mine \($0)", done: false) }
        _ = try await endpoint.push(SyncPush(device: "mine", token: UUID().uuidString, acknowledged: nil, changes: try mine.enumerated().map { index, note in
            SyncChange(table: Note.tableName, id: note.id.uuidString, value: String(decoding: try JSONEncoder().encode(note), as: UTF8.self),
                       seq: Int64(index + 1), version: first.version)
        }))
        let again = try await endpoint.pull(SyncPull(device: "mine", after: first.version, limit: 100))
        #expect(again.changes.isEmpty, "its own rows came back: \(again.changes.map(\.id))")
        #expect(again.version > first.version, "the device's version still moves past its own pushes")
        let elsewhere = try await endpoint.pull(SyncPull(device: "other", after: first.version, limit: 100))
        #expect(Set(elsewhere.changes.map(\.id)) == Set(mine.map(\.id.uuidString)))
        let fromZero = try await endpoint.pull(SyncPull(device: "mine", after: 0, limit: 100))
        #expect(fromZero.changes.count == 4, "from version 0 (starting over) a device gets every row, its own too")
        await server.close()
    }
}

#if Server
import CodableSyncHummingbird
import Hummingbird

extension SyncFleetTests {
    /// A device's way to several servers: each request goes to the next one in turn (a load
    /// balancer without affinity), long polls too.
    struct Alternating: SyncTransport {
        let transports: [HTTPSyncTransport]
        let turn = Locked(0)

        func next() -> HTTPSyncTransport {
            transports[turn.withLock { turn in
                defer { turn += 1 }
                return turn % transports.count
            }]
        }

        func push(_ push: SyncPush) async throws -> SyncPushResult { try await next().push(push) }
        func pull(_ pull: SyncPull) async throws -> SyncPullResult { try await next().pull(pull) }
        func serverChanges() async throws -> AsyncThrowingStream<Void, any Error>? { try await next().serverChanges() }
    }

    /// `count` sync servers over HTTP, each with its own connections to one PostgreSQL database
    /// (as separate processes would be), until `body` returns.
    static func withServers(
        _ count: Int, _ body: (_ servers: [Postgres.SyncServer], _ urls: [URL], _ postgres: Postgres.Database) async throws -> Void
    ) async throws {
        guard #available(macOS 14, iOS 17, tvOS 17, *) else { return }
        let databaseURL = try await TestServer.shared.freshDatabaseURL()
        var servers: [Postgres.SyncServer] = [], urls: [URL] = [], running: [Task<Void, any Error>] = []
        defer { for task in running { task.cancel() } }
        for _ in 0..<count {
            let server = try Postgres.SyncServer(database: try await Postgres.Database(url: databaseURL), models: SyncScopesTests.models)
            let router = Router()
            router.addSyncRoutes(SyncHTTPEndpoint(server: server))
            let (ports, portContinuation) = AsyncStream<Int>.makeStream()
            let app = Application(
                router: router, server: .syncHTTP1, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) })
            running.append(Task { try await app.run() })
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            servers.append(server)
            urls.append(try #require(URL(string: "http://127.0.0.1:\(port)/sync")))
        }
        try await body(servers, urls, try await Postgres.Database(url: databaseURL))
    }

    static func device(_ urls: [URL], token: String) throws -> (db: SQLite.Database, sync: SQLite.Sync) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-\(UUID().uuidString).sqlite").path
        let db = try SQLite.Database(path: path)
        let transport = Alternating(transports: urls.map { HTTPSyncTransport(server: $0, token: token) })
        return (db, try SQLite.Sync(local: db, transport: transport, models: SyncScopesTests.models))
    }

    @Test("two servers on one PostgreSQL serve the same devices, each switching server at every request: accounts, shares, replays and long polls hold across them")
    func twoServers() async throws {
        try await Self.withServers(2) { servers, urls, postgres in
            // An account made through one server authenticates on the other.
            let alice = try await servers[0].addAccount("alice"), bob = try await servers[1].addAccount("bob")
            let alice1 = try Self.device(urls, token: alice.token), alice2 = try Self.device(urls, token: alice.token)
            let bob1 = try Self.device(urls, token: bob.token)
            let list = List(id: UUID(), name: "groceries", items: (0..<5).map { Item(id: UUID(), title: "item \($0)") })
            _ = try await alice1.db.save(list)
            _ = try await bob1.db.save(Item(id: UUID(), title: "bob's own"))
            for _ in 0..<3 {
                for device in [alice1, alice2, bob1] { try await device.sync.sync() }
            }
            #expect(try await SyncScopesTests.titles(alice2.db) == list.items.map(\.title))
            #expect(try await SyncScopesTests.titles(bob1.db) == ["bob's own"])

            // Shared through the second server, edited through both, converged everywhere.
            try await HTTPSyncTransport(server: urls[1], token: alice.token).share(list, with: bob.account)
            var edited = try #require(try await alice2.db.get(List.self, id: list.id))
            edited.items[0].title = "changed on alice2"
            _ = try await alice2.db.save(edited)
            _ = try await bob1.db.save(Item(id: list.items[1].id, title: "changed by bob"))
            for _ in 0..<3 {
                for device in [alice2, bob1, alice1] { try await device.sync.sync() }
            }
            let expected = try await SyncScopesTests.titles(postgres)
            #expect(expected.contains("changed on alice2") && expected.contains("changed by bob"))
            #expect(try await SyncScopesTests.titles(bob1.db) == expected, "bob: his own item and the shared list's")
            #expect(try await SyncScopesTests.titles(alice1.db) == expected.filter { $0 != "bob's own" })
            #expect(try await SyncScopesTests.titles(alice2.db) == expected.filter { $0 != "bob's own" })

            // A push answered by one server and sent again to the other: the same answer, applied once.
            let aliceHTTP = urls.map { HTTPSyncTransport(server: $0, token: alice.token) }
            let item = Item(id: UUID(), title: "sent twice")
            let push = SyncPush(device: UUID().uuidString, token: UUID().uuidString, acknowledged: nil, changes: [
                SyncChange(table: Item.tableName, id: item.id.uuidString,
                           value: String(decoding: try JSONEncoder().encode(item), as: UTF8.self), seq: 1, version: 0),
            ])
            let first = try await aliceHTTP[0].push(push)
            let after = try await aliceHTTP[0].pull(SyncPull(device: push.device, after: 0, limit: 10_000))
            let again = try await aliceHTTP[1].push(push)
            #expect(first == again)
            let afterReplay = try await aliceHTTP[1].pull(SyncPull(device: push.device, after: 0, limit: 10_000))
            #expect(afterReplay.changes.map(\.version) == after.changes.map(\.version), "the replay changed nothing")

            // A long poll on one server is woken by a commit through the other.
            let body = try JSONEncoder().encode(SyncHTTP.WaitRequest(after: afterReplay.version, timeout: 30))
            let waiting = Task { () -> String in
                let answer = try await SyncHTTPTests.request(urls[1], "wait", token: alice.token, body: body)
                return "\(answer.status) changed: \(answer.json["changed"] as? Bool ?? false)"
            }
            // The wait is registered before the commit or after it: either way it answers changed.
            let woke = Item(id: UUID(), title: "through server 0")
            _ = try await HTTPSyncTransport(server: urls[0], token: alice.token).push(SyncPush(
                device: UUID().uuidString, token: UUID().uuidString, acknowledged: nil, changes: [
                    SyncChange(table: Item.tableName, id: woke.id.uuidString,
                               value: String(decoding: try JSONEncoder().encode(woke), as: UTF8.self), seq: 1, version: 0),
                ]))
            #expect(try await waiting.value == "200 changed: true", "the long poll on the other server was woken")
        }
    }

    @Test("a long poll is answered for its own account's news only: another account's commits leave it waiting, its own (or a share) wake it")
    func targetedWakeUps() async throws {
        try await Self.withServers(1) { servers, urls, _ in
            let alice = try await servers[0].addAccount("alice"), bob = try await servers[0].addAccount("bob")
            let aliceDevice = try Self.device(urls, token: alice.token), bobDevice = try Self.device(urls, token: bob.token)
            let list = List(id: UUID(), name: "alice's", items: [Item(id: UUID(), title: "first")])
            _ = try await aliceDevice.db.save(list)
            try await aliceDevice.sync.sync()
            try await bobDevice.sync.sync()
            let top = try await HTTPSyncTransport(server: urls[0], token: bob.token).pull(SyncPull(device: UUID().uuidString, after: 0, limit: 10_000)).version

            /// Bob's long poll after `top`, answered "changed" or not within `seconds`.
            func bobWaits(_ seconds: Double, while act: () async throws -> Void) async throws -> Bool {
                let body = try JSONEncoder().encode(SyncHTTP.WaitRequest(after: top, timeout: seconds))
                let waiting = Task { try await SyncHTTPTests.request(urls[0], "wait", token: bob.token, body: body).json["changed"] as? Bool == true }
                try await act()
                return try await waiting.value
            }
            // Alice's commits are not bob's news: his poll runs to its timeout, unanswered.
            let woken = try await bobWaits(2) {
                for index in 0..<5 {
                    _ = try await aliceDevice.db.save(Item(id: UUID(), title: "alice \(index)"))
                    try await aliceDevice.sync.sync()
                }
            }
            #expect(!woken, "bob's long poll was answered for alice's commits")
            // A share brings bob news: his poll is answered.
            #expect(try await bobWaits(30) { try await HTTPSyncTransport(server: urls[0], token: alice.token).share(list, with: bob.account) })
        }
    }
}
#endif
#endif
