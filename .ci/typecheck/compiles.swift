// Must type-check: the filters of the models issue, spelled as users write them.
import CodableSQLite
import Foundation

enum EyeColor: String, Codable { case blue, brown }
struct Person: Codable, UUIDModel { let id: UUID; var name: String; var age: Int; var nickname: String?; var eyeColor: EyeColor }

func filters(_ db: SQLite.Database) throws {
    _ = try db.get(with: Filter(\Person.age, is: .greater(than: 17)))
    _ = try db.count(with: Filter(\Person.age, is: .between(15, and: 35)))
    _ = try db.get(with: Filter(\Person.name, is: .hasPrefix("B")).sort(by: \.age, ascending: false).limit(10, page: 2))
    _ = try db.get(with: Filter(\Person.nickname, is: .notEqual(to: nil)).and(\Person.eyeColor, is: .equal(to: .blue)))
}

struct Note: Codable, Model { var id: Int64?; var text: String }

// The issue's own spellings, sync and async, with its Person as written (no Sendable annotation).
// (In an async function the same calls resolve to the async forms and need `await`.)
func models(_ db: SQLite.Database, billy: Person) throws {
    try db.save(billy)
    let note = try db.save(Note(id: nil, text: "x"))
    try db.save([billy, billy])
    let everyone: [Person] = try db.get(Person.self)
    let billy2: Person? = try db.get(Person.self, id: billy.id)
    let n = try db.count(Person.self)
    try db.delete(billy)
    try db.delete(with: Filter(\Person.name, is: .equal(to: "Bob")))
    try db.inTransaction { tx in try tx.save(billy); try tx.delete(billy) }
    try db.store(173813.5345, forKey: "myKey")
    let v = try db.value(Double.self, forKey: "myKey")
    try db.removeValue(forKey: "myKey")
    _ = (note, everyone, billy2, n, v)
}

func modelsAsync(_ db: SQLite.Database, billy: Person) async throws {
    try await db.save(billy)
    let everyone: [Person] = try await db.get(Person.self)
    let n = try await db.count(Person.self)
    let adults = try await db.get(with: Filter(\Person.age, is: .greater(than: 17)))
    try await db.delete(billy)
    try await db.inTransaction { tx in try await tx.save(billy) }
    try await db.write { _ in try db.save(billy) }
    _ = (everyone, n, adults)
}

// Closures on one connection, sync and async; model names qualified by the module; error codes.
struct Invoice: Codable, CodableSQLite.Model { var id: Int64?; var total: Decimal }

func connections(_ db: SQLite.Database) throws {
    let n: Int? = try db.read { snapshot in try snapshot.read("SELECT count(*) AS n FROM t")[0]["n"]?.intValue }
    try db.inTransaction { tx in try tx.write("DELETE FROM t WHERE id = :id", arguments: ["id": .integer(1)]) }
    _ = n
    do {
        _ = try db.get(with: CodableSQLite.Filter(\Person.age, is: .greater(than: 17)))
    } catch ModelError.Code.invalidFilter {
    } catch let error as CodableSQLite.ModelError where error.code == .schemaMismatch {
    }
}

func connectionsAsync(_ db: SQLite.Database) async throws {
    let rows = try await db.read { snapshot in try snapshot.read("SELECT 1 AS one") }
    try await db.write { tx in try tx.execute(raw: "DELETE FROM t; DELETE FROM u;") }
    _ = rows
}
