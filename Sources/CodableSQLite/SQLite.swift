import Foundation

/// The namespace of CodableSQLite: ``SQLite/Database``, ``SQLite/Encoder``, ``SQLite/Decoder``,
/// ``SQLite/Value`` and ``SQLite/Error``.
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
public typealias SQLiteArguments = [String: SQLite.Value]

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
public typealias SQLiteRow = [String: SQLite.Value]
