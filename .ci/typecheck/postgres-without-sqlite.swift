// expected-error: cannot find 'SQLite' in scope
// The PostgreSQL engine does not bring the SQLite engine: `import CodablePostgres` gives the model
// layer and `Postgres.*`, not `SQLite.*` (nor CSQLite).
import CodablePostgres

func open() throws -> SQLite.Database { try SQLite.Database(path: ":memory:") }
