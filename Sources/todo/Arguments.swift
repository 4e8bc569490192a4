import CodableSQLite
import Foundation

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
    static let valueOptions: Set<String> = [
        "database", "postgres", "postgres-file", "due", "times", "list", "server", "token", "token-file", "port", "host", "with",
        "label", "lifetime", "retention",
    ]
    static let flagOptions: Set<String> = ["pending", "live", "help", "read-only", "allow-insecure-http", "all"]
    /// The options of the sync's way to the server (`todo sync`, `share`, `unshare`).
    static let serverOptions: Set<String> = ["server", "token", "token-file", "allow-insecure-http"]
    /// The environment, for the values an option may also come from.
    var environment = ProcessInfo.processInfo.environment

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

    /// The PostgreSQL server's URL: `--postgres URL`, or the first line of `--postgres-file PATH`,
    /// or else (without `--database` or `--server`) the environment's `TODO_POSTGRES_URL`; `nil`
    /// for none (the SQLite file). A file keeps the password out of the command line, which other
    /// users of the machine can read (`ps`). Every command that reads `--postgres` reads it here.
    ///
    /// ```swift
    /// if let url = try arguments.postgresURL() { … }
    /// ```
    func postgresURL() throws -> String? {
        if let url = try secret("postgres", file: "postgres-file", what: "the PostgreSQL URL") { return url }
        if values["database"] != nil || values["server"] != nil { return nil }
        return environment["TODO_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The sync server's URL: `--server URL`, or the environment's `TODO_SYNC_SERVER` when neither
    /// `--server` nor a PostgreSQL URL is given on the command line.
    func syncServer() -> String? {
        if let server = values["server"] { return server }
        if values["postgres"] != nil || values["postgres-file"] != nil { return nil }
        return environment["TODO_SYNC_SERVER"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The account's bearer token: `--token TOKEN`, the first line of `--token-file PATH`, or the
    /// environment's `TODO_SYNC_TOKEN`. (A token on the command line is visible to the machine's
    /// other users, in `ps`; a file or the environment is not.)
    func syncToken() throws -> String? {
        if let token = try secret("token", file: "token-file", what: "the token") { return token }
        return environment["TODO_SYNC_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `--name VALUE`, or the first line (trimmed) of the file `--file PATH`; not both.
    private func secret(_ name: String, file: String, what: String) throws -> String? {
        guard let path = values[file] else { return values[name] }
        guard values[name] == nil else { throw TodoError(description: "Give --\(name) or --\(file), not both.") }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw TodoError(description: "Cannot read \(what) from --\(file) \(path): \(error.localizedDescription)")
        }
        let line = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        let value = line.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !value.isEmpty else { throw TodoError(description: "The first line of \(path) (--\(file)) is empty: it must be \(what).") }
        return value
    }

    /// Refuses options the command does not use (`todo add x --times 3`).
    func allowOnly(_ names: Set<String>, for command: String) throws {
        let given = Set(values.keys).union(flags).subtracting(["help"])
        if let extra = given.subtracting(names).subtracting(["database", "postgres", "postgres-file"]).sorted().first {
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
                                         --token-file PATH (its first line) or TODO_SYNC_TOKEN
                                         instead of --token keeps the token out of ps; the
                                         server may come from TODO_SYNC_SERVER. The URL is
                                         https://, or http:// to this machine only, unless
                                         --allow-insecure-http (the token goes in clear).
          todo sync --postgres URL [--live]
                                         The same, straight to a PostgreSQL server, without
                                         accounts (needs the Postgres trait, as --postgres does).
          todo share LIST --with ACCOUNT [--read-only] --server URL --token TOKEN
                                         Share a list (todo add … --list LIST) and its tasks with
                                         another account; todo unshare LIST --with ACCOUNT … ends it.

        The sync server (needs the Server trait: swift run --traits Server todo …):
          todo account add NAME [--lifetime DAYS|never] --postgres URL
                                         Create an account; its token is the last line printed
                                         (tokens last 90 days unless told).
          todo account token NAME [--label L] [--lifetime DAYS|never] --postgres URL
                                         Another token (a new device).
          todo account tokens NAME --postgres URL
                                         List its tokens: id, label, created, expires, last used.
          todo account revoke NAME TOKEN-ID|--all --postgres URL
                                         Stop accepting a token (or every token of the account).
          todo serve --postgres URL [--port P] [--host H] [--retention DAYS]
                                         Serve sync over HTTP (default 127.0.0.1:8080) until Ctrl-C.
                                         Several on one database serve the same devices. Deletes
                                         and answered pushes are kept DAYS (default 90); a device
                                         offline longer receives everything again. The protocol's
                                         description: GET /sync/openapi.yaml.

        Options (before or after the command):
          --database PATH                The database file (default: \(defaultDatabasePath)).
          --postgres URL                 Keep the list on this PostgreSQL server instead
                                         (postgres://user:password@host:port/database; needs a
                                         build with the trait: swift run --traits Postgres todo …).
          --postgres-file PATH           The same, from the file's first line (or give the URL in
                                         TODO_POSTGRES_URL): no password on the command line.
          -h, --help                     Show this help.

        DATE: \(DueDate.accepted).
        ID: a task's id, or any unique prefix of it (see todo list).
        """

    static var defaultDatabasePath: String { SQLite.Database.Configuration().path }
}
