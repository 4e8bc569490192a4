#if Postgres
import CodableSync
import Foundation
import Testing

/// Sync for many accounts: each device pulls its account's scope only, writes outside it are
/// refused per change, shares bring and revokes remove rows; on a real server, devices as real
/// SQLite files.
@Suite("Sync: accounts, scopes and sharing", .serverShare, .needsPostgres, .serialized, .hangLimit(minutes: 3))
struct SyncScopesTests {
    // Codable stated, as @RowCodable's documentation asks (List's array of Item, used from other files).
    #if Macros
    @RowCodable
    #endif
    struct Item: UUIDModel, Codable, Sendable, Equatable {
        let id: UUID
        var title: String
    }

    #if Macros
    @RowCodable
    #endif
    struct List: UUIDModel, Codable, Sendable, Equatable {
        let id: UUID
        var name: String
        var items: [Item]
    }

    static let models: [any (Model & Sendable).Type] = [Item.self, List.self]

    /// A device of `account`: its own SQLite file.
    static func device(_ server: Postgres.SyncServer, _ account: SyncAccount) throws -> (db: SQLite.Database, sync: SQLite.Sync) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("scope-\(UUID().uuidString).sqlite").path
        let db = try SQLite.Database(path: path)
        return (db, try SQLite.Sync(local: db, transport: server.transport(for: account), models: models))
    }

    static func titles(_ db: some ModelStore) async throws -> [String] {
        try await db.get(Item.self).map(\.title).sorted()
    }

    static func listNames(_ db: some ModelStore) async throws -> [String] {
        try await db.get(List.self).map(\.name).sorted()
    }

    @Test("two accounts, three devices: nothing crosses; a shared list reaches the other account with what it links, read-only refused, revoked removed")
    func accountsAndSharing() async throws {
        let postgres = try await TestServer.shared.freshDatabase()
        let server = try Postgres.SyncServer(database: postgres, models: Self.models)
        let alice = try await server.addAccount("alice").account
        let bob = try await server.addAccount("bob").account
        let alice1 = try Self.device(server, alice), alice2 = try Self.device(server, alice), bob1 = try Self.device(server, bob)

        let groceries = List(id: UUID(), name: "groceries", items: [Item(id: UUID(), title: "milk")])
        _ = try await alice1.db.save(groceries)
        _ = try await bob1.db.save(List(id: UUID(), name: "bob's secrets", items: [Item(id: UUID(), title: "diary")]))
        for device in [alice1, bob1, alice2] { try await device.sync.sync() }
        #expect(try await Self.listNames(alice2.db) == ["groceries"])
        #expect(try await Self.titles(alice2.db) == ["milk"])
        #expect(try await Self.listNames(bob1.db) == ["bob's secrets"])
        #expect(try await Self.titles(bob1.db) == ["diary"])
        #expect(try await Self.listNames(postgres) == ["bob's secrets", "groceries"])

        // Shared read-only: the list and its items reach bob's device (an initial sync of the share).
        try await server.share(groceries, with: bob, access: .read, by: alice)
        try await bob1.sync.sync()
        #expect(try await Self.listNames(bob1.db) == ["bob's secrets", "groceries"])
        #expect(try await Self.titles(bob1.db) == ["diary", "milk"])
        #expect(try await server.shares(table: List.tableName, id: groceries.id.uuidString) == [bob: .read])

        // What alice adds follows; what bob changes is refused, and stays his alone.
        var more = groceries
        more.items.append(Item(id: UUID(), title: "eggs"))
        _ = try await alice1.db.save(more)
        try await alice1.sync.sync()
        try await bob1.sync.sync()
        #expect(try await Self.titles(bob1.db) == ["diary", "eggs", "milk"])
        var edited = groceries.items[0]
        edited.title = "oat milk"
        _ = try await bob1.db.save(edited)
        try await bob1.sync.sync()
        let refused = try await bob1.sync.refusedChanges()
        #expect(refused.map(\.reason) == [.forbidden])
        #expect(refused.first?.serverValue == nil)
        #expect(try await Self.titles(postgres).contains("milk"))
        #expect(try await !Self.titles(postgres).contains("oat milk"))

        // A delete of alice's reaches bob's device too.
        _ = try await alice1.db.delete(Item.self, id: more.items[1].id)
        try await alice1.sync.sync()
        try await bob1.sync.sync()
        #expect(try await !Self.titles(bob1.db).contains("eggs"))

        // Revoked: gone from bob's device, kept on the server and on alice's devices.
        try await server.revokeShare(groceries, from: bob, by: alice)
        try await bob1.sync.sync()
        try await alice2.sync.sync()
        #expect(try await Self.listNames(bob1.db) == ["bob's secrets"])
        #expect(try await Self.titles(bob1.db).filter { $0 != "oat milk" } == ["diary"])
        #expect(try await Self.listNames(alice2.db) == ["groceries"])
        #expect(try await Self.titles(alice2.db) == ["milk"])
        #expect(try await Self.listNames(postgres) == ["bob's secrets", "groceries"])

        // Shared again, read-write: bob's edit goes through, and reaches alice.
        try await server.share(groceries, with: bob, access: .readWrite, by: alice)
        try await bob1.sync.sync()
        var renamed = try #require(try await bob1.db.get(List.self, id: groceries.id))
        renamed.name = "shopping"
        _ = try await bob1.db.save(renamed)
        try await bob1.sync.sync()
        try await alice2.sync.sync()
        #expect(try await Self.listNames(alice2.db) == ["shopping"])
        #expect(try await !Self.listNames(alice2.db).contains("bob's secrets"))
    }

    @Test("a forged push naming another account's rows is refused per change: nothing written, nothing of the rows told; the rest applies")
    func forgedPush() async throws {
        let postgres = try await TestServer.shared.freshDatabase()
        let server = try Postgres.SyncServer(database: postgres, models: Self.models)
        let alice = try await server.addAccount("alice").account
        let mallory = try await server.addAccount("mallory").account
        let device = try Self.device(server, alice)
        let secret = Item(id: UUID(), title: "alice's secret")
        let list = List(id: UUID(), name: "alice's list", items: [secret])
        _ = try await device.db.save(list)
        try await device.sync.sync()

        func json(_ value: some Encodable) throws -> String { String(decoding: try JSONEncoder().encode(value), as: UTF8.self) }
        let stolen = List(id: UUID(), name: "stolen", items: [secret])
        let own = Item(id: UUID(), title: "mallory's own")
        let push = SyncPush(device: UUID().uuidString, token: UUID().uuidString, acknowledged: nil, changes: [
            SyncChange(table: Item.tableName, id: secret.id.uuidString, value: try json(Item(id: secret.id, title: "overwritten")), seq: 1, version: 0),
            SyncChange(table: List.tableName, id: list.id.uuidString, value: nil, seq: 2, version: 0),
            SyncChange(table: List.tableName, id: stolen.id.uuidString, value: try json(stolen), seq: 3, version: 0),
            SyncChange(table: Item.tableName, id: own.id.uuidString, value: try json(own), seq: 4, version: 0),
        ])
        let answer = try await server.push(push, as: mallory)
        #expect(Set(answer.refused.map(\.id)) == [secret.id.uuidString, list.id.uuidString, stolen.id.uuidString])
        #expect(answer.refused.allSatisfy { $0.reason == .forbidden && $0.serverValue == nil })
        #expect(answer.conflicts.isEmpty)
        let told = try json(answer)
        #expect(!told.contains("alice's secret") && !told.contains("alice's list"))
        #expect(try await postgres.get(Item.self, id: secret.id)?.title == "alice's secret")
        #expect(try await postgres.get(List.self, id: list.id) != nil)
        #expect(try await postgres.get(List.self, id: stolen.id) == nil)
        #expect(try await postgres.get(Item.self, id: own.id)?.title == "mallory's own")

        // Mallory's pulls, from the start, carry his own row only.
        let pulled = try await server.pull(SyncPull(device: push.device, after: 0, limit: 1000), as: mallory)
        #expect(pulled.changes.map(\.id) == [own.id.uuidString])
        // Alice's devices do not get mallory's row.
        let alicePull = try await server.pull(SyncPull(device: UUID().uuidString, after: 0, limit: 1000), as: alice)
        #expect(Set(alicePull.changes.map(\.id)) == [secret.id.uuidString, list.id.uuidString])
    }

    @Test("no way around the scope: a bad value, a link to a tombstone, a link to a read-only or another owner's row; an item added to a shared list is the list owner's")
    func hostilePushesAndCollaboration() async throws {
        let postgres = try await TestServer.shared.freshDatabase()
        let server = try Postgres.SyncServer(database: postgres, models: Self.models)
        let bob = try await server.addAccount("bob").account
        let alice = try await server.addAccount("alice").account
        let carol = try await server.addAccount("carol").account
        let bobDevice = try Self.device(server, bob)
        let secret = Item(id: UUID(), title: "bob's secret")
        let shared = Item(id: UUID(), title: "bob's shared")
        let privateList = List(id: UUID(), name: "bob's private", items: [secret])
        let sharedList = List(id: UUID(), name: "bob's shared", items: [shared])
        _ = try await bobDevice.db.save([privateList, sharedList])
        try await bobDevice.sync.sync()
        try await server.share(sharedList, with: alice, access: .read, by: bob)
        try await server.share(sharedList, with: carol, access: .readWrite, by: bob)

        func json(_ value: some Encodable) throws -> String { String(decoding: try JSONEncoder().encode(value), as: UTF8.self) }
        func push(_ changes: [SyncChange], as account: SyncAccount) async throws -> SyncPushResult {
            try await server.push(SyncPush(device: UUID().uuidString, token: UUID().uuidString, acknowledged: nil, changes: changes), as: account)
        }
        // A value the server cannot decode, for a row of another account: refused as forbidden, nothing told.
        let garbled = try await push([SyncChange(table: Item.tableName, id: secret.id.uuidString, value: "\"x\"", seq: 1, version: 0)], as: alice)
        #expect(garbled.refused.map(\.reason) == [.forbidden])
        #expect(garbled.refused.first?.serverValue == nil)
        // A value with another id inside, or linking a row that is gone: the same.
        let wrongID = try await push([SyncChange(table: Item.tableName, id: secret.id.uuidString,
                                                 value: try json(Item(id: UUID(), title: "x")), seq: 1, version: 0)], as: alice)
        #expect(wrongID.refused.map(\.reason) == [.forbidden] && wrongID.refused.first?.serverValue == nil)
        let overDeleted = try await push([SyncChange(table: List.tableName, id: privateList.id.uuidString,
                                                     value: try json(List(id: privateList.id, name: "x", items: [Item(id: UUID(), title: "gone")])),
                                                     seq: 1, version: 0)], as: alice)
        #expect(overDeleted.refused.map(\.reason) == [.forbidden] && overDeleted.refused.first?.serverValue == nil)
        #expect(!(try json(overDeleted)).contains("bob's"))

        // Alice (read-only) links bob's shared item from a list of her own: refused (it would make it hers to write).
        let mine = List(id: UUID(), name: "alice's", items: [shared])
        let linked = try await push([SyncChange(table: List.tableName, id: mine.id.uuidString, value: try json(mine), seq: 1, version: 0)], as: alice)
        #expect(linked.refused.map(\.reason) == [.forbidden])
        // Carol (read-write) cannot take bob's item into a list of her own either: it would outlive the share.
        let carols = List(id: UUID(), name: "carol's", items: [shared])
        let taken = try await push([SyncChange(table: List.tableName, id: carols.id.uuidString, value: try json(carols), seq: 1, version: 0)], as: carol)
        #expect(taken.refused.map(\.reason) == [.forbidden])
        #expect(try await postgres.get(List.self, id: carols.id) == nil)

        // Carol adds a new item to bob's shared list: it is bob's (bob and alice get it), and it
        // leaves carol's devices with the share.
        let carolDevice = try Self.device(server, carol)
        try await carolDevice.sync.sync()
        var grown = try #require(try await carolDevice.db.get(List.self, id: sharedList.id))
        grown.items.append(Item(id: UUID(), title: "carol's addition"))
        _ = try await carolDevice.db.save(grown)
        try await carolDevice.sync.sync()
        #expect(try await carolDevice.sync.refusedChanges().isEmpty)
        try await bobDevice.sync.sync()
        #expect(try await Self.titles(bobDevice.db).contains("carol's addition"))
        let aliceDevice = try Self.device(server, alice)
        try await aliceDevice.sync.sync()
        #expect(try await Self.titles(aliceDevice.db) == ["bob's shared", "carol's addition"])
        try await server.revokeShare(sharedList, from: carol, by: bob)
        try await carolDevice.sync.sync()
        #expect(try await Self.titles(carolDevice.db).isEmpty)

        // Sharing what one does not own tells nothing about other accounts' names.
        do {
            try await server.share(privateList, with: SyncAccount("no such account"), by: alice)
            Issue.record("alice shared bob's list")
        } catch let error as SyncError {
            #expect(error.code == .forbidden)
        }
    }

    @Test("another account's device id or push token is refused as unauthorized, and the first answer is not told again")
    func replayedDeviceAndToken() async throws {
        let postgres = try await TestServer.shared.freshDatabase()
        let server = try Postgres.SyncServer(database: postgres, models: Self.models)
        let alice = try await server.addAccount("alice").account
        let mallory = try await server.addAccount("mallory").account
        let item = Item(id: UUID(), title: "alice's")
        let push = SyncPush(device: UUID().uuidString, token: UUID().uuidString, acknowledged: nil, changes: [
            SyncChange(table: Item.tableName, id: item.id.uuidString, value: String(decoding: try JSONEncoder().encode(item), as: UTF8.self), seq: 1, version: 0)
        ])
        _ = try await server.push(push, as: alice)
        await #expect(throws: SyncError.self) { try await server.push(push, as: mallory) }
        var sameDevice = push
        sameDevice.token = UUID().uuidString
        sameDevice.changes[0].value = String(decoding: try JSONEncoder().encode(Item(id: item.id, title: "mallory's")), as: UTF8.self)
        do {
            _ = try await server.push(sameDevice, as: mallory)
            Issue.record("a push from another account's device was taken")
        } catch let error as SyncError {
            #expect(error.code == .unauthorized)
        }
        #expect(try await postgres.get(Item.self, id: item.id)?.title == "alice's")
        // Alice's device goes on.
        #expect(try await server.push(push, as: alice).refused.isEmpty)
    }

    @Test("tokens: each names its account; a wrong, revoked or expired one is refused with a clear error; names and shares are checked")
    func tokens() async throws {
        let postgres = try await TestServer.shared.freshDatabase()
        let server = try Postgres.SyncServer(database: postgres, models: Self.models)
        let alice = try await server.addAccount("alice")
        let bob = try await server.addAccount("bob")
        #expect(alice.token != bob.token && alice.token.count == 64)
        #expect(try await server.authenticate(token: alice.token) == alice.account)
        #expect(try await server.authenticate(token: bob.token) == bob.account)
        func refusal(_ token: String) async -> SyncError? {
            do {
                _ = try await server.authenticate(token: token)
                return nil
            } catch {
                return error as? SyncError
            }
        }
        #expect(await refusal("not a token")?.code == .unauthorized)
        #expect(await refusal("")?.code == .unauthorized)
        let expired = try await server.issueToken(for: bob.account, lifetime: .zero)
        let expiredError = await refusal(expired)
        #expect(expiredError?.code == .unauthorized)
        #expect(expiredError?.message.contains("expired") == true)
        let second = try await server.issueToken(for: bob.account, lifetime: .seconds(3600))
        #expect(try await server.authenticate(token: second) == bob.account)
        try await server.revokeTokens(of: bob.account)
        #expect(await refusal(bob.token)?.code == .unauthorized)
        #expect(await refusal(second)?.code == .unauthorized)
        #expect(try await server.authenticate(token: alice.token) == alice.account)

        await #expect(throws: SyncError.self) { try await server.addAccount("alice") }
        await #expect(throws: SyncError.self) { try await server.addAccount("") }
        await #expect(throws: SyncError.self) { try await server.issueToken(for: SyncAccount("nobody")) }

        // Only an owner shares; only an account is shared with.
        let device = try Self.device(server, alice.account)
        let list = List(id: UUID(), name: "alice's", items: [])
        _ = try await device.db.save(list)
        try await device.sync.sync()
        do {
            try await server.share(list, with: bob.account, by: bob.account)
            Issue.record("bob shared alice's list")
        } catch let error as SyncError {
            #expect(error.code == .forbidden)
        }
        // A name that is no account: answered as any other (which names exist is not told), reaching no one.
        try await server.share(list, with: SyncAccount("nobody"), by: alice.account)
        #expect(try await server.shares(table: List.tableName, id: list.id.uuidString).isEmpty)
    }

    @Test("a pull answers the same changes whether its account's scope is small against the log (computed, looked up) or large (the log read in order, each row's readers asked): shares, revokes and deletes included")
    func bothPullPlansAgree() async throws {
        let postgres = try await TestServer.shared.freshDatabase()
        let server = try Postgres.SyncServer(database: postgres, models: Self.models)
        let alice = try await server.addAccount("alice").account
        let bob = try await server.addAccount("bob").account
        let aliceDevice = try Self.device(server, alice), bobDevice = try Self.device(server, bob)
        // Alice's many lists make the log large against bob's few rows.
        let lists = (0..<20).map { n in List(id: UUID(), name: "list \(n)", items: (0..<3).map { Item(id: UUID(), title: "item \(n).\($0)") }) }
        _ = try await aliceDevice.db.save(lists)
        _ = try await bobDevice.db.save(List(id: UUID(), name: "bob's", items: [Item(id: UUID(), title: "bob's item")]))
        try await aliceDevice.sync.sync()
        try await bobDevice.sync.sync()
        try await server.share(lists[0], with: bob, access: .read, by: alice)
        try await server.share(lists[1], with: bob, access: .readWrite, by: alice)
        try await server.revokeShare(lists[1], from: bob, by: alice)
        _ = try await aliceDevice.db.delete(Item.self, id: lists[0].items[0].id)
        var renamed = lists[0]
        renamed.name = "renamed"
        renamed.items.removeFirst()
        _ = try await aliceDevice.db.save(renamed)
        try await aliceDevice.sync.sync()

        // Changes as comparable text (the values' JSON with sorted keys: the server's encoder
        // does not keep one key order).
        func normalized(_ changes: [SyncChange]) throws -> [String] {
            try changes.map { change in
                let value = try change.value.map { text in
                    String(decoding: try JSONSerialization.data(
                        withJSONObject: try JSONSerialization.jsonObject(with: Data(text.utf8)), options: .sortedKeys), as: UTF8.self)
                }
                return "\(change.table) \(change.id) \(change.version ?? -1) \(value ?? "deleted")"
            }
        }
        for account in [bob, alice] {
            let all = try await server.pull(SyncPull(device: "reader", after: 0, limit: 10_000), as: account)
            #expect(!all.more)
            // Every suffix of the log, down to the last change, and pages of 3: whichever plan each
            // pull takes, the same changes.
            for change in all.changes {
                let after = (change.version ?? 1) - 1
                let tail = try await server.pull(SyncPull(device: "reader", after: after, limit: 10_000), as: account)
                #expect(try normalized(tail.changes) == normalized(all.changes.filter { ($0.version ?? 0) > after }), "\(account.name) after \(after)")
            }
            var paged: [SyncChange] = []
            var after: Int64 = 0
            while true {
                let page = try await server.pull(SyncPull(device: "reader", after: after, limit: 3), as: account)
                paged += page.changes
                after = page.version
                if !page.more { break }
            }
            #expect(try normalized(paged) == normalized(all.changes), "\(account.name), pages of 3")
        }
        // And what bob's answer holds: his own rows, the read share with its remaining items, the
        // item deleted from it (a delete), the revoked list and its items (removals, as deletes).
        let bobs = try await server.pull(SyncPull(device: "reader", after: 0, limit: 10_000), as: bob)
        let values = Set(bobs.changes.filter { $0.value != nil }.map(\.id))
        let deletes = Set(bobs.changes.filter { $0.value == nil }.map(\.id))
        #expect(values.contains(lists[0].id.uuidString) && values.isSuperset(of: lists[0].items.dropFirst().map(\.id.uuidString)))
        #expect(deletes.contains(lists[0].items[0].id.uuidString))
        #expect(deletes.contains(lists[1].id.uuidString) && deletes.isSuperset(of: lists[1].items.map(\.id.uuidString)))
        #expect(values.isDisjoint(with: lists[2...].flatMap { [$0.id.uuidString] + $0.items.map(\.id.uuidString) }), "nothing of alice's other lists")
        await postgres.close()
    }
}
#endif
