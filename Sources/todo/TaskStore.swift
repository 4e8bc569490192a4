import CodableSQLite
import Foundation

/// The task of the blog post "Encoding and decoding SQLite in Swift".
struct Task: Codable, Equatable {
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

/// The tasks in one database.
struct TaskStore {
    let database: SQLite.Database
    let encoder: SQLite.Encoder
    let decoder: SQLite.Decoder

    static var defaultPath: String { SQLite.Database.Configuration().path }

    init(path: String?) throws {
        do {
            database = try path.map { try SQLite.Database(path: $0) } ?? SQLite.Database()
            try database.execute(raw: Task.createTable)
        } catch let error as SQLite.Error {
            throw TodoError(description: "Cannot open the task database \(path ?? Self.defaultPath): \(error.message)")
        }
        encoder = SQLite.Encoder(database)
        decoder = SQLite.Decoder(database)
    }

    func all() throws -> [Task] {
        try decoder.decode([Task].self, using: Task.fetchAll)
    }

    func save(_ task: Task) throws {
        try encoder.encode(task, using: Task.upsert)
    }

    func remove(_ task: Task) throws {
        try database.write(Task.delete, arguments: ["id": .text(task.id)])
    }

    /// The one task whose id starts with `prefix` (case-insensitive).
    func task(matching prefix: String) throws -> Task {
        let prefix = prefix.trimmingCharacters(in: .whitespaces).uppercased()
        guard !prefix.isEmpty else { throw TodoError(description: "Give a task id (see `todo list`).") }
        let matches = try decoder.decode([Task].self, using: Task.fetchByPrefix, arguments: ["prefix": .text(prefix)])
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
