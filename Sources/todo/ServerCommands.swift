import CodableSQLite
import Foundation
#if Postgres
import CodablePostgres
import CodableSync
#endif
#if Server
import CodableSyncHummingbird
import Hummingbird
#endif

/// The sync server's side of `todo`, and sharing:
///
/// - `todo account add NAME --postgres URL`: an account on the server's database; its bearer token
///   is the last line printed (`todo account token NAME` gives another).
/// - `todo serve --postgres URL --port P [--host H]`: serves sync over HTTP until Ctrl-C.
/// - `todo share LIST --with NAME [--read-only]` and `todo unshare LIST --with NAME`, with
///   `--server URL --token T`: share a list (and its tasks) with another account, or stop.
enum ServerCommands {
    /// The models `todo` syncs: its tasks, and the lists that group them.
    #if Postgres
    static let models: [any (Model & Sendable).Type] = [TodoItem.self, TaskList.self]
    #endif

    static func account(_ words: [String], _ arguments: Arguments) async throws {
        guard words.count == 2, ["add", "token"].contains(words[0]) else {
            throw TodoError(description: "Usage: todo account add NAME --postgres URL (or todo account token NAME --postgres URL).")
        }
        guard let url = arguments.value("postgres") else {
            throw TodoError(description: "todo account needs the server's database: todo account \(words[0]) \(words[1]) --postgres URL")
        }
        #if Postgres
        try await withSyncServer(url) { server in
            let token: String
            do {
                if words[0] == "add" {
                    token = try await server.addAccount(words[1]).token
                    print("Account \(words[1]) created. Its devices sync with: todo sync --server URL --token TOKEN, with this token:")
                } else {
                    token = try await server.issueToken(for: SyncAccount(words[1]))
                    print("Another token for \(words[1]) (the others still work):")
                }
            } catch let error as SQLite.Sync.Error {
                throw TodoError(description: error.message)
            }
            print(token)
        }
        #else
        _ = url
        throw needsTrait("todo account", trait: "Postgres")
        #endif
    }

    static func serve(_ arguments: Arguments) async throws {
        guard let url = arguments.value("postgres") else {
            throw TodoError(description: "todo serve needs the server's database: todo serve --postgres URL --port 8080")
        }
        let portText = arguments.value("port") ?? "8080"
        guard let port = Int(portText), (0...65_535).contains(port) else {
            throw TodoError(description: "--port must be a number from 0 to 65535, not '\(portText)'.")
        }
        let host = arguments.value("host") ?? "127.0.0.1"
        #if Server
        guard #available(macOS 14, iOS 17, tvOS 17, *) else { throw TodoError(description: "todo serve needs macOS 14 or later.") }
        try await withSyncServer(url) { server in
            let router = Router()
            router.addSyncRoutes(SyncHTTPEndpoint(server: server))
            let app = Application(
                router: router, configuration: .init(address: .hostname(host, port: port), serverName: "todo"),
                onServerRunning: { channel in
                    let bound = channel.localAddress?.port ?? port
                    say("Serving sync on http://\(host):\(bound) (devices: todo sync --server http://\(host):\(bound) --token TOKEN). Ctrl-C stops.")
                })
            try await app.runService()
            say("Stopped serving.")
        }
        #else
        _ = (url, port, host)
        throw needsTrait("todo serve", trait: "Server")
        #endif
    }

    static func share(_ words: [String], revoke: Bool, _ arguments: Arguments) async throws {
        let command = revoke ? "unshare" : "share"
        // `todo share LIST --with ACCOUNT`, or `todo share LIST ACCOUNT`.
        let given = arguments.value("with") ?? (words.count == 2 ? words[1] : nil)
        guard let name = given, words.count == (arguments.value("with") == nil ? 2 : 1) else {
            throw TodoError(description: "Usage: todo \(command) LIST --with ACCOUNT\(revoke ? "" : " [--read-only]") --server URL --token TOKEN")
        }
        #if Postgres
        let local = try Todo.openSQLite(arguments)
        guard let list = try await TaskList.named(words[0], in: local) else {
            throw TodoError(description: "There is no list named '\(words[0])' here. Add a task to it first: todo add TITLE --list \(words[0])")
        }
        let transport = try SyncCommand.transport(arguments)
        // The server must have the list (and know it is this account's) before it can be shared.
        try await SyncCommand.once(try SQLite.Sync(local: local, transport: transport, models: models), local: local, quiet: true)
        do {
            if revoke {
                try await transport.revokeShare(list, from: SyncAccount(name))
                print("The list \(list.name) is no longer shared with \(name); it leaves their devices at their next sync.")
            } else {
                let access: SyncAccess = arguments.flag("read-only") ? .read : .readWrite
                try await transport.share(list, with: SyncAccount(name), access: access)
                print("Shared the list \(list.name) (\(list.tasks.count) task\(list.tasks.count == 1 ? "" : "s")) with \(name)"
                      + (access == .read ? ", read-only." : ", who can change it too."))
            }
        } catch let error as SQLite.Sync.Error {
            throw TodoError(description: error.message)
        } catch let error as HTTPSyncTransport.Failure {
            throw TodoError(description: "\(error)")
        }
        #else
        _ = name
        throw needsTrait("todo \(command)", trait: "Postgres")
        #endif
    }

    #if Postgres
    private static func withSyncServer(_ url: String, _ body: (Postgres.SyncServer) async throws -> Void) async throws {
        try await withPostgres(url, unreachable: "Cannot reach the server's database") { database in
            try await body(try Postgres.SyncServer(database: database, models: models))
        }
    }

    /// Runs `body` on the PostgreSQL server at `url`, closed after it; a server it cannot reach
    /// is a `TodoError` starting with `unreachable`.
    static func withPostgres(_ url: String, unreachable: String, _ body: (Postgres.Database) async throws -> Void) async throws {
        let database: Postgres.Database
        do {
            database = try await Postgres.Database(url: url)
        } catch let error as Postgres.Error {
            throw TodoError(description: "\(unreachable): \(error)")
        }
        do {
            try await body(database)
        } catch {
            await database.close()
            throw error
        }
        await database.close()
    }
    #endif

    static func needsTrait(_ command: String, trait: String) -> TodoError {
        TodoError(description: "\(command) needs the \(trait) trait, which this build leaves out. Build with it: swift run --traits \(trait) todo …")
    }

    /// Unbuffered, so that a pipe (another program, a log) sees each line at once.
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
