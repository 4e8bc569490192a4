import CodableSQLite
import Foundation

/// The task of the blog post "Encoding and decoding SQLite in Swift".
struct Task: Codable, Equatable, Sendable {
    var id: String
    var title: String
    var dueDate: Date?
    var isCompleted: Bool
}

extension Task {
    static let createTable: SQL = """
        CREATE TABLE IF NOT EXISTS tasks (
            id TEXT PRIMARY KEY NOT NULL,
            title TEXT NOT NULL,
            dueDate TEXT,
            isCompleted INTEGER NOT NULL DEFAULT 0
        )
        """

    /// Insert, or update in place (never delete and re-insert) when the id exists.
    static let upsert: SQL = """
        INSERT INTO tasks (id, title, dueDate, isCompleted) VALUES (:id, :title, :dueDate, :isCompleted)
        ON CONFLICT (id) DO UPDATE SET title = excluded.title, dueDate = excluded.dueDate, isCompleted = excluded.isCompleted
        """

    /// Pending first, then by due date (undated last), then by title.
    static let fetchAll: SQL = """
        SELECT id, title, dueDate, isCompleted FROM tasks
        ORDER BY isCompleted, dueDate IS NULL, dueDate, title COLLATE NOCASE
        """

    /// Tasks not done yet, by due date.
    static let fetchPending: SQL = """
        SELECT id, title, dueDate, isCompleted FROM tasks WHERE isCompleted = 0
        ORDER BY dueDate IS NULL, dueDate, title COLLATE NOCASE
        """

    static let fetchByPrefix: SQL = "SELECT id, title, dueDate, isCompleted FROM tasks WHERE substr(id, 1, length(:prefix)) = :prefix"

    static let delete: SQL = "DELETE FROM tasks WHERE id = :id"
}

/// Why a command could not do what was asked; printed as a one-line message.
struct TodoError: Error, CustomStringConvertible {
    let description: String
}

/// Where the tasks are kept: an SQLite file or a PostgreSQL server.
protocol TaskStoring: Sendable {
    /// Pending first, then by due date (undated last), then by title.
    func all() async throws -> [Task]
    func save(_ task: Task) async throws
    func remove(_ task: Task) async throws
    /// The tasks whose id starts with `prefix`.
    func tasks(withIDPrefix prefix: String) async throws -> [Task]
}

extension TaskStoring {
    /// The one task whose id starts with `prefix` (case-insensitive).
    func task(matching prefix: String) async throws -> Task {
        let prefix = prefix.trimmingCharacters(in: .whitespaces).uppercased()
        guard !prefix.isEmpty else { throw TodoError(description: "Give a task id (see `todo list`).") }
        let matches = try await tasks(withIDPrefix: prefix)
        switch matches.count {
        case 1:
            return matches[0]
        case 0:
            throw TodoError(description: "No task has the id '\(prefix)'. See `todo list` for the ids.")
        default:
            let ids = matches.map { TaskTable.shortID($0.id) }.joined(separator: ", ")
            throw TodoError(description: "'\(prefix)' matches \(matches.count) tasks (\(ids)); type more of the id.")
        }
    }
}

/// The tasks in one SQLite database, with the SQL of the blog post.
struct TaskStore: TaskStoring {
    let database: SQLite.Database
    let encoder: SQLite.Encoder
    let decoder: SQLite.Decoder

    static var defaultPath: String { SQLite.Database.Configuration().path }

    static func open(path: String?) async throws -> TaskStore {
        do {
            let database = try path.map { try SQLite.Database(path: $0) } ?? SQLite.Database()
            _ = try await database.execute(raw: Task.createTable)
            return TaskStore(database: database, encoder: SQLite.Encoder(database), decoder: SQLite.Decoder(database))
        } catch let error as SQLite.Error {
            throw TodoError(description: "Cannot open the task database \(path ?? Self.defaultPath): \(error.message)")
        }
    }

    func all() async throws -> [Task] {
        try await decoder.decode([Task].self, using: Task.fetchAll)
    }

    func save(_ task: Task) async throws {
        try await encoder.encode(task, using: Task.upsert)
    }

    func remove(_ task: Task) async throws {
        _ = try await database.write(Task.delete, arguments: ["id": .text(task.id)])
    }

    func tasks(withIDPrefix prefix: String) async throws -> [Task] {
        try await decoder.decode([Task].self, using: Task.fetchByPrefix, arguments: ["prefix": .text(prefix)])
    }
}
