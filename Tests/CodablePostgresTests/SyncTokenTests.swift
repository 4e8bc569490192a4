#if Postgres
import CodableSync
import Foundation
import Testing

/// The sync server's tokens (lifetimes, labels, listing, revoking one, last use), what its share
/// answers tell an account about other accounts' names, and shares by invitation; on a real
/// server.
@Suite("Sync: tokens, share answers, shares by invitation", .serverShare, .needsPostgres, .serialized, .hangLimit(minutes: 3))
struct SyncTokenTests {
    typealias Item = SyncScopesTests.Item
    typealias List = SyncScopesTests.List

    static func server() async throws -> (Postgres.SyncServer, Postgres.Database) {
        let postgres = try await TestServer.shared.freshDatabase()
        return (try Postgres.SyncServer(database: postgres, models: SyncScopesTests.models), postgres)
    }

    /// The error `body` throws, `nil` when it succeeds.
    static func failure(_ body: () async throws -> Void) async -> SyncError? {
        do {
            try await body()
            return nil
        } catch {
            return error as? SyncError
        }
    }

    /// A list `account` owns on the server (saved by one of its devices and pushed).
    static func ownedList(_ server: Postgres.SyncServer, _ account: SyncAccount, _ name: String) async throws -> List {
        let device = try SyncScopesTests.device(server, account)
        let list = List(id: UUID(), name: name, items: [Item(id: UUID(), title: "\(name)'s item")])
        _ = try await device.db.save(list)
        try await device.sync.sync()
        return list
    }

    @Test("tokens last 90 days unless told (nil: never); lifetimes, labels and names out of range are refused clearly")
    func lifetimes() async throws {
        let (server, _) = try await Self.server()
        #expect(Postgres.SyncServer.defaultTokenLifetime == .seconds(90 * 86_400))
        let alice = try await server.addAccount("alice")
        let ninetyDays = Date().addingTimeInterval(90 * 86_400)
        let first = try #require(try await server.tokens(of: alice.account).first)
        #expect(first.label == "first")
        #expect(abs(try #require(first.expires).timeIntervalSince(ninetyDays)) < 600)
        #expect(abs(first.created.timeIntervalSinceNow) < 600)
        #expect(first.lastUsed == nil)
        #expect(first.id.count == 12 && !alice.token.hasPrefix(first.id))

        _ = try await server.issueToken(for: alice.account, label: "default")
        _ = try await server.issueToken(for: alice.account, label: "forever", lifetime: nil)
        _ = try await server.issueToken(for: alice.account, label: "a day", lifetime: .seconds(86_400))
        let tokens = Dictionary(uniqueKeysWithValues: try await server.tokens(of: alice.account).compactMap { token in token.label.map { ($0, token) } })
        #expect(abs(try #require(tokens["default"]?.expires).timeIntervalSince(ninetyDays)) < 600)
        #expect(tokens["forever"]?.expires == nil)
        #expect(tokens["forever"]?.isExpired() == false)
        #expect(abs(try #require(tokens["a day"]?.expires).timeIntervalSinceNow - 86_400) < 600)
        let forever = try await server.addAccount("robot", tokenLifetime: nil)
        #expect(try await server.tokens(of: forever.account).first?.expires == nil)

        let negative = await Self.failure { _ = try await server.issueToken(for: alice.account, lifetime: .seconds(-1)) }
        #expect(negative?.code == .invalidArgument)
        #expect(negative?.message.contains("lifetime") == true)
        #expect(await Self.failure { _ = try await server.addAccount("carol", tokenLifetime: .seconds(200 * 365 * 86_400)) }?.code == .invalidArgument)
        #expect(await Self.failure { _ = try await server.issueToken(for: alice.account, label: "two\nlines") }?.code == .invalidArgument)
        #expect(await Self.failure { _ = try await server.issueToken(for: alice.account, label: "") }?.code == .invalidArgument)
        let escape = await Self.failure { _ = try await server.addAccount("red\u{1B}[31m") }
        #expect(escape?.code == .invalidArgument)
        #expect(escape?.message.contains("\u{1B}") == false)
        #expect(await Self.failure { _ = try await server.tokens(of: SyncAccount("nobody")) }?.code == .invalidArgument)
        #expect(await Self.failure { _ = try await server.issueToken(for: SyncAccount("nobody"), label: "x") }?.code == .invalidArgument)
    }

    @Test("a labelled token is listed, and revoked alone by its id: the account's other token still works; an unknown id is a clear error")
    func revokeOne() async throws {
        let (server, _) = try await Self.server()
        let alice = try await server.addAccount("alice")
        let bob = try await server.addAccount("bob")
        let phone = try await server.issueToken(for: alice.account, label: "alice's phone")
        let listed = try await server.tokens(of: alice.account)
        #expect(listed.map(\.label) == ["first", "alice's phone"])
        let phoneID = try #require(listed.last?.id)
        #expect(!listed.contains { $0.id == phone || $0.id == alice.token })

        // Another account's token id is not bob's to revoke.
        let notBobs = await Self.failure { try await server.revokeToken(id: phoneID, of: bob.account) }
        #expect(notBobs?.code == .invalidArgument)
        #expect(try await server.authenticate(token: phone) == alice.account)

        try await server.revokeToken(id: phoneID, of: alice.account)
        let refused = await Self.failure { _ = try await server.authenticate(token: phone) }
        #expect(refused?.code == .unauthorized)
        #expect(try await server.authenticate(token: alice.token) == alice.account)
        #expect(try await server.tokens(of: alice.account).map(\.label) == ["first"])

        let unknown = await Self.failure { try await server.revokeToken(id: "0123456789ab", of: alice.account) }
        #expect(unknown?.code == .invalidArgument)
        #expect(unknown?.message.contains("0123456789ab") == true)
        #expect(unknown?.message.contains("alice") == true)
        #expect(await Self.failure { try await server.revokeToken(id: phoneID, of: alice.account) }?.code == .invalidArgument)

        try await server.revokeTokens(of: alice.account)
        #expect(try await server.tokens(of: alice.account).isEmpty)
        #expect(try await server.authenticate(token: bob.token) == bob.account)
    }

    @Test("authenticate notes the last use at most once a minute; expired tokens are listed until removeExpiredTokens; malformed tokens are refused as unknown")
    func lastUsedAndExpiry() async throws {
        let (server, postgres) = try await Self.server()
        let alice = try await server.addAccount("alice")
        #expect(try await server.tokens(of: alice.account).first?.lastUsed == nil)
        #expect(try await server.authenticate(token: alice.token) == alice.account)
        let used = try #require(try await server.tokens(of: alice.account).first?.lastUsed)
        #expect(abs(used.timeIntervalSinceNow) < 600)
        // Within the minute: not written again.
        #expect(try await server.authenticate(token: alice.token) == alice.account)
        #expect(try await server.tokens(of: alice.account).first?.lastUsed == used)
        // A minute later: written again.
        try await postgres.execute("UPDATE codablesync_tokens SET last_used = last_used - interval '2 minutes'")
        let backdated = try #require(try await server.tokens(of: alice.account).first?.lastUsed)
        #expect(try await server.authenticate(token: alice.token) == alice.account)
        let again = try #require(try await server.tokens(of: alice.account).first?.lastUsed)
        #expect(again > backdated.addingTimeInterval(60))

        let expired = try await server.issueToken(for: alice.account, label: "expired", lifetime: .zero)
        let expiredInfo = try #require(try await server.tokens(of: alice.account).first { $0.label == "expired" })
        #expect(expiredInfo.isExpired())
        let expiredError = await Self.failure { _ = try await server.authenticate(token: expired) }
        #expect(expiredError?.code == .unauthorized)
        #expect(expiredError?.message.contains("expired") == true)
        #expect(try await server.removeExpiredTokens() == 1)
        #expect(try await server.tokens(of: alice.account).map(\.label) == ["first"])
        let unknown = await Self.failure { _ = try await server.authenticate(token: expired) }
        #expect(unknown?.code == .unauthorized)
        let malformed = await Self.failure { _ = try await server.authenticate(token: "not a token\u{0}") }
        #expect(malformed?.code == .unauthorized)
        #expect(malformed?.message == unknown?.message)
        #expect(await Self.failure { _ = try await server.authenticate(token: alice.token.uppercased()) }?.message == unknown?.message)
        #expect(try await server.authenticate(token: alice.token) == alice.account)
    }

    /// The HTTP answer of `route` with `request`, as the caller sees it (status and body).
    static func answer(
        _ endpoint: SyncHTTPEndpoint, _ route: SyncHTTPEndpoint.Route, token: String, _ request: SyncHTTP.ShareRequest
    ) async throws -> (status: Int, body: String) {
        let response = await endpoint.respond(to: route, authorization: "Bearer \(token)", body: try JSONEncoder().encode(request))
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    @Test("share and unshare answer the same for a name no account has as for an account: nothing tells which names exist")
    func sameAnswers() async throws {
        let (server, _) = try await Self.server()
        let alice = try await server.addAccount("alice"), bob = try await server.addAccount("bob")
        let mallory = try await server.addAccount("mallory")
        let list = try await Self.ownedList(server, alice.account, "groceries")
        let endpoint = SyncHTTPEndpoint(server: server)
        func request(_ name: String) -> SyncHTTP.ShareRequest {
            SyncHTTP.ShareRequest(table: List.tableName, id: list.id.uuidString, account: name, access: .read)
        }

        // Unshare: a known account the row is not shared with, and a name that is no account.
        let unshareKnown = try await Self.answer(endpoint, .unshare, token: alice.token, request("bob"))
        let unshareUnknown = try await Self.answer(endpoint, .unshare, token: alice.token, request("nobody"))
        #expect(unshareKnown.status == 200)
        #expect(unshareKnown.status == unshareUnknown.status && unshareKnown.body == unshareUnknown.body)
        try await server.revokeShare(list, from: SyncAccount("nobody"), by: alice.account)
        try await server.revokeShare(list, from: bob.account, by: alice.account)

        // Share: the same answer; only the account that exists gets it, and an account made
        // later under the other name does not.
        let shareKnown = try await Self.answer(endpoint, .share, token: alice.token, request("bob"))
        let shareUnknown = try await Self.answer(endpoint, .share, token: alice.token, request("nobody"))
        #expect(shareKnown.status == 200)
        #expect(shareKnown.status == shareUnknown.status && shareKnown.body == shareUnknown.body)
        #expect(try await server.shares(table: List.tableName, id: list.id.uuidString) == [bob.account: .read])
        let latecomer = try await server.addAccount("nobody")
        #expect(try await server.shares(table: List.tableName, id: list.id.uuidString) == [bob.account: .read])
        let latecomerDevice = try SyncScopesTests.device(server, latecomer.account)
        try await latecomerDevice.sync.sync()
        #expect(try await SyncScopesTests.listNames(latecomerDevice.db).isEmpty)
        let bobDevice = try SyncScopesTests.device(server, bob.account)
        try await bobDevice.sync.sync()
        #expect(try await SyncScopesTests.listNames(bobDevice.db) == ["groceries"])

        // Ownership first: a non-owner is refused the same whichever name it gives.
        for route in [SyncHTTPEndpoint.Route.share, .unshare] {
            let known = try await Self.answer(endpoint, route, token: mallory.token, request("bob"))
            let unknown = try await Self.answer(endpoint, route, token: mallory.token, request("nobody at all"))
            #expect(known.status == 403)
            #expect(known.status == unknown.status && known.body == unknown.body, "\(known.body) / \(unknown.body)")
        }

        // The server's own code (no owner) is told of a typo.
        let typo = await Self.failure { try await server.share(list, with: SyncAccount("bobb")) }
        #expect(typo?.code == .invalidArgument)
        #expect(typo?.message.contains("bobb") == true)
        try await server.share(list, with: SyncAccount("no such account"), by: alice.account)
        #expect(try await server.shares(table: List.tableName, id: list.id.uuidString) == [bob.account: .read])
    }

    @Test("a share by invitation reaches the account only once it accepts; declined, withdrawn and unknown offers")
    func invitations() async throws {
        let (server, _) = try await Self.server()
        let alice = try await server.addAccount("alice").account, bob = try await server.addAccount("bob").account
        let mallory = try await server.addAccount("mallory").account
        let list = try await Self.ownedList(server, alice, "groceries")
        let bobDevice = try SyncScopesTests.device(server, bob)

        try await server.offerShare(list, with: bob, access: .read, by: alice)
        try await server.offerShare(list, with: SyncAccount("nobody"), by: alice)
        #expect(await Self.failure { try await server.offerShare(list, with: bob, by: mallory) }?.code == .forbidden)
        try await bobDevice.sync.sync()
        #expect(try await SyncScopesTests.listNames(bobDevice.db).isEmpty)
        #expect(try await server.shares(table: List.tableName, id: list.id.uuidString).isEmpty)
        let offers = try await server.pendingShares(for: bob)
        #expect(offers.count == 1)
        let offer = try #require(offers.first)
        #expect(offer.table == List.tableName && offer.id == list.id.uuidString && offer.from == alice && offer.access == .read)
        #expect(try await server.pendingShares(for: SyncAccount("nobody")).isEmpty)
        #expect(try await server.pendingShares(for: mallory).isEmpty)

        // Only the offer made can be accepted.
        let notOffered = await Self.failure { try await server.acceptShare(table: offer.table, id: offer.id, from: alice, as: mallory) }
        #expect(notOffered?.code == .invalidArgument)
        #expect(notOffered?.message.contains("has not offered") == true)
        try await server.acceptShare(table: offer.table, id: offer.id, from: offer.from, as: bob)
        #expect(try await server.pendingShares(for: bob).isEmpty)
        #expect(try await server.shares(table: List.tableName, id: list.id.uuidString) == [bob: .read])
        try await bobDevice.sync.sync()
        #expect(try await SyncScopesTests.listNames(bobDevice.db) == ["groceries"])
        #expect(await Self.failure { try await server.acceptShare(table: offer.table, id: offer.id, from: alice, as: bob) }?.code == .invalidArgument)

        // Declined, and withdrawn (revokeShare).
        try await server.offerShare(list, with: mallory, by: alice)
        try await server.declineShare(table: List.tableName, id: list.id.uuidString, from: alice, as: mallory)
        #expect(try await server.pendingShares(for: mallory).isEmpty)
        #expect(await Self.failure { try await server.declineShare(table: List.tableName, id: list.id.uuidString, from: alice, as: mallory) }?.code
                == .invalidArgument)
        try await server.offerShare(list, with: mallory, by: alice)
        try await server.revokeShare(list, from: mallory, by: alice)
        #expect(try await server.pendingShares(for: mallory).isEmpty)
        #expect(try await server.shares(table: List.tableName, id: list.id.uuidString) == [bob: .read])
    }
}
#endif
