import CodableSQLite

/// The command line, parsed by hand: `todo` needs no argument-parsing package, so building it
/// builds nothing but CodableSQLite.
///
/// Grammar: `todo [options] [command] [arguments] [options]`, where the options `--database
/// PATH`, `--postgres URL` may come before or after the command, values are given as
/// `--name value` or `--name=value`, and `--` ends the options.
struct Arguments {
    /// The command's words that are not options, in order.
    private(set) var positional: [String] = []
    private var values: [String: String] = [:]
    private var flags: Set<String> = []

    /// The options that take a value, and the flags (no value), that any command accepts.
    static let valueOptions: Set<String> = ["database", "postgres", "due", "times", "list", "server", "token", "port", "host", "with"]
    static let flagOptions: Set<String> = ["pending", "live", "help", "read-only"]

    init(_ words: [String]) throws {
        var index = 0
        var optionsEnded = false
        while index < words.count {
            let word = words[index]
            index += 1
            if optionsEnded || !word.hasPrefix("-") || word == "-" {
                positional.append(word)
                continue
            }
            if word == "--" { optionsEnded = true; continue }
            if word == "-h" { flags.insert("help"); continue }
            guard word.hasPrefix("--") else {
                throw TodoError(description: "Unknown option '\(word)'. See todo --help.")
            }
            var name = String(word.dropFirst(2))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if Self.flagOptions.contains(name) {
                guard value == nil else { throw TodoError(description: "--\(name) takes no value.") }
                flags.insert(name)
            } else if Self.valueOptions.contains(name) {
                if value == nil {
                    guard index < words.count else { throw TodoError(description: "--\(name) needs a value. See todo --help.") }
                    value = words[index]
                    index += 1
                }
                guard values[name] == nil else { throw TodoError(description: "--\(name) is given twice.") }
                values[name] = value
            } else {
                throw TodoError(description: "Unknown option '--\(name)'. See todo --help.")
            }
        }
    }

    func value(_ name: String) -> String? { values[name] }
    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// Refuses options the command does not use (`todo add x --times 3`).
    func allowOnly(_ names: Set<String>, for command: String) throws {
        let given = Set(values.keys).union(flags).subtracting(["help"])
        if let extra = given.subtracting(names).subtracting(["database", "postgres"]).sorted().first {
            throw TodoError(description: "todo \(command) does not take --\(extra). See todo --help.")
        }
    }

    static let usage = """
        todo: a to-do list kept in SQLite with CodableSQLite (or on PostgreSQL).

        Usage:
          todo add TITLE [--due DATE] [--list LIST]
                                         Add a task (to the list LIST, made if new).
          todo list [--pending]          List tasks: pending first, by due date (the default command).
          todo done ID                   Mark a task as done.
          todo remove ID                 Delete a task.
          todo search WORDS…             Tasks whose titles have these words (the last may be the
                                         start of a word; case and accents ignored), best first.
          todo watch [--pending] [--times N]
                                         Print the list, and again whenever it changes (also when
                                         another todo or the sqlite3 tool changes it). Ctrl-C ends it.
          todo sync --server URL --token TOKEN [--live]
                                         Keep this list (the database file) in step with a sync
                                         server (todo serve), as the token's account: send this
                                         list's changes, receive the account's and what is shared
                                         with it. The file keeps working offline. --live: as
                                         changes happen, until Ctrl-C.
          todo sync --postgres URL [--live]
                                         The same, straight to a PostgreSQL server, without
                                         accounts (needs the Postgres trait, as --postgres does).
          todo share LIST --with ACCOUNT [--read-only] --server URL --token TOKEN
                                         Share a list (todo add … --list LIST) and its tasks with
                                         another account; todo unshare LIST --with ACCOUNT … ends it.

        The sync server (needs the Server trait: swift run --traits Server todo …):
          todo account add NAME --postgres URL
                                         Create an account; its token is the last line printed
                                         (todo account token NAME gives another).
          todo serve --postgres URL [--port P] [--host H]
                                         Serve sync over HTTP (default 127.0.0.1:8080) until Ctrl-C.

        Options (before or after the command):
          --database PATH                The database file (default: \(defaultDatabasePath)).
          --postgres URL                 Keep the list on this PostgreSQL server instead
                                         (postgres://user:password@host:port/database; needs a
                                         build with the trait: swift run --traits Postgres todo …).
          -h, --help                     Show this help.

        DATE: \(DueDate.accepted).
        ID: a task's id, or any unique prefix of it (see todo list).
        """

    static var defaultDatabasePath: String { SQLite.Database.Configuration().path }
}
