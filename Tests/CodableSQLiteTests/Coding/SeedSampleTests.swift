import Foundation
import Testing
import CodableSQLite

// The model of the blog post "Encoding and decoding SQLite in Swift". (The post's table lacks the
// `id` column its own Task and fetchByID use; the extension below is the post's with `id` added.)
#if Macros
@RowCodable
#endif
private struct Task: Codable, Equatable {
    var id: String
    var title: String
    var dueDate: Date?
    var isCompleted: Bool
}

extension Task {
    static var createTable: String {
        return "CREATE TABLE tasks (id TEXT PRIMARY KEY, title TEXT NOT NULL, dueDate TEXT, isCompleted INTEGER NOT NULL);"
    }

    static var upsert: String {
        return "INSERT OR REPLACE INTO tasks VALUES (:id, :title, :dueDate, :isCompleted);"
    }

    static var fetchAll: String {
        return "SELECT id, title, dueDate, isCompleted FROM tasks;"
    }

    static var fetchByID: String {
        return "SELECT id, title, dueDate, isCompleted FROM tasks WHERE id=:id;"
    }
}

@Suite("Coding: the blog post's sample")
struct SeedSampleTests {
    @Test func sampleRunsUnchanged() throws {
        let id = UUID().uuidString
        let tomorrow = Date(timeIntervalSinceNow: 86400)
        let task = Task(id: id, title: "Buy milk", dueDate: tomorrow, isCompleted: false)

        // The post's block, verbatim:
        // wrap these calls in do-catch blocks in real apps
        let database = try! SQLite.Database(path: ":memory:")
        try! database.execute(raw: Task.createTable)

        let sqliteEncoder = SQLite.Encoder(database)
        let sqliteDecoder = SQLite.Decoder(database)

        // wrap these calls in do-catch blocks in real apps
        try! sqliteEncoder.encode(task, using: Task.upsert)
        let allTasks = try! sqliteDecoder.decode(Array<Task>.self, using: Task.fetchAll)
        let taskFromSQLite = try! sqliteDecoder.decode(Task.self, using: Task.fetchByID, arguments: ["id": .text(id)])

        #expect(allTasks == [task])
        #expect(taskFromSQLite == task)
    }

    @Test func jsonCodersOfThePostStillWork() throws {
        let task = Task(id: "1", title: "Buy milk", dueDate: Date(timeIntervalSinceNow: 86400), isCompleted: false)
        let json = try JSONEncoder().encode(task)
        #expect(try JSONDecoder().decode(Task.self, from: json).id == "1")
    }
}
