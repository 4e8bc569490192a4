import CodableSQLite
import Foundation

/// A named list of tasks (`todo add … --list groceries`): what `todo share` shares with another
/// account, with every task in it.
struct TaskList: Model, Equatable, Sendable {
    var id: String
    var name: String
    var tasks: [TodoItem]

    static var tableName: String { "lists" }
    static var indexes: [ModelIndex<TaskList>] { [.index(\.name)] }

    /// The list named `name` (ignoring case), or `nil`.
    static func named(_ name: String, in db: some ModelStore) async throws -> TaskList? {
        try await db.get(TaskList.self).first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }

    /// Adds `item` to the list named `name`, made when there is none, in one transaction.
    static func add(_ item: TodoItem, toList name: String, in db: some ModelStore) async throws -> TodoItem {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw TodoError(description: "A list's name must not be empty.") }
        return try await db.inTransaction { tx in
            let saved = try await tx.save(item)
            var list = try await named(trimmed, in: tx) ?? TaskList(id: UUID().uuidString, name: trimmed, tasks: [])
            list.tasks.append(saved)
            _ = try await tx.save(list)
            return saved
        }
    }
}
