import CodableSQLite
import Foundation
#if Postgres
import CodablePostgres
#endif

/// `todo`: a small to-do list kept in SQLite, or on a PostgreSQL server (`--postgres URL`), with
/// one model (``TodoItem``) and one set of functions (``TodoList``) for both.
@main
enum Todo {
    static func main() async {
        do {
            let arguments = try Arguments(Array(CommandLine.arguments.dropFirst()))
            if arguments.flag("help") {
                print(Arguments.usage)
                return
            }
            try await run(arguments)
        } catch let error as TodoError {
            fail(error.description)
        } catch let error as SQLite.Error {
            fail(error.message)
        } catch let error as ModelError {
            fail(error.message)
        } catch {
            fail("\(error)")
        }
    }

    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("Error: \(message)\n".utf8))
        exit(1)
    }

    static func run(_ arguments: Arguments) async throws {
        var words = arguments.positional
        let command = words.isEmpty ? "list" : words.removeFirst()
        func noMoreWords() throws {
            if let extra = words.first { throw TodoError(description: "Unexpected '\(extra)' after todo \(command). See todo --help.") }
        }
        func taskID() throws -> String {
            guard !words.isEmpty else { throw TodoError(description: "Give the task's id: todo \(command) ID (see todo list).") }
            let id = words.removeFirst()
            try noMoreWords()
            return id
        }
        switch command {
        case "add":
            try arguments.allowOnly(["due", "list"], for: command)
            guard !words.isEmpty else { throw TodoError(description: "Give the task's title: todo add \"Buy milk\" --due tomorrow") }
            let title = words.removeFirst()
            try noMoreWords()
            guard !title.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw TodoError(description: "The title must not be empty.")
            }
            let dueDate = try arguments.value("due").map { try DueDate.parse($0) }
            let db = try await openStore(arguments)
            let new = TodoItem(title: title, dueDate: dueDate)
            let item: TodoItem
            if let list = arguments.value("list") {
                item = try await TaskList.add(new, toList: list, in: db)
            } else {
                item = try await db.save(new)
            }
            print("Added \(TodoTable.shortID(item.id)): \(item.title)\(dueDate.map { " (due \(DueDate.describe($0)))" } ?? "")"
                  + (arguments.value("list").map { " to the list \($0)" } ?? ""))
            print()
            print(TodoTable.render(try await TodoList.items(in: db)))
        case "list":
            try arguments.allowOnly(["pending"], for: command)
            try noMoreWords()
            print(TodoTable.render(try await TodoList.items(in: try await openStore(arguments), pending: arguments.flag("pending"))))
        case "done":
            try arguments.allowOnly([], for: command)
            let id = try taskID()
            let item = try await TodoList.complete(id, in: try await openStore(arguments))
            print("Done: \(item.title)")
        case "remove", "rm":
            try arguments.allowOnly([], for: command)
            let id = try taskID()
            let item = try await TodoList.remove(id, in: try await openStore(arguments))
            print("Removed: \(item.title)")
        case "search":
            try arguments.allowOnly([], for: command)
            guard !words.isEmpty else { throw TodoError(description: "Give the words to find: todo search milk") }
            let text = words.joined(separator: " ")
            words = []
            let found = try await TodoList.search(text, in: try await openStore(arguments))
            print(found.isEmpty ? "No task has the words '\(text)'." : TodoTable.render(found))
        case "watch":
            try arguments.allowOnly(["pending", "times"], for: command)
            try noMoreWords()
            try await Watch.run(arguments)
        case "sync":
            try arguments.allowOnly(["live", "server", "token"], for: command)
            try noMoreWords()
            try await SyncCommand.run(arguments)
        case "share", "unshare":
            try arguments.allowOnly(command == "share" ? ["with", "read-only", "server", "token"] : ["with", "server", "token"], for: command)
            try await ServerCommands.share(words, revoke: command == "unshare", arguments)
            words = []
        case "account":
            try arguments.allowOnly([], for: command)
            try await ServerCommands.account(words, arguments)
            words = []
        case "serve":
            try arguments.allowOnly(["port", "host"], for: command)
            try noMoreWords()
            try await ServerCommands.serve(arguments)
        default:
            throw TodoError(description: """
                Unknown command '\(command)'. The commands are add, list, done, remove, search, watch, sync, share, unshare, \
                account and serve (todo --help).
                """)
        }
    }

    /// The database the options name: an SQLite file (the default one without `--database`) or,
    /// with `--postgres`, a PostgreSQL server.
    static func openStore(_ arguments: Arguments) async throws -> any ObservableModelStore {
        if let url = arguments.value("postgres") {
            if arguments.value("database") != nil { throw TodoError(description: "Give --database or --postgres, not both.") }
            #if Postgres
            do {
                return try await Postgres.Database(url: url)
            } catch let error as Postgres.Error {
                throw TodoError(description: "Cannot open the task database on the PostgreSQL server: \(error)")
            }
            #else
            _ = url
            throw TodoError(description: "--postgres needs the PostgreSQL engine, which this build leaves out. Build with it: swift run --traits Postgres todo --postgres URL …")
            #endif
        }
        return try openSQLite(arguments)
    }

    static func openSQLite(_ arguments: Arguments) throws -> SQLite.Database {
        let path = arguments.value("database")
        do {
            return try path.map { try SQLite.Database(path: $0) } ?? SQLite.Database()
        } catch let error as SQLite.Error {
            throw TodoError(description: "Cannot open the task database \(path ?? Arguments.defaultDatabasePath): \(error.message)")
        }
    }
}
