import ArgumentParser
import CodableSQLite
import Foundation

/// `todo`: a small to-do list kept in SQLite, written with CodableSQLite's Encoder and Decoder, or
/// on a PostgreSQL server (`--postgres URL`) through CodablePostgres' model API.
@main
struct Todo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A to-do list stored in SQLite with CodableSQLite.",
        discussion: """
            Tasks live in the default database for this program (\(TaskStore.defaultPath)) unless \
            --database names another file, or on a PostgreSQL server with --postgres \
            postgres://user:password@host:port/database. Task ids can be shortened to any unique prefix.
            """,
        subcommands: [Add.self, List.self, Done.self, Remove.self, Watch.self],
        defaultSubcommand: List.self)

    /// `--database` given before the subcommand (`todo --database x.sqlite list`).
    @Option(name: .long, help: ArgumentHelp("The database file to use.", valueName: "path"))
    var database: String?

    /// `--postgres` given before the subcommand.
    @Option(name: .long, help: ArgumentHelp("Keep the list on this PostgreSQL server instead.", valueName: "url"))
    var postgres: String?
}

/// Options every subcommand shares.
struct StoreOptions: ParsableArguments {
    /// `--database` given after the subcommand (`todo list --database x.sqlite`).
    @Option(name: .long, help: ArgumentHelp("The database file to use.", valueName: "path"))
    var database: String?

    /// `--postgres` given after the subcommand.
    @Option(name: .long, help: ArgumentHelp("Keep the list on this PostgreSQL server instead.", valueName: "url"))
    var postgres: String?

    func openStore(root: Todo) async throws -> any TaskStoring {
        if let url = postgres ?? root.postgres {
            if database ?? root.database != nil { throw ValidationError("Give --database or --postgres, not both.") }
            #if Postgres
            return try await PostgresTaskStore.open(url: url)
            #else
            _ = url
            throw TodoError(description: "--postgres needs the PostgreSQL engine, which this build leaves out. Build with it: swift run --traits Postgres todo --postgres URL …")
            #endif
        }
        return try await TaskStore.open(path: database ?? root.database)
    }
}

extension Todo {
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a task.")

        @Argument(help: "What to do.")
        var title: String

        @Option(name: .long, help: ArgumentHelp(
            "When it is due: today, tomorrow, a weekday, 'in 3 days', YYYY-MM-DD or 'YYYY-MM-DD HH:MM'.",
            valueName: "date"))
        var due: String?

        @OptionGroup var options: StoreOptions
        @ParentCommand var root: Todo

        func validate() throws {
            if title.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                throw ValidationError("The title must not be empty.")
            }
        }

        func run() async throws {
            let dueDate = try due.map { try DueDate.parse($0) }
            let store = try await options.openStore(root: root)
            let task = Task(id: UUID().uuidString, title: title, dueDate: dueDate, isCompleted: false)
            try await store.save(task)
            print("Added \(TaskTable.shortID(task.id)): \(task.title)\(dueDate.map { " (due \(DueDate.describe($0)))" } ?? "")")
            print()
            print(TaskTable.render(try await store.all()))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List tasks: pending first, by due date.")

        @Flag(name: .long, help: "Show only tasks not done yet.")
        var pending = false

        @OptionGroup var options: StoreOptions
        @ParentCommand var root: Todo

        func run() async throws {
            var tasks = try await options.openStore(root: root).all()
            if pending { tasks.removeAll(where: \.isCompleted) }
            print(TaskTable.render(tasks))
        }
    }

    struct Done: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Mark a task as done.")

        @Argument(help: "The task's id, or a unique prefix of it.")
        var id: String

        @OptionGroup var options: StoreOptions
        @ParentCommand var root: Todo

        func run() async throws {
            let store = try await options.openStore(root: root)
            var task = try await store.task(matching: id)
            task.isCompleted = true
            try await store.save(task)
            print("Done: \(task.title)")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a task.")

        @Argument(help: "The task's id, or a unique prefix of it.")
        var id: String

        @OptionGroup var options: StoreOptions
        @ParentCommand var root: Todo

        func run() async throws {
            let store = try await options.openStore(root: root)
            let task = try await store.task(matching: id)
            try await store.remove(task)
            print("Removed: \(task.title)")
        }
    }
}
