import CodableSQLite
import Foundation
#if Postgres
import CodablePostgres
import Logging
#endif

/// `todo`: a small to-do list kept in SQLite, or on a PostgreSQL server (`--postgres URL`), with
/// one model (``TodoItem``) and one set of functions (``TodoList``) for both.
@main
enum Todo {
    static func main() async {
        #if Postgres
        // Logs (the sync server's audit log: refused tokens, shares, token changes) go to standard
        // error, never into the output a script reads (a new account's token is its last line).
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        #endif
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
        // A message may quote a title, or a server's words: never a terminal's control sequence.
        FileHandle.standardError.write(Data("Error: \(message.escapingControlCharacters(keepingNewlines: true))\n".utf8))
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
            print("Added \(TodoTable.shortID(item.id)): \(item.title.escapingControlCharacters)\(dueDate.map { " (due \(DueDate.describe($0)))" } ?? "")"
                  + (arguments.value("list").map { " to the list \($0.escapingControlCharacters)" } ?? ""))
            print()
            print(TodoTable.render(try await TodoList.items(in: db).printable))
        case "list":
            try arguments.allowOnly(["pending"], for: command)
            try noMoreWords()
            print(TodoTable.render(try await TodoList.items(in: try await openStore(arguments), pending: arguments.flag("pending")).printable))
        case "done":
            try arguments.allowOnly([], for: command)
            let id = try taskID()
            let item = try await TodoList.complete(id, in: try await openStore(arguments))
            print("Done: \(item.title.escapingControlCharacters)")
        case "remove", "rm":
            try arguments.allowOnly([], for: command)
            let id = try taskID()
            let item = try await TodoList.remove(id, in: try await openStore(arguments))
            print("Removed: \(item.title.escapingControlCharacters)")
        case "search":
            try arguments.allowOnly([], for: command)
            guard !words.isEmpty else { throw TodoError(description: "Give the words to find: todo search milk") }
            let text = words.joined(separator: " ")
            words = []
            let found = try await TodoList.search(text, in: try await openStore(arguments))
            print(found.isEmpty ? "No task has the words '\(text.escapingControlCharacters)'." : TodoTable.render(found.printable))
        case "watch":
            try arguments.allowOnly(["pending", "times"], for: command)
            try noMoreWords()
            try await Watch.run(arguments)
        case "sync":
            try arguments.allowOnly(Arguments.serverOptions.union(["live"]), for: command)
            try noMoreWords()
            try await SyncCommand.run(arguments)
        case "share", "unshare":
            try arguments.allowOnly(Arguments.serverOptions.union(command == "share" ? ["with", "read-only"] : ["with"]), for: command)
            try await ServerCommands.share(words, revoke: command == "unshare", arguments)
            words = []
        case "account":
            try arguments.allowOnly(["label", "lifetime", "all"], for: command)
            try await ServerCommands.account(words, arguments)
            words = []
        case "serve":
            try arguments.allowOnly(["port", "host", "retention"], for: command)
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
        if let url = try arguments.postgresURL() {
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

extension String {
    /// The text with its control characters (and the invisible ones that reorder text) as visible
    /// escapes, `\u{1B}` for ESC: a title or list name, or a server's message, printed to a
    /// terminal can neither run its control sequences (clear the screen, rewrite lines) nor
    /// hide text. `keepingNewlines`: line breaks stay (a message of several lines).
    ///
    /// ```swift
    /// print("\u{1B}[2Jhi".escapingControlCharacters)   // \u{1B}[2Jhi
    /// ```
    func escapingControlCharacters(keepingNewlines: Bool) -> String {
        var escaped = ""
        for scalar in unicodeScalars {
            switch scalar.value {
            case 0x0A where keepingNewlines: escaped.unicodeScalars.append(scalar)
            case 0x0A: escaped += "\\n"
            case 0x09: escaped += "\\t"
            case 0x0D: escaped += "\\r"
            // C0 and C1 controls, DEL; the bidirectional marks, embeddings, overrides and
            // isolates; zero-width and other invisible format characters.
            case 0x00...0x1F, 0x7F...0x9F, 0x200B...0x200F, 0x202A...0x202E, 0x2060...0x2069, 0xFEFF:
                escaped += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// ``escapingControlCharacters(keepingNewlines:)`` for one line: line breaks escaped too.
    var escapingControlCharacters: String { escapingControlCharacters(keepingNewlines: false) }
}

extension [TodoItem] {
    /// The items with their titles (and ids: a synced row's come from the server) as they may be printed (``Swift/String/escapingControlCharacters``).
    var printable: [TodoItem] {
        map { item in
            var item = item
            item.title = item.title.escapingControlCharacters
            item.id = item.id.escapingControlCharacters
            return item
        }
    }
}
