import ArgumentParser
import CodableSQLite
import Dispatch
import Foundation

extension Todo {
    /// `todo watch`: the list, printed again whenever the database changes, whoever changed it
    /// (this process, another `todo`, the `sqlite3` tool). Ctrl-C ends it.
    struct Watch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the list, and again whenever it changes (also when another todo changes it). Ctrl-C ends it.")

        @Flag(name: .long, help: "Show only tasks not done yet.")
        var pending = false

        @Option(name: .long, help: ArgumentHelp("Stop after printing the list this many times (for scripts).", valueName: "count"))
        var times: Int?

        @OptionGroup var options: StoreOptions
        @ParentCommand var root: Todo

        func validate() throws {
            if let times, times < 1 { throw ValidationError("--times must be 1 or more.") }
        }

        func run() async throws {
            guard let store = try await options.openStore(root: root) as? TaskStore else {
                throw TodoError(description: "todo watch needs an SQLite database: live queries are not available on PostgreSQL yet.")
            }
            let query = pending ? Task.fetchPending : Task.fetchAll
            let limit = times
            let watching = _Concurrency.Task {
                var printed = 0
                for try await tasks in store.database.observe([Task].self, using: query) {
                    // Unbuffered, so that a pipe (another program, a log) sees each list at once.
                    let header = printed > 0 ? "\n--- changed at \(DueDate.describe(Date()))\n" : ""
                    FileHandle.standardOutput.write(Data((header + TaskTable.render(tasks) + "\n").utf8))
                    printed += 1
                    if let limit, printed >= limit { break }
                }
            }
            // Ctrl-C stops the observation and ends the program normally.
            signal(SIGINT, SIG_IGN)
            let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
            interrupt.setEventHandler { watching.cancel() }
            interrupt.resume()
            defer { interrupt.cancel() }
            try await watching.value
            if watching.isCancelled { print("\nStopped watching.") }
        }
    }
}
