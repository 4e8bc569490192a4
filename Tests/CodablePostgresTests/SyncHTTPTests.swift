#if Server
import CodableSync
import CodableSyncHummingbird
import Foundation
import Hummingbird
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sync over real HTTP: a Hummingbird server in this process on a free port, devices as SQLite
/// files with ``HTTPSyncTransport`` (URLSession), accounts by bearer token, a real PostgreSQL.
@Suite("Sync over HTTP: accounts, tokens, sharing, long polling", .serverShare, .needsPostgres, .serialized, .hangLimit(minutes: 3))
struct SyncHTTPTests {
    typealias Item = SyncScopesTests.Item
    typealias List = SyncScopesTests.List

    /// A sync server over HTTP on 127.0.0.1, until `body` returns.
    static func withHTTPServer(
        _ body: (_ server: Postgres.SyncServer, _ url: URL, _ postgres: Postgres.Database) async throws -> Void
    ) async throws {
        try await SyncSecurityTests.withHTTPEndpoint(models: SyncScopesTests.models) { _, server, url, postgres in
            try await body(server, url, postgres)
        }
    }

    static func device(_ url: URL, token: String) throws -> (db: SQLite.Database, sync: SQLite.Sync) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("http-\(UUID().uuidString).sqlite").path
        let db = try SQLite.Database(path: path)
        return (db, try SQLite.Sync(local: db, transport: HTTPSyncTransport(server: url, token: token), models: SyncScopesTests.models))
    }

    /// A raw request, as a client that is not ours would send it.
    static func request(_ url: URL, _ route: String, token: String?, body: Data?) async throws -> (status: Int, json: [String: Any]) {
        var request = URLRequest(url: url.appendingPathComponent(route))
        request.httpMethod = body == nil ? "GET" : "POST"
        request.httpBody = body
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, json)
    }

    @Test("two accounts, three devices over HTTP: nothing crosses, a shared list reaches both, a wrong token is refused with a clear error")
    func accountsOverHTTP() async throws {
        try await Self.withHTTPServer { server, url, postgres in
            let alice = try await server.addAccount("alice"), bob = try await server.addAccount("bob")
            let alice1 = try Self.device(url, token: alice.token), alice2 = try Self.device(url, token: alice.token)
            let bob1 = try Self.device(url, token: bob.token)
            let shared = List(id: UUID(), name: "shared", items: [Item(id: UUID(), title: "from alice")])
            _ = try await alice1.db.save(shared)
            _ = try await alice1.db.save(List(id: UUID(), name: "alice only", items: []))
            _ = try await bob1.db.save(Item(id: UUID(), title: "bob only"))
            for device in [alice1, bob1, alice2] { try await device.sync.sync() }
            #expect(try await SyncScopesTests.listNames(alice2.db) == ["alice only", "shared"])
            #expect(try await SyncScopesTests.titles(alice2.db) == ["from alice"])
            #expect(try await SyncScopesTests.titles(bob1.db) == ["bob only"])
            #expect(try await SyncScopesTests.listNames(bob1.db).isEmpty)

            // Shared through the owner's own token, over HTTP.
            let aliceHTTP = HTTPSyncTransport(server: url, token: alice.token)
            #expect(try await aliceHTTP.account() == alice.account)
            try await aliceHTTP.share(shared, with: bob.account)
            try await bob1.sync.sync()
            #expect(try await SyncScopesTests.listNames(bob1.db) == ["shared"])
            #expect(try await SyncScopesTests.titles(bob1.db) == ["bob only", "from alice"])
            // Bob cannot share (or unshare) what he does not own.
            let bobHTTP = HTTPSyncTransport(server: url, token: bob.token)
            await #expect(throws: SyncError.self) {
                try await bobHTTP.share(table: List.tableName, id: shared.id.uuidString, with: bob.account, access: .readWrite)
            }

            // A wrong token: refused with the server's reason, nothing written, the device goes on with a good one.
            let wrongPath = FileManager.default.temporaryDirectory.appendingPathComponent("http-\(UUID().uuidString).sqlite").path
            let wrongDB = try SQLite.Database(path: wrongPath)
            _ = try await wrongDB.save(Item(id: UUID(), title: "from a wrong token"))
            let wrong = try SQLite.Sync(local: wrongDB, transport: HTTPSyncTransport(server: url, token: "wrong"), models: SyncScopesTests.models)
            do {
                try await wrong.sync()
                Issue.record("a wrong token synced")
            } catch let error as SyncError {
                #expect(error.code == .unauthorized)
                #expect(error.message.contains("token"))
            }
            #expect(try await !SyncScopesTests.titles(postgres).contains("from a wrong token"))
            try await SQLite.Sync(local: wrongDB, transport: HTTPSyncTransport(server: url, token: bob.token), models: SyncScopesTests.models).sync()
            #expect(try await SyncScopesTests.titles(postgres).contains("from a wrong token"))
        }
    }

    @Test("hostile requests: no token, a malformed body, another account's push token, a pull of everything: refused or scoped, nothing leaked")
    func hostileRequests() async throws {
        try await Self.withHTTPServer { server, url, postgres in
            let alice = try await server.addAccount("alice"), mallory = try await server.addAccount("mallory")
            let device = try Self.device(url, token: alice.token)
            let secret = Item(id: UUID(), title: "alice's secret")
            _ = try await device.db.save(secret)
            try await device.sync.sync()

            let noToken = try await Self.request(url, "pull", token: nil, body: Data("{}".utf8))
            #expect(noToken.status == 401)
            #expect(noToken.json["error"] as? String == "unauthorized")
            let expired = try await server.issueToken(for: alice.account, lifetime: .zero)
            let expiredAnswer = try await Self.request(url, "account", token: expired, body: nil)
            #expect(expiredAnswer.status == 401)
            #expect((expiredAnswer.json["message"] as? String)?.contains("expired") == true)
            let malformed = try await Self.request(url, "push", token: mallory.token, body: Data("{\"device\": 1".utf8))
            #expect(malformed.status == 400)
            #expect(malformed.json["error"] as? String == "invalidArgument")

            // Mallory pulls everything there is: only his own (nothing).
            let pull = try JSONEncoder().encode(SyncPull(device: UUID().uuidString, after: 0, limit: 10_000))
            let pulled = try await Self.request(url, "pull", token: mallory.token, body: pull)
            #expect(pulled.status == 200)
            #expect((pulled.json["changes"] as? [Any])?.isEmpty == true)

            // Mallory writes over alice's row: refused for that row, nothing of it told.
            let forged = SyncPush(device: UUID().uuidString, token: UUID().uuidString, acknowledged: nil, changes: [
                SyncChange(table: Item.tableName, id: secret.id.uuidString,
                           value: String(decoding: try JSONEncoder().encode(Item(id: secret.id, title: "pwned")), as: UTF8.self), seq: 1, version: 0),
            ])
            let pushed = try await Self.request(url, "push", token: mallory.token, body: try JSONEncoder().encode(forged))
            #expect(pushed.status == 200)
            let refused = try #require(pushed.json["refused"] as? [[String: Any]])
            #expect(refused.count == 1 && refused[0]["reason"] as? String == "forbidden" && refused[0]["serverValue"] == nil)
            #expect(try await postgres.get(Item.self, id: secret.id)?.title == "alice's secret")
        }
    }

    @Test("a running device cancelled during its long poll stops promptly, again and again (FoundationNetworking's cancellation deadlock)")
    func cancelDuringLongPoll() async throws {
        try await Self.withHTTPServer { server, url, _ in
            let alice = try await server.addAccount("alice")
            for _ in 0..<20 {
                let device = try Self.device(url, token: alice.token)
                let states = device.sync.states
                let running = Task { try await device.sync.run() }
                // After the first round the device waits: its long poll is on the way or in flight.
                for await state in states { if case .idle = state { break } }
                running.cancel()
                // A deadlock would never end this await (the suite's hang limit reports it).
                _ = await running.result
            }
        }
    }

    @Test("live over HTTP: a running device of another account gets a shared list's change through long polling, and its revoke")
    func liveOverHTTP() async throws {
        try await Self.withHTTPServer { server, url, _ in
            let alice = try await server.addAccount("alice"), bob = try await server.addAccount("bob")
            let aliceDevice = try Self.device(url, token: alice.token)
            let list = List(id: UUID(), name: "groceries", items: [])
            _ = try await aliceDevice.db.save(list)
            try await aliceDevice.sync.sync()
            try await server.share(list, with: bob.account, by: alice.account)

            let bobDevice = try Self.device(url, token: bob.token)
            let values = bobDevice.db.observe(Filter<Item>())
            var iterator = values.makeAsyncIterator()
            let running = Task { try await bobDevice.sync.run() }
            defer { running.cancel() }

            var more = list
            more.items.append(Item(id: UUID(), title: "bread"))
            _ = try await aliceDevice.db.save(more)
            try await aliceDevice.sync.sync()
            // Waits for bob's database to change, not for time (the hang limit ends a stall).
            while let items = try await iterator.next(), !items.map(\.title).contains("bread") {}
            // Revoked on the server's side (not through HTTP): the running device learns it at once.
            try await server.revokeShare(list, from: bob.account, by: alice.account)
            while let items = try await iterator.next(), items.map(\.title).contains("bread") {}
            #expect(try await SyncScopesTests.titles(bobDevice.db).isEmpty)
        }
    }

    @Test("live pushes: a running device hears another device's commit on its event stream (and by long polls where it does not listen); a stream needs a token and counts toward the account's cap")
    func liveOverEvents() async throws {
        try await SyncSecurityTests.withHTTPEndpoint(models: SyncScopesTests.models, limits: .init(waitsPerAccount: 2)) { endpoint, server, url, _ in
            let alice = try await server.addAccount("alice")
            let writer = try Self.device(url, token: alice.token)
            for usesEvents in [true, false] {
                let path = FileManager.default.temporaryDirectory.appendingPathComponent("events-\(UUID().uuidString).sqlite").path
                let db = try SQLite.Database(path: path)
                let transport = HTTPSyncTransport(server: url, token: alice.token, usesEvents: usesEvents)
                let reader = try SQLite.Sync(local: db, transport: transport, models: SyncScopesTests.models, pollInterval: .seconds(3_600))
                let values = db.observe(Filter<Item>())
                var iterator = values.makeAsyncIterator()
                let running = Task { try await reader.run() }
                defer { running.cancel() }
                let title = "live \(usesEvents ? "event" : "poll")"
                _ = try await writer.db.save(Item(id: UUID(), title: title))
                try await writer.sync.sync()
                // Waits for the reader's database to change (an hour's poll interval: only a
                // signal from the server brings it; the hang limit ends a stall).
                while let items = try await iterator.next(), !items.map(\.title).contains(title) {}
            }

            // The stream needs a token, and a version that is one.
            let noToken = try await Self.request(url, "events", token: nil, body: nil)
            #expect(noToken.status == 401 && noToken.json["error"] as? String == "unauthorized")
            guard case .refused(let badVersion) = await endpoint.events(authorization: "Bearer \(alice.token)", after: "-1") else {
                Issue.record("a negative version was taken")
                return
            }
            #expect(badVersion.status == 400)
            // Two streams are the cap here (with long polls): the third is refused at once. (An
            // account of its own: the readers' streams above end when the server notices.)
            let carol = try await server.addAccount("carol")
            var held: [AsyncStream<Data>] = []
            for _ in 0..<2 {
                guard case .stream(let stream) = await endpoint.events(authorization: "Bearer \(carol.token)", after: "0") else {
                    Issue.record("a stream within the cap was refused")
                    return
                }
                held.append(stream)
            }
            var first = held[0].makeAsyncIterator()
            #expect(String(decoding: try #require(await first.next()), as: UTF8.self) == ": listening\n\n")
            guard case .refused(let third) = await endpoint.events(authorization: "Bearer \(carol.token)", after: "0") else {
                Issue.record("a third stream was admitted")
                return
            }
            #expect(third.status == 429)
            held.removeAll()
        }
    }
}
#endif
