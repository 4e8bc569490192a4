import CodableSQLite
import Foundation

/// A to-do item: the task of the blog post "Encoding and decoding SQLite in Swift", as a model.
///
/// The same model is stored the same way on both engines (a table `tasks`, one column per
/// property), so `todo --database` and `todo --postgres` differ only in how they open the
/// database. Lists made by earlier versions of `todo` (the same table, written with SQL) open
/// unchanged.
struct TodoItem: SearchableModel, Equatable, Sendable {
    var id: String
    var title: String
    var dueDate: Date?
    var isCompleted: Bool

    static var tableName: String { "tasks" }
    static var indexes: [ModelIndex<TodoItem>] { [.index(\.isCompleted, \.dueDate)] }
    /// `todo search` finds tasks by the words of their titles.
    static var searchable: [SearchField<TodoItem>] { [.field(\.title)] }

    /// A new, pending item with a fresh id.
    init(title: String, dueDate: Date?) {
        self.init(id: UUID().uuidString, title: title, dueDate: dueDate, isCompleted: false)
    }

    init(id: String, title: String, dueDate: Date?, isCompleted: Bool) {
        self.id = id
        self.title = title
        self.dueDate = dueDate
        self.isCompleted = isCompleted
    }
}

/// Why a command could not do what was asked; printed as a one-line message.
struct TodoError: Error, CustomStringConvertible {
    let description: String
}

/// What `todo` does with the list, written once against ``ModelStore``: the same code runs on
/// an SQLite file and on a PostgreSQL server.
enum TodoList {
    /// Pending first, then by due date, then by title; `pending` leaves out what is done.
    static func filter(pending: Bool) -> Filter<TodoItem> {
        let order = { (filter: Filter<TodoItem>) in filter.sort(by: \.isCompleted).sort(by: \.dueDate).sort(by: \.title) }
        return pending ? order(Filter(\TodoItem.isCompleted, is: .equal(to: false))) : order(Filter())
    }

    /// The list in the order people read it: both engines sort undated items first (NULLs
    /// first), and a to-do list shows them after the dated ones of their group.
    static func arranged(_ items: [TodoItem]) -> [TodoItem] {
        let groups = [items.filter { !$0.isCompleted }, items.filter(\.isCompleted)]
        return groups.flatMap { group in group.filter { $0.dueDate != nil } + group.filter { $0.dueDate == nil } }
    }

    static func items(in db: some ModelStore, pending: Bool = false) async throws -> [TodoItem] {
        arranged(try await db.get(with: filter(pending: pending)))
    }

    /// The one item whose id starts with `prefix` (ignoring case).
    static func item(matching prefix: String, in db: some ModelStore) async throws -> TodoItem {
        let prefix = prefix.trimmingCharacters(in: .whitespaces).uppercased()
        guard !prefix.isEmpty else { throw TodoError(description: "Give a task id (see `todo list`).") }
        let matches = try await db.get(with: Filter(\TodoItem.id, is: .hasPrefix(prefix)).limit(10))
        switch matches.count {
        case 1:
            return matches[0]
        case 0:
            throw TodoError(description: "No task has the id '\(prefix)'. See `todo list` for the ids.")
        default:
            let ids = matches.map { TodoTable.shortID($0.id) }.joined(separator: ", ")
            throw TodoError(description: "'\(prefix)' matches more than one task (\(ids)); type more of the id.")
        }
    }

    /// Marks the item done; re-reads it in the same transaction, so a concurrent edit of its
    /// title is kept.
    static func complete(_ prefix: String, in db: some ModelStore) async throws -> TodoItem {
        let item = try await item(matching: prefix, in: db)
        return try await db.inTransaction { tx in
            guard var current = try await tx.get(TodoItem.self, id: item.id) else {
                throw TodoError(description: "The task '\(item.title)' was removed meanwhile.")
            }
            current.isCompleted = true
            return try await tx.save(current)
        }
    }

    /// The tasks whose titles have the words of `text` (the last as a prefix), best match first.
    static func search(_ text: String, in db: some ModelStore) async throws -> [TodoItem] {
        try await db.search(TodoItem.self, for: text, limit: 50).map(\.value)
    }

    static func remove(_ prefix: String, in db: some ModelStore) async throws -> TodoItem {
        let item = try await item(matching: prefix, in: db)
        try await db.delete(item)
        return item
    }
}
