import CodableSQLite
import CodableSyncClient
import Dispatch
import Foundation
#if Postgres
import CodableSync
#endif

/// `todo sync --server URL --token T` (through `todo serve`, as an account) or `todo sync
/// --postgres URL` (straight to a PostgreSQL server): keeps this machine's list (its SQLite
/// file) in step with the server, offline first: `add`, `done` and `remove` keep working on the
/// file without a network, and a sync pushes them and pulls the rest. Two `todo`s on two files
/// (two machines) converge through one server. `--live` keeps syncing as changes happen, until
/// Ctrl-C.
///
/// The token may come from `--token-file PATH` or `TODO_SYNC_TOKEN` (out of `ps`), the server
/// from `TODO_SYNC_SERVER`, the PostgreSQL URL from `--postgres-file PATH` or
/// `TODO_POSTGRES_URL`. What it prints of synced text (titles, the server's messages) has its
/// control characters escaped.
enum SyncCommand {
    static func run(_ arguments: Arguments) async throws {
        let postgresURL = try arguments.postgresURL(), serverURL = arguments.syncServer()
        if postgresURL != nil && serverURL != nil { throw TodoError(description: "Give --server or --postgres (or TODO_SYNC_SERVER or TODO_POSTGRES_URL), not both.") }
        guard let url = postgresURL ?? serverURL else {
            throw TodoError(description: "todo sync needs the server to sync with: todo sync --server http://HOST:PORT --token TOKEN (or --postgres URL)")
        }
        let local = try Todo.openSQLite(arguments)
        func run(_ sync: SQLite.Sync) async throws {
            if arguments.flag("live") {
                try await live(sync, local: local)
            } else {
                try await once(sync, local: local)
            }
        }
        if serverURL != nil {
            try await run(SQLite.Sync(local: local, transport: try transport(arguments), models: ServerCommands.models))
            return
        }
        // Straight to PostgreSQL: the server's side runs in this process (the Postgres trait).
        #if Postgres
        try await ServerCommands.withPostgres(url, unreachable: "Cannot reach the sync server") { server in
            try await run(SQLite.Sync(local: local, server: server, models: ServerCommands.models))
        }
        #else
        _ = url
        throw ServerCommands.needsTrait("todo sync --postgres", trait: "Postgres")
        #endif
    }

    /// The way to `todo serve` that `--server URL --token T` name (the routes are under `/sync`;
    /// `--token-file`, `TODO_SYNC_TOKEN` and `TODO_SYNC_SERVER` too, and `--allow-insecure-http`).
    static func transport(_ arguments: Arguments) throws -> HTTPSyncTransport {
        guard let text = arguments.syncServer() else {
            throw TodoError(description: "This needs the sync server: --server http://HOST:PORT --token TOKEN (or TODO_SYNC_SERVER)")
        }
        guard let token = try arguments.syncToken(), !token.isEmpty else {
            throw TodoError(description: """
                --server needs the account's token: --token TOKEN, --token-file PATH or TODO_SYNC_TOKEN (todo account add NAME prints it)
                """)
        }
        guard var url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil else {
            throw TodoError(description: "--server must be an http:// or https:// URL, such as http://localhost:8080, not '\(text)'.")
        }
        if url.path.isEmpty || url.path == "/" { url.appendPathComponent("sync") }
        return HTTPSyncTransport(server: url, token: token, allowsInsecureHTTP: arguments.flag("allow-insecure-http"))
    }

    /// One round; says what it carried, and prints the list.
    static func once(_ sync: SQLite.Sync, local: SQLite.Database, quiet: Bool = false) async throws {
        let states = sync.states
        do {
            try await sync.sync()
        } catch let error as HTTPSyncTransport.Failure {
            throw TodoError(description: "The sync did not finish (your changes are kept and go with the next one): \(error)")
        } catch let error as SyncError where error.code == .unauthorized {
            throw TodoError(description: "\(error.message.prefix(1).uppercased())\(error.message.dropFirst()). Ask for a new token (todo account token NAME).")
        } catch let error as SyncError where error.code == .invalidAnswer || error.code == .invalidArgument {
            throw TodoError(description: "The sync did not finish (your changes are kept): \(error.message)")
        } catch {
            #if Postgres
            if let error = error as? Postgres.Error {
                throw TodoError(description: "The sync did not finish (your changes are kept and go with the next one): \(error)")
            }
            #endif
            throw error
        }
        guard !quiet else { return }
        var pushed = 0, pulled = 0
        for await state in states {
            switch state {
            case .pushing(let count): pushed += count
            case .pulling(let count): pulled += count
            case .conflict(let conflict): print(describe(conflict))
            case .undecodable(let row): print("Kept aside, this version of todo cannot read it: \(row)".escapingControlCharacters)
            case .refused(let change): print(describe(change))
            case .startingOver(let why): print(startingOver(why))
            case .linkDropped, .offline, .idle: break
            }
            if case .idle = state { break }
        }
        print("Synced: \(pushed) change\(pushed == 1 ? "" : "s") sent, \(pulled) received.")
        print()
        print(TodoTable.render(try await TodoList.items(in: local).printable))
    }

    /// Syncs as changes happen, printing what each round did, until Ctrl-C.
    private static func live(_ sync: SQLite.Sync, local: SQLite.Database) async throws {
        let states = sync.states
        let reporting = Task {
            for await state in states {
                switch state {
                case .pushing(let count): ServerCommands.say("Sending \(count) change\(count == 1 ? "" : "s")…")
                case .pulling(let count): ServerCommands.say("Receiving \(count) change\(count == 1 ? "" : "s")…")
                case .conflict(let conflict): ServerCommands.say(describe(conflict))
                case .undecodable(let row): ServerCommands.say("Kept aside, this version of todo cannot read it: \(row)".escapingControlCharacters)
                case .refused(let change): ServerCommands.say(describe(change))
                case .startingOver(let why): ServerCommands.say(startingOver(why))
                case .linkDropped: break
                case .offline(let error): ServerCommands.say("Offline (trying again): \(error)".escapingControlCharacters)
                case .idle: break
                }
            }
        }
        let running = Task { try await sync.run() }
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        interrupt.setEventHandler { running.cancel() }
        interrupt.resume()
        defer { interrupt.cancel() }
        ServerCommands.say("Syncing \(local.path) as changes happen; Ctrl-C ends it.")
        _ = await running.result
        reporting.cancel()
        print("\nStopped syncing.")
    }

    private static func startingOver(_ why: SQLite.Sync.StartingOver) -> String {
        switch why {
        case .serverRestored: "The server was restored from a backup: receiving everything again, and sending what it lost."
        case .offlineTooLong: "Offline longer than the server keeps deletes: receiving everything again."
        case .forgotten: "The server no longer remembers this copy's pushes: receiving everything again, as a new device."
        }
    }

    private static func describe(_ refused: SQLite.Sync.RefusedChange) -> String {
        "The server refused your change of \(TodoTable.shortID(refused.id)) (\(refused.reason)); it stays here: \(refused.message)"
            .escapingControlCharacters
    }

    private static func describe(_ conflict: SQLite.Sync.Conflict) -> String {
        let id = TodoTable.shortID(conflict.id).escapingControlCharacters
        if conflict.lostHere { return "Conflict on \(id): the server kept it (other tasks need it)." }
        guard let lost = conflict.losingValue as? TodoItem else {
            if conflict.losingJSON != nil { return "Conflict on \(id): your version replaced one this version of todo cannot read." }
            return "Conflict on \(id): it was deleted elsewhere; your version is kept."
        }
        return "Conflict on \(id): your version replaced \"\(lost.title.escapingControlCharacters)\" from elsewhere."
    }
}
