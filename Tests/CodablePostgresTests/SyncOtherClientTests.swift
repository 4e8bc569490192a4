#if Server
import CodableSync
import Foundation
import Testing

/// The protocol's document is enough to write a client: a device in Python (standard library and
/// `sqlite3` only, `Tests/Clients/python/sync_device.py`, written from `openapi.yaml`) syncs with a
/// Swift device through a real server over HTTP.
@Suite("Sync: a client in another language", .serverShare, .needsPostgres, .serialized, .hangLimit(minutes: 3))
struct SyncOtherClientTests {
    /// `todo`'s task, as the Python device stores it (table `tasks`).
    #if Macros
    @RowCodable
    #endif
    struct TodoTask: Model, Sendable, Equatable {
        var id: String
        var title: String
        var dueDate: Date?
        var isCompleted: Bool
        static var tableName: String { "tasks" }
    }

    /// `todo`'s list (table `lists`).
    #if Macros
    @RowCodable
    #endif
    struct TodoList: Model, Sendable, Equatable {
        var id: String
        var name: String
        var tasks: [TodoTask]
        static var tableName: String { "lists" }
    }

    static let models: [any (Model & Sendable).Type] = [TodoTask.self, TodoList.self]

    /// The Python device's script, from this file's place in the repository.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Clients/python/sync_device.py").path

    /// Runs the Python device on `database` with `arguments`: its output (one title a line for
    /// `list`); a failure records the output.
    static func python(_ url: URL, token: String, database: String, _ arguments: [String]) async throws -> String {
        let result = try await TestServer.run(
            ["/usr/bin/env", "python3", script, "--server", url.absoluteString, "--token", token, "--db", database] + arguments)
        #expect(result.status == 0, "python3 sync_device.py \(arguments.joined(separator: " ")): \(result.output)")
        return result.output
    }

    @Test("a Python device and a Swift device of one account sync through the server: each gets the other's tasks, edits and deletes")
    func pythonAndSwiftDevices() async throws {
        try await SyncSecurityTests.withHTTPEndpoint(models: Self.models) { _, server, url, _ in
            let alice = try await server.addAccount("alice")
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("swift-\(UUID().uuidString).sqlite").path
            let swift = try SQLite.Database(path: path)
            let sync = try SQLite.Sync(local: swift, transport: HTTPSyncTransport(server: url, token: alice.token), models: Self.models)
            let pythonDB = FileManager.default.temporaryDirectory.appendingPathComponent("python-\(UUID().uuidString).sqlite").path

            // Swift to Python: a task, with a due date, and a list holding it.
            let due = Date(timeIntervalSinceReferenceDate: 800_000_000)
            let fromSwift = TodoTask(id: UUID().uuidString, title: "from swift", dueDate: due, isCompleted: false)
            _ = try await swift.save(TodoList(id: UUID().uuidString, name: "groceries", tasks: [fromSwift]))
            try await sync.sync()
            _ = try await Self.python(url, token: alice.token, database: pythonDB, ["sync"])
            #expect(try await Self.python(url, token: alice.token, database: pythonDB, ["list"]).contains("from swift"))

            // Python to Swift: a new task, and the Swift task marked done.
            _ = try await Self.python(url, token: alice.token, database: pythonDB, ["add", "from python"])
            _ = try await Self.python(url, token: alice.token, database: pythonDB, ["done", fromSwift.id])
            _ = try await Self.python(url, token: alice.token, database: pythonDB, ["sync"])
            try await sync.sync()
            let tasks = try await swift.get(TodoTask.self)
            #expect(Set(tasks.map(\.title)) == ["from swift", "from python"])
            #expect(try await swift.get(TodoTask.self, id: fromSwift.id) == TodoTask(id: fromSwift.id, title: "from swift", dueDate: due, isCompleted: true))

            // A delete each way.
            let fromPython = try #require(tasks.first { $0.title == "from python" })
            _ = try await Self.python(url, token: alice.token, database: pythonDB, ["remove", fromSwift.id])
            _ = try await Self.python(url, token: alice.token, database: pythonDB, ["sync"])
            try await sync.sync()
            #expect(try await swift.get(TodoTask.self).map(\.title) == ["from python"])
            _ = try await swift.delete(fromPython)
            try await sync.sync()
            _ = try await Self.python(url, token: alice.token, database: pythonDB, ["sync"])
            #expect(try await Self.python(url, token: alice.token, database: pythonDB, ["list"]).trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
        }
    }

    @Test("a pushed value the server cannot store (a date past the year 9999) is refused alone as invalidValue, never a 500 (found by Schemathesis)")
    func unstorableValueIsRefusedAlone() async throws {
        try await SyncSecurityTests.withHTTPEndpoint(models: Self.models) { _, server, url, postgres in
            let alice = try await server.addAccount("alice")
            let far = UUID().uuidString, fine = UUID().uuidString
            let push = SyncPush(device: UUID().uuidString, token: UUID().uuidString, acknowledged: nil, changes: [
                SyncChange(table: "tasks", id: far, value: #"{"id": "\#(far)", "title": "far", "isCompleted": false, "dueDate": 1e300}"#, seq: 1),
                SyncChange(table: "tasks", id: fine, value: #"{"id": "\#(fine)", "title": "fine", "isCompleted": false}"#, seq: 2),
            ])
            let answer = try await SyncHTTPTests.request(url, "push", token: alice.token, body: try JSONEncoder().encode(push))
            #expect(answer.status == 200, "\(answer)")
            let refused = try #require(answer.json["refused"] as? [[String: Any]])
            #expect(refused.count == 1 && refused.first?["id"] as? String == far && refused.first?["reason"] as? String == "invalidValue", "\(refused)")
            #expect(try await postgres.get(TodoTask.self).map(\.title) == ["fine"])
        }
    }
}
#endif
