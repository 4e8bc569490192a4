#if Server
import CodableSync
import CodableSyncHummingbird
import Foundation
import Hummingbird
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The sync server faces the internet: hostile numbers, graphs that reach for other accounts'
/// rows, read-only shares, revoked sharees, rows no account owns, bodies without a token, floods
/// of one account. Each test is a hole that was open; a real PostgreSQL, over HTTP where HTTP
/// reaches it.
@Suite("Sync: security of the server (hostile accounts and clients)", .serverShare, .needsPostgres, .serialized, .hangLimit(minutes: 3))
struct SyncSecurityTests {
    typealias Item = SyncScopesTests.Item
    typealias List = SyncScopesTests.List

    /// A value holding lists: a graph three levels deep (board → lists → items).
    #if Macros
    @RowCodable
    #endif
    struct Board: UUIDModel, Sendable, Equatable {
        let id: UUID
        var name: String
        var lists: [List]
    }

    static let models: [any (Model & Sendable).Type] = [Item.self, List.self, Board.self]

    static func json(_ value: some Encodable) throws -> String { String(decoding: try JSONEncoder().encode(value), as: UTF8.self) }

    /// A push of `changes` (value, or `nil` for a delete), numbered in order.
    static func push(_ changes: [(table: String, id: UUID, value: String?)], device: String = UUID().uuidString) -> SyncPush {
        SyncPush(device: device, token: UUID().uuidString, acknowledged: nil, changes: changes.enumerated().map { index, change in
            SyncChange(table: change.table, id: change.id.uuidString, value: change.value, seq: Int64(index + 1), version: 0)
        })
    }

    /// The ids of the rows an account's pull from the start brings.
    static func pulledIDs(_ server: Postgres.SyncServer, _ account: SyncAccount) async throws -> Set<String> {
        let answer = try await server.pull(SyncPull(device: UUID().uuidString, after: 0, limit: 10_000), as: account)
        return Set(answer.changes.filter { $0.value != nil }.map(\.id))
    }

    /// A sync server over HTTP on 127.0.0.1 with these limits, until `body` returns.
    static func withHTTPServer(
        limits: SyncHTTPEndpoint.Limits = .init(), sharesNeedAcceptance: Bool = false,
        _ body: (_ server: Postgres.SyncServer, _ url: URL, _ postgres: Postgres.Database) async throws -> Void
    ) async throws {
        try await withHTTPEndpoint(limits: limits, sharesNeedAcceptance: sharesNeedAcceptance) { _, server, url, postgres in
            try await body(server, url, postgres)
        }
    }

    /// ``withHTTPServer(limits:sharesNeedAcceptance:_:)``, with the endpoint the routes serve, for
    /// `models` (this suite's by default).
    static func withHTTPEndpoint(
        models: [any (Model & Sendable).Type] = models, limits: SyncHTTPEndpoint.Limits = .init(), sharesNeedAcceptance: Bool = false,
        _ body: (_ endpoint: SyncHTTPEndpoint, _ server: Postgres.SyncServer, _ url: URL, _ postgres: Postgres.Database) async throws -> Void
    ) async throws {
        guard #available(macOS 14, iOS 17, tvOS 17, *) else { return }
        let postgres = try await TestServer.shared.freshDatabase()
        let server = try Postgres.SyncServer(database: postgres, models: models)
        let endpoint = SyncHTTPEndpoint(server: server, limits: limits, sharesNeedAcceptance: sharesNeedAcceptance)
        let router = Router()
        router.addSyncRoutes(endpoint)
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, server: .syncHTTP1, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) })
        let running = Task { try await app.run() }
        defer { running.cancel() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        try await body(endpoint, server, try #require(URL(string: "http://127.0.0.1:\(port)/sync")), postgres)
    }

    /// A raw request with a JSON body (text), as a client that is not ours would send it.
    static func request(_ url: URL, _ route: String, token: String?, body: String?) async throws -> (status: Int, json: [String: Any]) {
        try await SyncHTTPTests.request(url, route, token: token, body: body.map { Data($0.utf8) })
    }

    @Test("numbers from a request are validated: Int64.min, negative and huge versions, limits and entry numbers are refused with 400, never a crash")
    func hostileNumbers() async throws {
        try await Self.withHTTPServer { server, url, postgres in
            let alice = try await server.addAccount("alice")
            let hostile: [(route: String, body: String)] = [
                ("pull", #"{"device": "d", "after": -9223372036854775808, "limit": 100}"#),
                ("pull", #"{"device": "d", "after": -1, "limit": 100}"#),
                ("pull", #"{"device": "d", "after": 0, "limit": 0}"#),
                ("pull", #"{"device": "d", "after": 0, "limit": -9223372036854775808}"#),
                ("pull", #"{"device": "d", "after": 0, "limit": 100000000000000000000}"#),
                ("pull", #"{"device": "d", "after": 1, "limit": 100, "horizon": -9223372036854775808}"#),
                ("pull", #"{"device": "d", "after": 1, "limit": 100, "horizon": -1}"#),
                ("wait", #"{"after": -9223372036854775808, "timeout": 1}"#),
                ("wait", #"{"after": 0, "timeout": 1e300}"#),
                ("wait", #"{"after": 0, "timeout": -1}"#),
                ("push", #"{"device": "d", "token": "t", "changes": [{"table": "Item", "id": "\#(UUID())", "seq": -9223372036854775808}]}"#),
                ("push", #"{"device": "d", "token": "t", "changes": [{"table": "Item", "id": "\#(UUID())", "seq": 1, "version": -9223372036854775808}]}"#),
                ("push", #"{"device": "", "token": "t", "changes": []}"#),
            ]
            for (route, body) in hostile {
                let answer = try await Self.request(url, route, token: alice.token, body: body)
                #expect(answer.status == 400, "\(route) \(body) answered \(answer.status) \(answer.json)")
                #expect(answer.json["error"] as? String == "invalidArgument")
            }
            // The largest version there is: an empty answer, not an overflow.
            let top = try await Self.request(url, "pull", token: alice.token, body: #"{"device": "d", "after": 9223372036854775807, "limit": 10}"#)
            #expect(top.status == 200 || top.status == 409)
            // The largest known horizon: a device that says it is never behind only fools itself.
            let never = try await Self.request(url, "pull", token: alice.token, body: #"{"device": "d", "after": 1, "limit": 10, "horizon": 9223372036854775807, "restarting": true}"#)
            #expect(never.status == 200, "\(never.json)")
            // The server still serves everyone.
            let device = try SyncHTTPTests.device(url, token: alice.token)
            _ = try await device.db.save(Item(id: UUID(), title: "after the hostile requests"))
            try await device.sync.sync()
            #expect(try await SyncScopesTests.titles(postgres) == ["after the hostile requests"])
        }
    }

    @Test("a graph at any depth cannot reach another account's row: a new board holding a new list linking alice's item is refused, and nothing of it is written")
    func nestedGraphIsAuthorized() async throws {
        let postgres = try await TestServer.shared.freshDatabase()
        let server = try Postgres.SyncServer(database: postgres, models: Self.models)
        let alice = try await server.addAccount("alice").account, mallory = try await server.addAccount("mallory").account
        let secret = Item(id: UUID(), title: "alice's secret")
        let alicesList = List(id: UUID(), name: "alice's", items: [secret])
        _ = try await server.push(Self.push([(List.tableName, alicesList.id, try Self.json(alicesList))]), as: alice)
        #expect(try await Self.pulledIDs(server, alice).contains(secret.id.uuidString))

        let inner = List(id: UUID(), name: "inner", items: [secret])
        let board = Board(id: UUID(), name: "mallory's board", lists: [inner])
        let answer = try await server.push(Self.push([(Board.tableName, board.id, try Self.json(board))]), as: mallory)
        #expect(answer.refused.map(\.id) == [board.id.uuidString])
        #expect(answer.refused.first?.reason == .forbidden)
        #expect(try !Self.json(answer).contains("alice's secret"))
        #expect(try await postgres.get(Board.self, id: board.id) == nil)
        #expect(try await postgres.get(List.self, id: inner.id) == nil)
        #expect(try await !Self.pulledIDs(server, mallory).contains(secret.id.uuidString))
        #expect(try await postgres.get(Item.self, id: secret.id)?.title == "alice's secret")

        // The same graph of mallory's own rows, at any depth, is his.
        let own = Board(id: UUID(), name: "own", lists: [List(id: UUID(), name: "own list", items: [Item(id: UUID(), title: "own item")])])
        let accepted = try await server.push(Self.push([(Board.tableName, own.id, try Self.json(own))]), as: mallory)
        #expect(accepted.refused.isEmpty)
        #expect(try await Self.pulledIDs(server, mallory) == [own.id.uuidString, own.lists[0].id.uuidString, own.lists[0].items[0].id.uuidString])
        #expect(try await Self.pulledIDs(server, alice).isDisjoint(with: [own.id.uuidString, own.lists[0].items[0].id.uuidString]))
    }

    @Test("a read-only share never becomes writable: linking its item from a read-write shared value is refused, and the item stays unwritable")
    func readOnlyShareStaysReadOnly() async throws {
        let postgres = try await TestServer.shared.freshDatabase()
        let server = try Postgres.SyncServer(database: postgres, models: Self.models)
        let alice = try await server.addAccount("alice").account, bob = try await server.addAccount("bob").account
        let item = Item(id: UUID(), title: "read-only item")
        let readOnly = List(id: UUID(), name: "read-only", items: [item])
        let writable = List(id: UUID(), name: "writable", items: [])
        _ = try await server.push(Self.push([
            (List.tableName, readOnly.id, try Self.json(readOnly)), (List.tableName, writable.id, try Self.json(writable)),
        ]), as: alice)
        try await server.share(readOnly, with: bob, access: .read, by: alice)
        try await server.share(writable, with: bob, access: .readWrite, by: alice)

        var linking = writable
        linking.items = [item]
        let answer = try await server.push(Self.push([(List.tableName, writable.id, try Self.json(linking))]), as: bob)
        #expect(answer.refused.map(\.reason) == [.forbidden])
        #expect(try await postgres.get(List.self, id: writable.id)?.items.isEmpty == true)
        let edit = try await server.push(Self.push([(Item.tableName, item.id, try Self.json(Item(id: item.id, title: "bob's edit")))]), as: bob)
        #expect(edit.refused.map(\.reason) == [.forbidden])
        #expect(try await postgres.get(Item.self, id: item.id)?.title == "read-only item")

        // A link between alice's rows that bob can write is his to make.
        let own = Item(id: UUID(), title: "in the writable list")
        var adding = writable
        adding.items = [own]
        #expect(try await server.push(Self.push([(List.tableName, writable.id, try Self.json(adding))]), as: bob).refused.isEmpty)
        #expect(try await server.push(Self.push([(List.tableName, writable.id, try Self.json(adding))]), as: alice).refused.isEmpty)
    }

    @Test("a revoked sharee keeps nothing: a new item linked from the shared list and from its own list in one push is refused for its own list")
    func revokedShareeKeepsNothing() async throws {
        let postgres = try await TestServer.shared.freshDatabase()
        let server = try Postgres.SyncServer(database: postgres, models: Self.models)
        let alice = try await server.addAccount("alice").account, bob = try await server.addAccount("bob").account
        let shared = List(id: UUID(), name: "shared", items: [])
        _ = try await server.push(Self.push([(List.tableName, shared.id, try Self.json(shared))]), as: alice)
        try await server.share(shared, with: bob, access: .readWrite, by: alice)

        let added = Item(id: UUID(), title: "added by bob")
        let sharedWithItem = List(id: shared.id, name: "shared", items: [added])
        let bobs = List(id: UUID(), name: "bob's", items: [added])
        // Both orders: his own list first, then the shared one, and the other way round.
        for order in [[bobs, sharedWithItem], [sharedWithItem, bobs]] {
            let answer = try await server.push(Self.push(order.map { (table: List.tableName, id: $0.id, value: try? Self.json($0)) }), as: bob)
            #expect(answer.refused.map(\.id) == [bobs.id.uuidString])
            #expect(answer.refused.first?.reason == .forbidden)
        }
        #expect(try await postgres.get(List.self, id: bobs.id) == nil)
        #expect(try await postgres.get(List.self, id: shared.id)?.items.map(\.id) == [added.id])

        try await server.revokeShare(shared, from: bob, by: alice)
        #expect(try await Self.pulledIDs(server, bob).isEmpty)
        let after = try await server.pull(SyncPull(device: UUID().uuidString, after: 0, limit: 100), as: bob)
        #expect(after.changes.allSatisfy { $0.value == nil })
    }

    @Test("rows no account owns (written by server-side code) are read-only to accounts and never claimed; links the server made stay")
    func ownerlessRowsAreReadOnly() async throws {
        let postgres = try await TestServer.shared.freshDatabase()
        let server = try Postgres.SyncServer(database: postgres, models: Self.models)
        let alice = try await server.addAccount("alice").account, bob = try await server.addAccount("bob").account
        // Server-side code writes an item no account owns (the server's tables made first).
        _ = try await server.pull(SyncPull(device: UUID().uuidString, after: 0, limit: 1))
        let official = Item(id: UUID(), title: "official")
        _ = try await postgres.save(official)

        // Alice cannot link it (that would claim it, or make it hers to write).
        let list = List(id: UUID(), name: "alice's", items: [official])
        let answer = try await server.push(Self.push([(List.tableName, list.id, try Self.json(list))]), as: alice)
        #expect(answer.refused.map(\.reason) == [.forbidden])
        let owners = try await postgres.textRows("SELECT account FROM codablesync_owners WHERE id = $1", [official.id.uuidString.lowercased()])
        #expect(owners.isEmpty)

        // The server links it into alice's list itself: alice reads it, keeps the link when she
        // edits her list, and cannot change the item; bob can neither.
        let empty = List(id: UUID(), name: "alice's", items: [])
        #expect(try await server.push(Self.push([(List.tableName, empty.id, try Self.json(empty))]), as: alice).refused.isEmpty)
        _ = try await postgres.save(List(id: empty.id, name: "alice's", items: [official]))
        #expect(try await Self.pulledIDs(server, alice).contains(official.id.uuidString))
        let renamed = List(id: empty.id, name: "alice's, renamed", items: [official])
        #expect(try await server.push(Self.push([(List.tableName, empty.id, try Self.json(renamed))]), as: alice).refused.isEmpty)
        for account in [alice, bob] {
            let edit = try await server.push(Self.push([(Item.tableName, official.id, try Self.json(Item(id: official.id, title: "mine now")))]), as: account)
            #expect(edit.refused.map(\.reason) == [.forbidden])
        }
        #expect(try await postgres.get(Item.self, id: official.id)?.title == "official")
        #expect(try await postgres.textRows("SELECT account FROM codablesync_owners WHERE id = $1", [official.id.uuidString.lowercased()]).isEmpty)
    }

    @Test("refusals tell no other account's values: a unique clash says which constraint, not the key it met (PostgreSQL's DETAIL)")
    func refusalsWithoutDetail() async throws {
        let postgres = try await TestServer.shared.freshDatabase()
        let server = try Postgres.SyncServer(database: postgres, models: Self.models)
        let alice = try await server.addAccount("alice").account, bob = try await server.addAccount("bob").account
        _ = try await server.pull(SyncPull(device: UUID().uuidString, after: 0, limit: 1))
        try await postgres.execute(#"CREATE UNIQUE INDEX items_unique_title ON "\#(Item.tableName)" (title)"#)
        let original = Item(id: UUID(), title: "alice-secret-title")
        #expect(try await server.push(Self.push([(Item.tableName, original.id, try Self.json(original))]), as: alice).refused.isEmpty)
        let clash = Item(id: UUID(), title: "alice-secret-title")
        let answer = try await server.push(Self.push([(Item.tableName, clash.id, try Self.json(clash))]), as: bob)
        let refusal = try #require(answer.refused.first)
        #expect(refusal.reason == .uniqueClash)
        #expect(refusal.message.contains("items_unique_title"))
        #expect(!refusal.message.contains("Key ("))
    }

    @Test("a request without a valid token costs its headers only: a large body is refused 401 unread; an account's body over the limit is 413")
    func bodiesAfterTokens() async throws {
        try await Self.withHTTPServer(limits: .init(maximumBodySize: 1 << 20)) { server, url, _ in
            let alice = try await server.addAccount("alice")
            let large = String(repeating: "x", count: 8 << 20)
            let anonymous = try await Self.request(url, "push", token: nil, body: large)
            #expect(anonymous.status == 401)
            let wrong = try await Self.request(url, "push", token: "not a token", body: large)
            #expect(wrong.status == 401)
            let tooLarge = try await Self.request(url, "push", token: alice.token, body: large)
            #expect(tooLarge.status == 413)
            #expect(tooLarge.json["error"] as? String == "bodyTooLarge")
            // The server goes on serving.
            let account = try await Self.request(url, "account", token: alice.token, body: nil)
            #expect(account.status == 200)
        }
    }

    @Test("one account's long polls are capped: past its limit a wait is refused 429 at once, other accounts still wait")
    func longPollsPerAccountAreCapped() async throws {
        try await Self.withHTTPEndpoint(limits: .init(waitsPerAccount: 1)) { endpoint, server, url, _ in
            let alice = try await server.addAccount("alice"), bob = try await server.addAccount("bob")
            // The held poll, straight to the endpoint (the cap is the endpoint's, whatever client).
            let token = alice.token
            let holding = Task {
                await endpoint.respond(to: .wait, authorization: "Bearer \(token)", body: Data(#"{"after": 0, "timeout": 60}"#.utf8))
            }
            defer { holding.cancel() }
            // Until the held one is admitted (however long a loaded machine takes to run it),
            // another may still be; then it is refused at once. (Held for 60 s, the most a wait
            // may ask; the suite's hang limit ends a test that never sees the refusal.)
            var refused: (status: Int, json: [String: Any])
            repeat {
                refused = try await Self.request(url, "wait", token: alice.token, body: #"{"after": 0, "timeout": 1}"#)
                #expect(refused.status == 429 || refused.json["changed"] as? Bool == false, "\(refused)")
            } while refused.status != 429
            #expect(refused.json["error"] as? String == "tooManyRequests")
            let other = try await Self.request(url, "wait", token: bob.token, body: #"{"after": 0, "timeout": 1}"#)
            #expect(other.status == 200)
        }
    }

    @Test("shares by invitation over HTTP: an offered list reaches the other account only once it accepts; a declined one never")
    func sharesByInvitation() async throws {
        try await Self.withHTTPServer(sharesNeedAcceptance: true) { server, url, _ in
            let alice = try await server.addAccount("alice"), bob = try await server.addAccount("bob")
            let list = List(id: UUID(), name: "offered", items: [Item(id: UUID(), title: "offered item")])
            let other = List(id: UUID(), name: "declined", items: [])
            _ = try await server.push(Self.push([
                (List.tableName, list.id, try Self.json(list)), (List.tableName, other.id, try Self.json(other)),
            ]), as: alice.account)
            for shared in [list, other] {
                let offered = try await Self.request(url, "share", token: alice.token, body: #"{"table": "\#(List.tableName)", "id": "\#(shared.id)", "account": "bob"}"#)
                #expect(offered.status == 200 && offered.json["offered"] as? Bool == true)
            }
            #expect(try await Self.pulledIDs(server, bob.account).isEmpty)
            var request = URLRequest(url: url.appendingPathComponent("offers"))
            request.setValue("Bearer \(bob.token)", forHTTPHeaderField: "Authorization")
            let (data, _) = try await URLSession.shared.data(for: request)
            let offers = try JSONDecoder().decode([SyncPendingShare].self, from: data)
            #expect(Set(offers.map(\.id)) == [list.id.uuidString.lowercased(), other.id.uuidString.lowercased()] || Set(offers.map(\.id)) == [list.id.uuidString, other.id.uuidString])
            let accepted = try await Self.request(url, "accept", token: bob.token, body: #"{"table": "\#(List.tableName)", "id": "\#(list.id)", "account": "alice"}"#)
            #expect(accepted.status == 200)
            let declined = try await Self.request(url, "decline", token: bob.token, body: #"{"table": "\#(List.tableName)", "id": "\#(other.id)", "account": "alice"}"#)
            #expect(declined.status == 200)
            #expect(try await Self.pulledIDs(server, bob.account) == [list.id.uuidString, list.items[0].id.uuidString])
            // Accepting what was not offered changes nothing.
            let forged = try await Self.request(url, "accept", token: bob.token, body: #"{"table": "\#(List.tableName)", "id": "\#(other.id)", "account": "alice"}"#)
            #expect(forged.status != 200)
            #expect(try await Self.pulledIDs(server, bob.account).count == 2)
        }
    }

    @Test("one account floods with the largest pushes there are, 3 at a time: its excess is refused 429, and another account's rounds all complete")
    func floodDoesNotStallOthers() async throws {
        try await Self.withHTTPServer { server, url, postgres in
            let flooder = try await server.addAccount("flooder"), other = try await server.addAccount("other")
            let device = try SyncHTTPTests.device(url, token: other.token)
            let stop = Locked(false), statuses = Locked<[Int]>([])
            let flood = Task {
                await withTaskGroup(of: Void.self) { group in
                    for _ in 0..<3 {
                        group.addTask {
                            while !stop.withLock({ $0 }) {
                                let changes = (0..<SyncPush.maximumChanges).map { index in
                                    let item = Item(id: UUID(), title: "flood \(index)")
                                    return (table: Item.tableName, id: item.id, value: try? Self.json(item))
                                }
                                let body = (try? JSONEncoder().encode(Self.push(changes))).map { String(decoding: $0, as: UTF8.self) }
                                let status = (try? await Self.request(url, "push", token: flooder.token, body: body))?.status ?? 0
                                statuses.withLock { $0.append(status) }
                            }
                        }
                    }
                }
            }
            // The flood under way, then the other account's rounds.
            while statuses.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(20)) }
            for round in 0..<3 {
                _ = try await device.db.save(Item(id: UUID(), title: "other's \(round)"))
                try await device.sync.sync()
            }
            stop.withLock { $0 = true }
            await flood.value
            let answered = statuses.withLock { $0 }
            #expect(answered.allSatisfy { $0 == 200 || $0 == 429 }, "the flood was answered \(Set(answered))")
            #expect(answered.contains(429))
            #expect(try await postgres.get(Item.self).filter { $0.title.hasPrefix("other's") }.count == 3)
            #expect(try await SyncScopesTests.titles(device.db) == ["other's 0", "other's 1", "other's 2"])
        }
    }

    @Test("NUL characters (which PostgreSQL text cannot hold) in a device id, a token, a row id, a nested id or a share's names are refused 400, never a 500 (found by Schemathesis)")
    func nulCharacters() async throws {
        try await Self.withHTTPServer { server, url, postgres in
            let alice = try await server.addAccount("alice")
            let id = UUID().uuidString
            let hostile: [(route: String, body: String)] = [
                ("push", #"{"device": "a\u0000b", "token": "t1", "changes": [{"table": "Item", "id": "\#(id)", "value": null, "seq": 1}]}"#),
                ("push", #"{"device": "d", "token": "t\u00002", "changes": [{"table": "Item", "id": "\#(id)", "value": null, "seq": 1}]}"#),
                ("push", #"{"device": "d", "token": "t3", "changes": [{"table": "Item", "id": "x\u0000y", "value": null, "seq": 1}]}"#),
                ("push", #"{"device": "d", "token": "t4", "changes": [{"table": "List", "id": "\#(id)", "value": "{\"id\": \"\#(id)\", \"name\": \"n\", \"items\": [{\"id\": \"a\\u0000b\", \"title\": \"x\"}]}", "seq": 1}], "keepsRefused": true}"#),
                ("pull", #"{"device": "a\u0000b", "after": 0, "limit": 10}"#),
                ("share", #"{"table": "List", "id": "\#(id)", "account": "b\u0000ob"}"#),
                ("decline", #"{"table": "List", "id": "x\u0000", "account": "bob"}"#),
            ]
            for request in hostile {
                let answer = try await Self.request(url, request.route, token: alice.token, body: request.body)
                #expect(answer.status == 400 || answer.status == 200, "/\(request.route) \(request.body): \(answer.status) \(answer.json)")
                #expect(answer.status != 500)
            }
            // The server goes on, and nothing was written for alice.
            #expect(try await postgres.count(Item.self) == 0)
            #expect(try await Self.request(url, "account", token: alice.token, body: nil).status == 200)
        }
    }
}
#endif
