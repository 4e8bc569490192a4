import CodableSQLite
import Dispatch
import Foundation

/// `todo watch`: the list, printed again whenever the database changes, whoever changed it
/// (this process, another `todo`, the `sqlite3` tool; with `--postgres`, any client of the
/// server, `psql` included). Ctrl-C ends it.
enum Watch {
    static func run(_ arguments: Arguments) async throws {
        var limit: Int?
        if let times = arguments.value("times") {
            guard let count = Int(times), count >= 1 else { throw TodoError(description: "--times must be a whole number, 1 or more (got '\(times)').") }
            limit = count
        }
        let db = try await Todo.openStore(arguments)
        let filter = TodoList.filter(pending: arguments.flag("pending"))
        let watching = Task { [limit] in
            var printed = 0
            for try await items in db.observe(filter) {
                // Unbuffered, so that a pipe (another program, a log) sees each list at once.
                let header = printed > 0 ? "\n--- changed at \(DueDate.describe(Date()))\n" : ""
                FileHandle.standardOutput.write(Data((header + TodoTable.render(TodoList.arranged(items).printable) + "\n").utf8))
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
