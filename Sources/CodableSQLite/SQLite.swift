// The backend-neutral model layer (Model, Filter, ModelStore, the storage contract, live-query
// sequences) is part of CodableSQLite's API: `import CodableSQLite` is all an app writes.
@_exported import CodableModels
import Foundation

/// The namespace of CodableSQLite: ``SQLite/Database``, ``SQLite/Encoder``, ``SQLite/Decoder``,
/// ``SQLite/Error`` (values are `StoredValue`, which both engines share).
///
/// ```swift
/// import CodableSQLite
///
/// let db = try SQLite.Database(path: ":memory:")
/// try db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
/// try db.write("INSERT INTO t VALUES (:id, :name)", arguments: ["id": .integer(1), "name": .text("a")])
/// ```
///
/// Sendable: a namespace without cases; the types in it state their own status.
public enum SQLite: Sendable {}

/// The text of one or more SQL statements.
///
/// ```swift
/// let createTable: SQL = "CREATE TABLE tasks (id TEXT PRIMARY KEY, title TEXT NOT NULL)"
/// ```
public typealias SQL = String

/// Named statement arguments: each key binds the parameters `:key`, `@key` and `$key`.
///
/// A key the SQL does not mention is an error, so a misspelt name never passes silently;
/// a parameter with no key binds `NULL`.
///
/// ```swift
/// let arguments: SQLiteArguments = ["id": .integer(1), "name": .text("Alice")]
/// try db.write("UPDATE people SET name = :name WHERE id = :id", arguments: arguments)
/// ```
public typealias SQLiteArguments = [String: StoredValue]

/// One result row as a dictionary from column name to value, for convenience reads.
///
/// When several columns share a name (`SELECT a.id, b.id …`), the leftmost one is kept;
/// give them distinct names with `AS`. ``SQLite/Decoder`` reads statements directly and never
/// builds these dictionaries.
///
/// ```swift
/// let rows: [SQLiteRow] = try db.read("SELECT id, name FROM people")
/// let name = rows.first?["name"]?.stringValue
/// ```
public typealias SQLiteRow = [String: StoredValue]

// MARK: Names in the namespace

/// The model layer's types (`Model`, `Filter`, …) are declared at the top level of CodableModels,
/// which `import CodableSQLite` brings. When an app has its own `Filter` or `Model` (common
/// words), its declaration wins over ours in that app, and it writes the module's name:
///
/// ```swift
/// struct Filter { … }                                        // the app's own type
/// struct Person: Codable, CodableModels.UUIDModel { let id: UUID; var age: Int }
/// let adults = try db.get(with: CodableModels.Filter(\Person.age, is: .greater(than: 17)))
/// ```
extension SQLite {
    /// A value as SQLite stores it, one of its five storage classes: see `StoredValue`, the
    /// storage contract's value, which both engines share.
    ///
    /// ```swift
    /// let values: [SQLite.Value] = [.null, .integer(42), .double(1.5), .text("hi"), .data(Data([1, 2]))]
    /// ```
    public typealias Value = StoredValue
}
