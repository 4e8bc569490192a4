// expected-error: cannot find 'Postgres' in scope
// A device's module does not bring the server: `import CodableSyncClient` gives SQLite, the sync
// protocol and the device's sync, not `Postgres.*` (nor the sync server).
import CodableSyncClient

func open() async throws -> Postgres.Database { try await Postgres.Database(url: "postgres://localhost/app") }
