import Foundation
import GRDBSQLite

/// One library (or the raw C API) running the benchmark scenarios on its own database.
protocol Contender: AnyObject {
    /// What it stores and fetches: ``Item``, or a type of the same fields (the generated coder's
    /// ``GeneratedItem``), made from the items before the timings.
    associatedtype Fetched: ItemRecord = Item
    /// Opens a new database at `path` (a file, or ":memory:") with WAL and synchronous=NORMAL for
    /// files, and creates the `item` table.
    init(path: String) throws
    /// A: inserts every item in one transaction.
    func insert(_ items: [Fetched]) throws
    /// B: fetches every item, ordered by id.
    func fetchAll() throws -> [Fetched]
    /// C: fetches each id with its own lookup by primary key.
    func fetch(ids: [Int64]) throws -> [Fetched]
    /// D: updates every item by primary key in one transaction.
    func update(_ items: [Fetched]) throws
}

struct ContenderKind {
    let name: String
    let make: (String) throws -> any Contender
    let isBaseline: Bool
    /// CodableSQLite's Encoder/Decoder: the line the worst ratio is reported for.
    let isOurs: Bool
    /// The same through the generated coder (@RowCodable): the worst ratio (generated).
    var isGenerated = false
    /// Scenario E: the model API, compared with the Encoder/Decoder path.
    var isModels = false
    /// The limit contender: hand-written code storing CodableSQLite's bytes.
    var isLimit = false
}

enum BenchmarkError: Error, CustomStringConvertible {
    case sqlite(String)
    case verification(String)

    var description: String {
        switch self {
        case .sqlite(let message): "SQLite: \(message)"
        case .verification(let message): "verification failed: \(message)"
        }
    }
}

/// Runs `sql` (several statements allowed) on a C connection: the hand-written contenders'.
func execute(_ sql: String, on db: OpaquePointer) throws {
    guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw BenchmarkError.sqlite(String(cString: sqlite3_errmsg(db))) }
}

/// Prepares one statement on a C connection: the hand-written contenders'.
func prepareStatement(_ sql: String, on db: OpaquePointer) throws -> OpaquePointer {
    var statement: OpaquePointer?
    guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
        throw BenchmarkError.sqlite(String(cString: sqlite3_errmsg(db)))
    }
    return statement
}
