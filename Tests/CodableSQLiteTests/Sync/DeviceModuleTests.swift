import CodableSyncClient
import Foundation
import Testing

/// The device's module without any package trait (no PostgreSQL engine, no NIO): an app's file
/// synced through HTTP, offline first.
@Suite("Sync: the device's module alone (CodableSyncClient, no trait)")
struct DeviceModuleTests {
    struct Note: Codable, UUIDModel, Sendable, Equatable {
        let id: UUID
        var text: String
    }

    @Test("a device whose server cannot be reached keeps its change, says so, and its file goes on working")
    func offlineDevice() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString).sqlite").path
        let db = try SQLite.Database(path: path)
        // A port nothing listens on, on this machine.
        let url = try #require(URL(string: "http://127.0.0.1:9/sync"))
        let sync = try SQLite.Sync(local: db, transport: HTTPSyncTransport(server: url, token: "token"), models: [Note.self])
        let note = Note(id: UUID(), text: "written offline")
        try await db.save(note)
        await #expect(throws: HTTPSyncTransport.Failure.self) { try await sync.sync() }
        let pending = try await db.read("SELECT count(*) AS n FROM codablesync_outbox").first?["n"]?.int64Value
        #expect(pending == 1, "the change waits in the outbox for the next sync")
        #expect(try await db.get(Note.self) == [note])
        try await db.save(Note(id: UUID(), text: "and goes on"))
        #expect(try await db.count(Note.self) == 2)
    }

    @Test("the protocol's checks run on the device: a request over its bounds is refused before it is sent, naming the field")
    func protocolBounds() throws {
        let tooMany = SyncPush(device: "d", token: "t", acknowledged: nil, changes: (0...SyncPush.maximumChanges).map {
            SyncChange(table: "Note", id: "\($0)", value: nil, seq: Int64($0 + 1))
        })
        let refused = #expect(throws: SyncError.self) { try tooMany.validate() }
        #expect(refused?.code == .invalidArgument)
        let nul = SyncPull(device: "a\u{0}b", after: 0, limit: 10)
        let nulRefused = #expect(throws: SyncError.self) { try nul.validate() }
        #expect(nulRefused?.message.contains("NUL") == true, "\(String(describing: nulRefused))")
    }
}
