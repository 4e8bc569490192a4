#if Server
import CodableSync
import CodableSyncHummingbird
import Foundation
import Hummingbird
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The device against a hostile (or broken) server: a real HTTP server in this process (a
/// Hummingbird router answering the sync routes with whatever a test sets) and real devices
/// (SQLite files, ``HTTPSyncTransport``). Every bad answer throws a clear error, nothing of it is
/// applied, the device's database stays usable and its changes stay queued; then the same file
/// syncs with a real server (PostgreSQL behind ``SyncHTTPEndpoint``).
@Suite("Sync device security: hostile answers, answer sizes, redirects, plain http", .serverShare, .needsPostgres, .serialized, .hangLimit(minutes: 3))
struct SyncDeviceSecurityTests {
    typealias Item = SyncScopesTests.Item

    /// What the hostile server answers on a route.
    enum Answer: Sendable {
        /// 200 with this body.
        case json(String)
        /// This status, with a JSON error body.
        case status(Int)
        /// 307 to this URL.
        case redirect(String)
        /// 200 claiming this `Content-Length`, sending 256 KiB of it.
        case claimed(Int)
        /// 200 without a `Content-Length`, streaming this many bytes.
        case streamed(Int)
    }

    /// The hostile server's answers, and the bearer tokens that reached its trap route.
    final class Script: @unchecked Sendable {  // every access goes through `lock`
        private let lock = NSLock()
        private var answers: [String: Answer] = [:]
        private var trapped: [String] = []

        func set(_ route: String, _ answer: Answer) { lock.withLock { answers[route] = answer } }
        func answer(_ route: String) -> Answer { lock.withLock { answers[route] } ?? .status(503) }
        func trap(_ authorization: String) { lock.withLock { trapped.append(authorization) } }
        var trappedTokens: [String] { lock.withLock { trapped } }
    }

    static func response(_ answer: Answer) -> Response {
        let json: HTTPFields = [.contentType: "application/json"]
        switch answer {
        case .json(let text):
            return Response(status: .ok, headers: json, body: .init(byteBuffer: ByteBuffer(string: text)))
        case .status(let status):
            return Response(status: .init(code: status), headers: json,
                            body: .init(byteBuffer: ByteBuffer(string: #"{"error":"unavailable","message":"try again"}"#)))
        case .redirect(let location):
            return Response(status: .temporaryRedirect, headers: [.location: location, .contentLength: "0"])
        case .claimed(let size):
            return Response(status: .ok, headers: json, body: ResponseBody(contentLength: size) { writer in
                try await writer.write(ByteBuffer(repeating: UInt8(ascii: " "), count: 256 << 10))
                try await writer.finish(nil)
            })
        case .streamed(let size):
            return Response(status: .ok, headers: json, body: ResponseBody { writer in
                var left = size
                while left > 0 {
                    let chunk = min(left, 64 << 10)
                    try await writer.write(ByteBuffer(repeating: UInt8(ascii: " "), count: chunk))
                    left -= chunk
                }
                try await writer.finish(nil)
            })
        }
    }

    /// A hostile sync server on 127.0.0.1 until `body` returns: its routes answer what `script`
    /// says; `/trap/…` records the bearer tokens that reach it.
    static func withHostileServer(_ body: (_ script: Script, _ url: URL, _ port: Int) async throws -> Void) async throws {
        guard #available(macOS 14, iOS 17, tvOS 17, *) else { return }
        let script = Script()
        let router = Router()
        for route in ["push", "pull", "wait", "account", "share", "unshare", "pull-elsewhere"] {
            router.on(RouterPath("sync/\(route)"), method: route == "account" ? .get : .post) { _, _ -> Response in
                response(script.answer(route))
            }
        }
        router.post("trap/:route") { request, _ -> Response in
            script.trap(request.headers[.authorization] ?? "")
            return response(.json(#"{"changes":[],"version":0,"more":false}"#))
        }
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) })
        let running = Task { try await app.run() }
        defer { running.cancel() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        try await body(script, try #require(URL(string: "http://127.0.0.1:\(port)/sync")), port)
    }

    /// A device with one change not pushed yet (an item), syncing through `transport`.
    static func device(_ transport: HTTPSyncTransport) async throws -> (db: SQLite.Database, sync: SQLite.Sync, item: Item) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UUID().uuidString).sqlite").path
        let db = try SQLite.Database(path: path)
        let item = try await db.save(Item(id: UUID(), title: "mine"))
        return (db, try SQLite.Sync(local: db, transport: transport, models: SyncScopesTests.models), item)
    }

    static func outboxCount(_ db: SQLite.Database) async throws -> Int64 {
        try await db.read("SELECT count(*) AS n FROM codablesync_outbox").first?["n"]?.int64Value ?? -1
    }

    /// `sync()` throws `SyncError.Code.invalidAnswer` (the message naming `words`); then
    /// the device still reads and writes, applied nothing, and keeps its change queued.
    static func expectRefused(_ device: (db: SQLite.Database, sync: SQLite.Sync, item: Item), _ words: String,
                              sourceLocation: SourceLocation = #_sourceLocation) async throws {
        do {
            try await device.sync.sync()
            Issue.record("a hostile answer was taken (\(words))", sourceLocation: sourceLocation)
        } catch let error as SyncError {
            #expect(error.code == .invalidAnswer, "\(error)", sourceLocation: sourceLocation)
            #expect(error.message.contains(words), "\(error.message)", sourceLocation: sourceLocation)
        }
        #expect(try await device.db.get(Item.self).map(\.id) == [device.item.id], sourceLocation: sourceLocation)
        #expect(try await outboxCount(device.db) >= 1, sourceLocation: sourceLocation)
        let pulled = try await device.db.read("SELECT value FROM codablesync_state WHERE key LIKE 'pulled%'").first?["value"]?.int64Value
        #expect((pulled ?? 0) == 0, sourceLocation: sourceLocation)
        _ = try await device.db.save(Item(id: UUID(), title: "still writable"))
        #expect(try await device.db.count(Item.self) == 2, sourceLocation: sourceLocation)
        try await device.db.delete(Item.self, id: try #require(try await device.db.get(Item.self).first { $0.title == "still writable" }?.id))
    }

    static func json(_ value: some Encodable) throws -> String {
        String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
    }

    @Test("hostile pull answers (Int64.min and Int64.max versions, negative change versions, oversized fields): refused whole, nothing applied, the device goes on with a real server")
    func hostilePulls() async throws {
        var devices: [(db: SQLite.Database, sync: SQLite.Sync, item: Item)] = []
        try await Self.withHostileServer { script, url, _ in
            let other = Item(id: UUID(), title: "planted")
            let planted = SyncChange(table: Item.tableName, id: other.id.uuidString, value: try Self.json(other), version: 1)
            let bad: [(String, SyncPullResult, String)] = [
                ("Int64.min version", SyncPullResult(changes: [], version: .min, more: false), "its version is"),
                ("negative change version under Int64.max",
                 SyncPullResult(changes: [planted, SyncChange(table: Item.tableName, id: UUID().uuidString, value: nil, version: -5)], version: .max, more: false),
                 "change 1: its version is -5"),
                ("Int64.min change version",
                 SyncPullResult(changes: [planted, SyncChange(table: Item.tableName, id: UUID().uuidString, value: nil, version: .min)], version: 9, more: false),
                 "change 1"),
                ("a change of version 0",
                 SyncPullResult(changes: [planted, SyncChange(table: Item.tableName, id: UUID().uuidString, value: nil, version: 0)], version: 9, more: true),
                 "change 1: its version is 0, not 1 or more"),
                ("a negative horizon", SyncPullResult(changes: [planted], version: 3, more: false, horizon: .min), "its horizon"),
                ("an id of 5,000 characters",
                 SyncPullResult(changes: [planted, SyncChange(table: Item.tableName, id: String(repeating: "x", count: 5_000), value: nil, version: 2)], version: 3, more: false),
                 "its id is longer"),
                ("an epoch of 100,000 characters", SyncPullResult(changes: [planted], version: 3, more: false, epoch: String(repeating: "e", count: 100_000)), "its epoch"),
                ("20,001 changes",
                 SyncPullResult(changes: [planted] + (0..<20_000).map { _ in SyncChange(table: "t", id: "i", value: nil, version: 1) }, version: 3, more: true),
                 "20001 changes"),
            ]
            // The push fails (the server is "unavailable"): the change stays queued.
            script.set("push", .status(503))
            for (name, answer, words) in bad {
                script.set("pull", .json(try Self.json(answer)))
                let device = try await Self.device(HTTPSyncTransport(server: url, token: "t"))
                try await Self.expectRefused(device, words)
                #expect(try await device.db.get(Item.self, id: other.id) == nil, "\(name): a row of a refused answer was applied")
                devices.append(device)
            }
            // Numbers JSON cannot put in an Int64: a failure of the answer's form, not a trap.
            script.set("pull", .json(#"{"changes":[],"version":1e30,"more":false}"#))
            let device = try await Self.device(HTTPSyncTransport(server: url, token: "t"))
            await #expect(throws: HTTPSyncTransport.Failure.self) { try await device.sync.sync() }
            #expect(try await Self.outboxCount(device.db) >= 1)

            // Int64.max itself is a version the protocol allows: taken, and nothing traps after it
            // (the next pushes' base versions, the next pulls).
            script.set("pull", .json(try Self.json(SyncPullResult(changes: [planted], version: .max, more: false))))
            script.set("push", .json(try Self.json(SyncPushResult())))
            let farAhead = try await Self.device(HTTPSyncTransport(server: url, token: "t"))
            try await farAhead.sync.sync()
            #expect(try await farAhead.db.get(Item.self, id: other.id)?.title == "planted")
            _ = try await farAhead.db.save(Item(id: UUID(), title: "after max"))
            try await farAhead.sync.sync()
        }
        // The same files with a real server: their changes were kept, and go up now.
        try await SyncHTTPTests.withHTTPServer { server, url, postgres in
            let alice = try await server.addAccount("alice")
            for device in devices.prefix(3) {
                try await SQLite.Sync(local: device.db, transport: HTTPSyncTransport(server: url, token: alice.token), models: SyncScopesTests.models).sync()
                #expect(try await postgres.get(Item.self, id: device.item.id)?.title == "mine")
                #expect(try await Self.outboxCount(device.db) == 0)
            }
        }
    }

    @Test("hostile push answers (a refusal or conflict of a row never pushed, a bad device id, a dropped link of another row): refused, nothing applied, the push sent again")
    func hostilePushes() async throws {
        var devices: [(db: SQLite.Database, sync: SQLite.Sync, item: Item)] = []
        try await Self.withHostileServer { script, url, _ in
            let stranger = UUID().uuidString
            let bad: [(SyncPushResult, String)] = [
                (SyncPushResult(refused: [SyncRefusal(table: Item.tableName, id: stranger, reason: .forbidden, message: "no", serverValue: nil)]),
                 "refusal 0: it names a row the push did not carry"),
                (SyncPushResult(conflicts: [SyncConflict(table: Item.tableName, id: stranger, value: nil)]), "conflict 0 names a row the push did not carry"),
                (SyncPushResult(device: ""), "its device id is empty"),
                (SyncPushResult(device: String(repeating: "d", count: 201)), "its device id is longer than 200"),
                (SyncPushResult(droppedLinks: [SyncDroppedLink(table: "lists", id: stranger, relatedTable: Item.tableName, relatedID: stranger)]),
                 "dropped link 0: it names a row the push did not carry"),
            ]
            script.set("pull", .json(try Self.json(SyncPullResult(changes: [], version: 0, more: false))))
            for (answer, words) in bad {
                script.set("push", .json(try Self.json(answer)))
                let device = try await Self.device(HTTPSyncTransport(server: url, token: "t"))
                let before = try await device.sync.deviceID
                try await Self.expectRefused(device, words)
                #expect(try await device.sync.refusedChanges().isEmpty)
                #expect(try await device.sync.deviceID == before)
                devices.append(device)
            }
            // A refusal of the row the push did carry is taken, as always.
            let device = try await Self.device(HTTPSyncTransport(server: url, token: "t"))
            script.set("push", .json(try Self.json(SyncPushResult(refused: [
                SyncRefusal(table: Item.tableName, id: device.item.id.uuidString, reason: .checkViolation, message: "too short"),
            ]))))
            try await device.sync.sync()
            #expect(try await device.sync.refusedChanges().map(\.id) == [device.item.id.uuidString])
        }
        try await SyncHTTPTests.withHTTPServer { server, url, postgres in
            let alice = try await server.addAccount("alice")
            for device in devices {
                try await SQLite.Sync(local: device.db, transport: HTTPSyncTransport(server: url, token: alice.token), models: SyncScopesTests.models).sync()
                #expect(try await postgres.get(Item.self, id: device.item.id)?.title == "mine")
            }
        }
    }

    @Test("answers too large: a Content-Length of 200 MiB, a streamed answer past the limit: refused as they arrive")
    func oversizedAnswers() async throws {
        try await Self.withHostileServer { script, url, _ in
            script.set("push", .status(503))
            script.set("pull", .claimed(200 << 20))
            let claimed = try await Self.device(HTTPSyncTransport(server: url, token: "t"))
            try await Self.expectRefused(claimed, "209715200 bytes (its Content-Length)")

            script.set("pull", .streamed(3 << 20))
            let streamed = try await Self.device(HTTPSyncTransport(server: url, token: "t", maximumAnswerSize: 1 << 20))
            try await Self.expectRefused(streamed, "more than 1048576 bytes")
            // Within the limit, the same stream is read whole (and is no JSON: a failure, not a refusal).
            await #expect(throws: HTTPSyncTransport.Failure.self) {
                try await HTTPSyncTransport(server: url, token: "t", maximumAnswerSize: 4 << 20).pull(SyncPull(device: "d", after: 0, limit: 1))
            }
        }
    }

    @Test("redirects: to another origin not followed (the token never reaches it), within the server's origin followed")
    func redirects() async throws {
        try await Self.withHostileServer { script, url, port in
            let transport = HTTPSyncTransport(server: url, token: "secret-token")
            // localhost is this machine, but another origin than 127.0.0.1.
            for target in ["http://localhost:\(port)/trap/pull", "https://127.0.0.1:\(port)/trap/pull", "http://127.0.0.1:\(port + 1)/trap/pull"] {
                script.set("pull", .redirect(target))
                do {
                    _ = try await transport.pull(SyncPull(device: "d", after: 0, limit: 1))
                    Issue.record("a redirect to \(target) was followed")
                } catch let error as SyncError {
                    #expect(error.code == .invalidAnswer && error.message.contains("another origin"), "\(error)")
                }
            }
            script.set("push", .status(503))
            script.set("pull", .redirect("http://localhost:\(port)/trap/pull"))
            try await Self.expectRefused(try await Self.device(transport), "another origin")
            #expect(script.trappedTokens.isEmpty)

            // The same origin: followed.
            script.set("pull", .redirect("http://127.0.0.1:\(port)/sync/pull-elsewhere"))
            script.set("pull-elsewhere", .json(try Self.json(SyncPullResult(changes: [], version: 7, more: false))))
            #expect(try await transport.pull(SyncPull(device: "d", after: 0, limit: 1)).version == 7)
        }
    }

    @Test("plain http: refused to another machine (the token would go in clear) unless allowed; loopback names pass")
    func insecureHTTP() async throws {
        for host in ["localhost", "127.0.0.1", "127.1.2.3", "[::1]"] {
            let transport = HTTPSyncTransport(server: try #require(URL(string: "http://\(host):1/sync")), token: "t")
            // Nothing listens on port 1: the request went out, and failed on the way.
            await #expect(throws: HTTPSyncTransport.Failure.self, "\(host)") { try await transport.account() }
        }
        for text in ["http://0.0.0.0:1/sync", "http://127.0.0.1.example.com:1/sync", "http://192.0.2.1:1/sync", "ftp://127.0.0.1/sync"] {
            let transport = HTTPSyncTransport(server: try #require(URL(string: text)), token: "t")
            do {
                _ = try await transport.account()
                Issue.record("\(text) was used")
            } catch let error as SyncError {
                #expect(error.code == .invalidArgument, "\(error)")
            }
        }
        // Allowed: the request goes out (0.0.0.0 reaches this machine, where nothing listens on port 1).
        let allowed = HTTPSyncTransport(server: try #require(URL(string: "http://0.0.0.0:1/sync")), token: "t", allowsInsecureHTTP: true)
        await #expect(throws: HTTPSyncTransport.Failure.self) { try await allowed.account() }
        #expect(allowed.allowsInsecureHTTP && allowed.maximumAnswerSize == 64 << 20)
    }
}

/// The bounds a server checks on requests, and a device on answers, without a server.
@Suite("Sync validation: the wire types' bounds")
struct SyncValidationTests {
    static func change(_ edit: (inout SyncChange) -> Void = { _ in }) -> SyncChange {
        var change = SyncChange(table: "items", id: UUID().uuidString, value: "{}", seq: 1, version: 0, fields: ["title"], keys: ["id", "title"])
        edit(&change)
        return change
    }

    static func expectInvalid(_ push: SyncPush, _ words: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            try push.validate()
            Issue.record("accepted: \(words)", sourceLocation: sourceLocation)
        } catch let error as SyncError {
            #expect(error.code == .invalidArgument && error.message.contains(words), "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("pushes: every bound, naming the field and the change")
    func pushes() throws {
        let good = SyncPush(device: "device", token: "token", acknowledged: nil, changes: [Self.change()])
        try good.validate()
        var push = good
        push.device = ""
        Self.expectInvalid(push, "its device id is empty")
        push = good
        push.token = String(repeating: "t", count: 201)
        Self.expectInvalid(push, "its token is longer than 200")
        // Characters, not bytes: 200 of them, of 4 bytes each, pass.
        push.token = String(repeating: "🙂", count: 200)
        try push.validate()
        push = good
        push.changes = Array(repeating: Self.change(), count: SyncPush.maximumChanges + 1)
        Self.expectInvalid(push, "\(SyncPush.maximumChanges + 1) changes")
        let cases: [((inout SyncChange) -> Void, String)] = [
            ({ $0.table = String(repeating: "t", count: 256) }, "change 1: its table is longer than 255"),
            ({ $0.table = "" }, "change 1: its table is empty"),
            ({ $0.id = String(repeating: "i", count: 1_001) }, "change 1: its id is longer than 1000"),
            ({ $0.seq = nil }, "change 1: it has no seq"),
            ({ $0.seq = 0 }, "change 1: its seq is 0"),
            ({ $0.seq = .min }, "its seq is -9223372036854775808"),
            ({ $0.version = -1 }, "change 1: its version is -1"),
            ({ $0.version = .min }, "its version is -9223372036854775808"),
            ({ $0.value = String(repeating: "v", count: (4 << 20) + 1) }, "change 1: its value is 4194305 bytes"),
            ({ $0.fields = Array(repeating: "f", count: 10_001) }, "change 1: it has 10001 fields"),
            ({ $0.keys = Array(repeating: "k", count: 10_001) }, "change 1: it has 10001 keys"),
            ({ $0.keys = [String(repeating: "k", count: 1_001)] }, "one of its keys is longer"),
        ]
        for (edit, words) in cases {
            Self.expectInvalid(SyncPush(device: "d", token: "t", acknowledged: nil, changes: [Self.change(), Self.change(edit)]), words)
        }
        // The largest of each passes.
        try SyncPush(device: String(repeating: "d", count: 200), token: "t", acknowledged: nil, changes: [Self.change {
            $0.value = String(repeating: "v", count: 4 << 20)
            $0.seq = .max
            $0.version = .max
            $0.fields = Array(repeating: "f", count: 10_000)
        }]).validate()
    }

    @Test("pulls and their answers: negative and extreme numbers")
    func pulls() throws {
        try SyncPull(device: "d", after: 0, limit: 1).validate()
        try SyncPull(device: "d", after: .max, limit: .max, epoch: String(repeating: "e", count: 1_000)).validate()
        for pull in [SyncPull(device: "d", after: -1, limit: 1), SyncPull(device: "d", after: .min, limit: 1), SyncPull(device: "d", after: 0, limit: 0),
                     SyncPull(device: "d", after: 0, limit: .min), SyncPull(device: "", after: 0, limit: 1),
                     SyncPull(device: "d", after: 0, limit: 1, epoch: String(repeating: "e", count: 1_001))] {
            #expect(throws: SyncError.self) { try pull.validate() }
        }
        let change = SyncChange(table: "items", id: "a", value: nil, version: 5)
        try SyncPullResult(changes: [change], version: 5, more: false, horizon: 0).validate(after: .max)
        try SyncPullResult(changes: [], version: .max, more: false).validate(after: .min)
        for answer in [
            SyncPullResult(changes: [], version: -1, more: false),
            SyncPullResult(changes: [SyncChange(table: "items", id: "a", value: nil, version: 0)], version: 4, more: false),
            SyncPullResult(changes: [SyncChange(table: "", id: "a", value: nil, version: 1)], version: 4, more: false),
            SyncPullResult(changes: [], version: 4, more: false, horizon: -1),
        ] {
            do {
                try answer.validate(after: 0)
                Issue.record("accepted \(answer)")
            } catch let error as SyncError {
                #expect(error.code == .invalidAnswer)
            }
        }
        // More changes than asked are refused past SyncPush.maximumChanges only (a server may cap
        // the limit; it may not send more than the larger of the two).
        let many = SyncPullResult(changes: Array(repeating: change, count: 12_000), version: 5, more: true)
        #expect(throws: SyncError.self) { try many.validate(after: 0) }
        try many.validate(after: 0, limit: 20_000)
    }
}
#endif
