// A device app with the device's module alone (CodableSyncClient: CodableSQLite and Foundation,
// no trait): its models, its file, the sync through HTTP, the protocol's types and errors.
import CodableSyncClient
import Foundation

struct Note: Codable, UUIDModel {
    var id = UUID()
    var text = ""
}

func startSync() async throws {
    let db = try SQLite.Database(path: "notes.sqlite")
    guard let server = URL(string: "https://sync.example.com/sync") else { return }
    let sync = try SQLite.Sync(local: db, transport: HTTPSyncTransport(server: server, token: "token"), models: [Note.self])
    do {
        try await sync.sync()
    } catch SyncError.Code.unauthorized {
        print("a new token is needed")
    }
    let _: SyncError.Code = .invalidAnswer
    print(SyncPush.maximumChanges, SyncHTTP.Route.push.method)
}
