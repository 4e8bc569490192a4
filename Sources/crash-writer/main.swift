// A test helper, not a product: it writes to a database in a loop through CodableSQLite and
// prints each write's number on standard output as soon as the call that committed it returns.
// The crash test kills it with SIGKILL at random moments and checks that everything it printed
// is in the database, whole.
//
//   crash-writer <database path> <first number>
import CodableSQLite
import Foundation

struct Entry: Codable, Model {
    var id: Int64?
    var number: Int
    var text: String
}

/// The same table as `Entry`, one property more: saving it makes the table gain a column.
struct EntryV2: Codable, Model {
    static var tableName: String { "Entry" }
    var id: Int64?
    var number: Int
    var text: String
    var extra: String?
}

struct Part: Codable {
    var number: Int
    var part: Int
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let first = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: crash-writer <database path> <first number>\n".utf8))
    exit(2)
}
let db: SQLite.Database
do {
    db = try SQLite.Database(path: arguments[1])
    try db.execute(raw: "CREATE TABLE IF NOT EXISTS parts (number INTEGER NOT NULL, part INTEGER NOT NULL, PRIMARY KEY (number, part))")
} catch {
    FileHandle.standardError.write(Data("crash-writer: \(error)\n".utf8))
    exit(1)
}
let encoder = SQLite.Encoder(db)

/// Migrations that each create a table and fill it: a step ran whole and is recorded, or neither.
var migrator = SQLite.Migrator()
for step in 0..<40 {
    migrator.registerMigration("step \(step)") { db in
        try db.execute(raw: "CREATE TABLE step\(step) (n INTEGER)")
        try db.inTransaction { _ in for n in 0..<200 { try db.write("INSERT INTO step\(step) VALUES (?)", arguments: [.integer(Int64(n))]) } }
    }
}

var number = first
while true {
    do {
        switch number % 5 {
        case 0:
            // Three rows in one transaction: all of them, or none.
            try encoder.encode((0..<3).map { Part(number: number, part: $0) }, using: "INSERT INTO parts VALUES (:number, :part)")
        case 1:
            try db.save(Entry(id: nil, number: number, text: String(repeating: "e", count: number % 300)))
        case 2:
            try db.save(EntryV2(id: nil, number: number, text: "v2", extra: "x"))   // the first time: a new column
        case 3:
            try db.inTransaction { _ in
                try db.save(Entry(id: nil, number: number, text: "in a transaction"))
                try db.store(number, forKey: "last")
            }
        default:
            if number % 20 == 4 {
                try migrator.migrate(db)
            } else {
                try db.execute(raw: "PRAGMA wal_checkpoint(PASSIVE)")
            }
            try encoder.encode((0..<3).map { Part(number: number, part: $0) }, using: "INSERT INTO parts VALUES (:number, :part)")
        }
        FileHandle.standardOutput.write(Data("\(number)\n".utf8))
        number += 1
    } catch {
        FileHandle.standardError.write(Data("crash-writer: \(error)\n".utf8))
        exit(1)
    }
}
