import ArgumentParser
import CodableSQLite
import Foundation

/// `todo`: a small to-do list kept in SQLite, written with CodableSQLite's Encoder and Decoder.
@main
struct Todo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A to-do list stored in SQLite with CodableSQLite.",
        discussion: """
            Tasks live in the default database for this program (\(TaskStore.defaultPath)) unless \
            --database names another file. Task ids can be shortened to any unique prefix.
            """,
        subcommands: [Add.self, List.self, Done.self, Remove.self, Watch.self],
        defaultSubcommand: List.self)

    /// `--database` given before the subcommand (`todo --database x.sqlite list`).
    @Option(name: .long, help: ArgumentHelp("The database file to use.", valueName: "path"))
    var database: String?
}

/// Options every subcommand shares.
struct StoreOptions: ParsableArguments {
    /// `--database` given after the subcommand (`todo list --database x.sqlite`).
    @Option(name: .long, help: ArgumentHelp("The database file to use.", valueName: "path"))
    var database: String?

    func openStore(root: Todo) throws -> TaskStore {
        try TaskStore(path: database ?? root.database)
    }
}

extension Todo {
    struct Add: ParsableCommand {
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

        func run() throws {
            let dueDate = try due.map { try DueDate.parse($0) }
            let store = try options.openStore(root: root)
            let task = Task(id: UUID().uuidString, title: title, dueDate: dueDate, isCompleted: false)
            try store.save(task)
            print("Added \(TaskTable.shortID(task.id)): \(task.title)\(dueDate.map { " (due \(DueDate.describe($0)))" } ?? "")")
            print()
            print(TaskTable.render(try store.all()))
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List tasks: pending first, by due date.")

        @Flag(name: .long, help: "Show only tasks not done yet.")
        var pending = false

        @OptionGroup var options: StoreOptions
        @ParentCommand var root: Todo

        func run() throws {
            var tasks = try options.openStore(root: root).all()
            if pending { tasks.removeAll(where: \.isCompleted) }
            print(TaskTable.render(tasks))
        }
    }

    struct Done: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Mark a task as done.")

        @Argument(help: "The task's id, or a unique prefix of it.")
        var id: String

        @OptionGroup var options: StoreOptions
        @ParentCommand var root: Todo

        func run() throws {
            let store = try options.openStore(root: root)
            var task = try store.task(matching: id)
            task.isCompleted = true
            try store.save(task)
            print("Done: \(task.title)")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a task.")

        @Argument(help: "The task's id, or a unique prefix of it.")
        var id: String

        @OptionGroup var options: StoreOptions
        @ParentCommand var root: Todo

        func run() throws {
            let store = try options.openStore(root: root)
            let task = try store.task(matching: id)
            try store.remove(task)
            print("Removed: \(task.title)")
        }
    }
}
