// expected-error: expression is 'async' but is not marked with 'await'
// In async code, a database call resolves to its async form, which must be awaited: nobody blocks
// the cooperative thread pool by accident (the sync forms are also @available(*, noasync)).
import CodableSQLite

func countTasks(_ db: SQLite.Database) async throws -> Int {
    try db.read("SELECT count(*) AS n FROM tasks")[0]["n"]?.intValue ?? 0
}
