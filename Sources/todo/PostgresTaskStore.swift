#if Postgres
import CodablePostgres
import Foundation

/// On PostgreSQL, a task is a model: no SQL to write.
extension Task: Model {
    static var tableName: String { "tasks" }
    static var indexes: [ModelIndex<Task>] { [.index(\.isCompleted, \.dueDate)] }
}

/// The tasks in a PostgreSQL database (`todo --postgres URL …`).
struct PostgresTaskStore: TaskStoring {
    let database: Postgres.Database

    static func open(url: String) async throws -> PostgresTaskStore {
        do {
            return PostgresTaskStore(database: try await Postgres.Database(url: url))
        } catch let error as Postgres.Error {
            throw TodoError(description: "Cannot open the task database on the PostgreSQL server: \(error)")
        }
    }

    func all() async throws -> [Task] {
        // The same order as the SQL of the SQLite store: pending first, then by due date (undated
        // last), then by title ignoring case.
        try await database.get(Task.self).sorted { a, b in
            if a.isCompleted != b.isCompleted { return !a.isCompleted }
            switch (a.dueDate, b.dueDate) {
            case let (x?, y?) where x != y: return x < y
            case (nil, _?): return false
            case (_?, nil): return true
            default: return a.title.lowercased() < b.title.lowercased()
            }
        }
    }

    func save(_ task: Task) async throws {
        try await database.save(task)
    }

    func remove(_ task: Task) async throws {
        try await database.delete(task)
    }

    func tasks(withIDPrefix prefix: String) async throws -> [Task] {
        try await database.get(with: Filter(\Task.id, is: .hasPrefix(prefix)))
    }
}
#endif
