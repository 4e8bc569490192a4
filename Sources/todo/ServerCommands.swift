import CodableSQLite
import CodableSyncClient
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
///   is the last line printed (`todo account token NAME` gives another; `tokens` lists them,
///   `revoke` stops one, see ``accountUsage``).
/// - `todo serve --postgres URL --port P [--host H] [--retention DAYS]`: serves sync over HTTP
///   (and the protocol's OpenAPI document) until Ctrl-C, compacting hourly.
/// - `todo share LIST --with NAME [--read-only]` and `todo unshare LIST --with NAME`, with
///   `--server URL --token T`: share a list (and its tasks) with another account, or stop.
enum ServerCommands {
    /// The models `todo` syncs: its tasks, and the lists that group them.
    static let models: [any (Model & Sendable).Type] = [TodoItem.self, TaskList.self]

    static let accountUsage = """
        Usage (each with --postgres URL):
          todo account add NAME [--lifetime DAYS]              create an account; its token is the last line
          todo account token NAME [--label L] [--lifetime DAYS] another token (a new device)
          todo account tokens NAME                             list its tokens (never the tokens themselves)
          todo account revoke NAME TOKEN-ID (or --all)         stop accepting a token (or all of them)
        DAYS: 1 to 36500, or never (default: 90).
        """

    static func account(_ words: [String], _ arguments: Arguments) async throws {
        let shapes: [String: (words: Int, options: Set<String>)] = [
            "add": (2, ["lifetime"]), "token": (2, ["label", "lifetime"]), "tokens": (2, []), "revoke": (arguments.flag("all") ? 2 : 3, ["all"]),
        ]
        guard let command = words.first, let shape = shapes[command], words.count == shape.words else {
            throw TodoError(description: accountUsage)
        }
        try arguments.allowOnly(shape.options, for: "account \(command)")
        guard let url = try arguments.postgresURL() else {
            throw TodoError(description: """
                todo account needs the server's database: todo account \(words.joined(separator: " ")) --postgres URL \
                (or --postgres-file PATH, or TODO_POSTGRES_URL)
                """)
        }
        let account = words[1]
        let lifetime = try lifetime(arguments)
        #if Postgres
        try await withSyncServer(url) { server in
            do {
                switch command {
                case "add":
                    let token = try await server.addAccount(account, tokenLifetime: lifetime).token
                    print("Account \(account) created. Its devices sync with: todo sync --server URL --token TOKEN, with this token:")
                    print(token)
                case "token":
                    let token = try await server.issueToken(for: SyncAccount(account), label: arguments.value("label"), lifetime: lifetime)
                    print("Another token for \(account) (the others still work):")
                    print(token)
                case "tokens":
                    print(tokenTable(try await server.tokens(of: SyncAccount(account)), of: account))
                default:
                    if arguments.flag("all") {
                        try await server.revokeTokens(of: SyncAccount(account))
                        print("Every token of \(account) is revoked: its devices need a new one (todo account token \(account)).")
                    } else {
                        try await server.revokeToken(id: words[2], of: SyncAccount(account))
                        print("The token \(words[2]) of \(account) is revoked; its other tokens still work.")
                    }
                }
            } catch let error as SyncError {
                let hint = command == "revoke" && error.message.contains("no token") ? " (todo account tokens \(account) lists its tokens)" : ""
                throw TodoError(description: error.message + hint)
            }
        }
        #else
        _ = (url, account, lifetime)
        throw needsTrait("todo account", trait: "Postgres")
        #endif
    }

    /// `--lifetime DAYS` as a token lifetime: 90 days when absent, `nil` for `never`.
    private static func lifetime(_ arguments: Arguments) throws -> Duration? {
        guard let text = arguments.value("lifetime") else { return .seconds(90 * 86_400) }
        if text == "never" { return nil }
        guard let days = Int(text), (1...36_500).contains(days) else {
            throw TodoError(description: "--lifetime is a number of days from 1 to 36500, or never, not '\(text)'.")
        }
        return .seconds(days * 86_400)
    }

    #if Postgres
    /// The tokens as a table: id, label, created, expires, last used.
    static func tokenTable(_ tokens: [SyncTokenInfo], of account: String) -> String {
        guard !tokens.isEmpty else { return "\(account) has no tokens (todo account token \(account) issues one)." }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        let now = Date()
        let rows = [["ID", "LABEL", "CREATED (UTC)", "EXPIRES", "LAST USED"]] + tokens.map { token in
            [token.id, token.label?.escapingControlCharacters ?? "-", formatter.string(from: token.created),
             token.expires.map { (token.isExpired(at: now) ? "expired " : "") + formatter.string(from: $0) } ?? "never",
             token.lastUsed.map { formatter.string(from: $0) } ?? "never"]
        }
        let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n")
    }
    #endif

    static func serve(_ arguments: Arguments) async throws {
        guard let url = try arguments.postgresURL() else {
            throw TodoError(description: """
                todo serve needs the server's database: todo serve --postgres URL --port 8080 (or --postgres-file PATH, or TODO_POSTGRES_URL)
                """)
        }
        let portText = arguments.value("port") ?? "8080"
        guard let port = Int(portText), (0...65_535).contains(port) else {
            throw TodoError(description: "--port must be a number from 0 to 65535, not '\(portText)'.")
        }
        let host = arguments.value("host") ?? "127.0.0.1"
        let retentionText = arguments.value("retention") ?? "90"
        guard let retentionDays = Int(retentionText), (1...36_500).contains(retentionDays) else {
            throw TodoError(description: "--retention must be a number of days from 1 to 36500, not '\(retentionText)'.")
        }
        #if Server
        guard #available(macOS 14, iOS 17, tvOS 17, *) else { throw TodoError(description: "todo serve needs macOS 14 or later.") }
        try await withSyncServer(url) { server in
            let router = Router()
            router.addSyncRoutes(SyncHTTPEndpoint(server: server))
            let app = Application(
                router: router, server: .syncHTTP1, configuration: .init(address: .hostname(host, port: port), serverName: "todo"),
                onServerRunning: { channel in
                    let bound = channel.localAddress?.port ?? port
                    say("Serving sync on http://\(host):\(bound) (devices: todo sync --server http://\(host):\(bound) --token TOKEN). Ctrl-C stops.")
                })
            // Tombstones and the push ledger older than the retention are forgotten, hourly.
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { try await server.enforceRetention(.seconds(retentionDays * 86_400)) }
                group.addTask {
                    try await app.runService()
                    throw CancellationError()   // the server stopped: so does the compaction
                }
            }
            say("Stopped serving.")
        }
        #else
        _ = (url, port, host, retentionDays)
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
                print("The list \(list.name.escapingControlCharacters) is no longer shared with \(name.escapingControlCharacters); it leaves their devices at their next sync.")
            } else {
                let access: SyncAccess = arguments.flag("read-only") ? .read : .readWrite
                try await transport.share(list, with: SyncAccount(name), access: access)
                print("Shared the list \(list.name.escapingControlCharacters) (\(list.tasks.count) task\(list.tasks.count == 1 ? "" : "s")) with \(name.escapingControlCharacters)"
                      + (access == .read ? ", read-only." : ", who can change it too."))
            }
        } catch let error as SyncError {
            throw TodoError(description: error.message)
        } catch let error as HTTPSyncTransport.Failure {
            throw TodoError(description: "\(error)")
        }
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
