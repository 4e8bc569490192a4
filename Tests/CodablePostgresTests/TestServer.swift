#if Postgres
import Foundation
import Testing
@testable import CodablePostgres

/// A throwaway PostgreSQL server for the tests, started on first use when the server binaries
/// are installed: `initdb` into a temporary folder (as the unprivileged user `nobody` when the
/// tests run as root, since PostgreSQL refuses to run as root), password authentication, a free
/// port on 127.0.0.1. A watcher process stops it and removes the folder when the tests exit.
/// Each test gets a database of its own, so tests run in parallel.
actor TestServer {
    static let shared = TestServer()

    /// Whether commits wait for their WAL to reach the operating system: off for the shared server
    /// (speed), on for a server that is restarted by a test (a commit must survive a crash of
    /// the server, though not of the machine: fsync stays off).
    private let durableCommits: Bool
    /// How to start and stop the server once launched.
    private var control: (start: [String], stop: [String], isReady: [String], log: String)?

    /// A server of the tests' own; `durableCommits` for one a test restarts.
    init(durableCommits: Bool = false) {
        self.durableCommits = durableCommits
    }

    /// Whether the tests run under a sanitizer, where everything (password authentication of a new
    /// connection included) is several times slower: latency bounds allow for it.
    static var isSanitized: Bool { Backend.isSanitized }

    private var started: Result<String, Unavailable>?
    private var admin: Postgres.Database?

    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    /// Whether a server runs (starting it if needed); the reason it does not is printed once.
    var isAvailable: Bool {
        get async {
            if case .success = await start() { return true }
            return false
        }
    }

    /// `postgres://postgres:secret@127.0.0.1:PORT/`, or why there is no server.
    func start() async -> Result<String, Unavailable> {
        if let started { return started }
        let result: Result<String, Unavailable>
        do {
            result = .success(try await launch())
        } catch let error as Unavailable {
            print("PostgreSQL tests skipped: \(error)")
            result = .failure(error)
        } catch {
            print("PostgreSQL tests skipped: \(error)")
            result = .failure(Unavailable(description: "\(error)"))
        }
        started = result
        return result
    }

    /// The URL of a new, empty database on the server.
    func freshDatabaseURL() async throws -> String {
        let base = try await start().get()
        if admin == nil { admin = try await Postgres.Database(url: base + "postgres?sslmode=disable") }
        let name = "test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await admin?.execute("CREATE DATABASE \(name)")
        return base + name + "?sslmode=disable"
    }

    /// The URL of a new database that is a copy of the one at `url` (as a dump restored from it
    /// would be: another database, with its data). Nothing may be connected to the original.
    func copyOfDatabase(at url: String) async throws -> String {
        let base = try await start().get()
        guard let name = url.dropFirst(base.count).split(separator: "?").first, url.hasPrefix(base) else {
            throw Unavailable(description: "\(url) is not a database of this server")
        }
        let copy = "test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await admin?.execute("CREATE DATABASE \(copy) TEMPLATE \(name)")
        return base + copy + "?sslmode=disable"
    }

    /// A connection to a new, empty database.
    func freshDatabase() async throws -> Postgres.Database {
        try await Postgres.Database(url: try await freshDatabaseURL())
    }

    private func launch() async throws -> String {
        guard let bin = Self.serverBinaries() else {
            throw Unavailable(description: "the PostgreSQL server binaries (initdb, pg_ctl) are not installed; install the postgresql package (.ci/run does)")
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("codablepostgres-\(getpid())-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "secret\n".write(toFile: folder + "/password", atomically: true, encoding: .utf8)
        var asServerUser: [String] = []
        if getuid() == 0 {
            _ = try await Self.run(["/bin/chown", "-R", "nobody:nogroup", folder])
            asServerUser = ["/usr/sbin/runuser", "-u", "nobody", "--"]
        }
        let port = try Self.freePort()
        let initdb = try await Self.run(asServerUser + [
            bin + "/initdb", "-D", folder + "/data", "-U", "postgres", "--pwfile=" + folder + "/password",
            "--auth=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync",
        ])
        guard initdb.status == 0 else { throw Unavailable(description: "initdb failed: \(initdb.output)") }
        let options = "-p \(port) -c listen_addresses=127.0.0.1 -k \(folder) -c fsync=off "
            + (durableCommits ? "" : "-c synchronous_commit=off ") + "-c full_page_writes=off -c max_connections=300"
        let pgctl = asServerUser + [bin + "/pg_ctl", "-D", folder + "/data"]
        control = (
            start: pgctl + ["-l", folder + "/server.log", "-o", options, "start"], stop: pgctl + ["stop"],
            isReady: [bin + "/pg_isready", "-q", "-h", "127.0.0.1", "-p", "\(port)"], log: folder + "/server.log")
        try await startServer()
        // Stops the server and removes its folder once this test process has exited.
        let stop = (pgctl + ["stop", "-m", "immediate"]).joined(separator: " ")
        let watcher = Process()
        watcher.executableURL = URL(fileURLWithPath: "/usr/bin/setsid")
        watcher.arguments = ["/bin/sh", "-c", "while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done; \(stop) >/dev/null 2>&1; rm -rf \(folder)"]
        watcher.standardOutput = FileHandle.nullDevice
        watcher.standardError = FileHandle.nullDevice
        try watcher.run()
        return "postgres://postgres:secret@127.0.0.1:\(port)/"
    }

    /// Starts the launched server and waits until it accepts connections.
    private func startServer() async throws {
        guard let control else { throw Unavailable(description: "the server was never launched") }
        // Not waited for: the server it starts inherits the descriptors Foundation watches for the
        // end of a child process, so pg_ctl would never seem to end. pg_isready says when it is up.
        let pgctl = Process()
        pgctl.executableURL = URL(fileURLWithPath: control.start[0])
        pgctl.arguments = Array(control.start.dropFirst())
        pgctl.standardOutput = FileHandle.nullDevice
        pgctl.standardError = FileHandle.nullDevice
        try pgctl.run()
        var ready = false
        for _ in 0..<300 where !ready {
            try await Task.sleep(for: .milliseconds(100))
            ready = try await Self.run(control.isReady).status == 0
        }
        guard ready else {
            let log = (try? String(contentsOfFile: control.log, encoding: .utf8)) ?? ""
            throw Unavailable(description: "the server did not start within 30 seconds: \(log)")
        }
    }

    /// Stops the server (`fast`: ending sessions and rolling back their transactions, as an
    /// administrator's restart does; `immediate`: as a crash, recovering from the WAL on start)
    /// and starts it again on the same port; returns once it accepts connections.
    func restart(mode: String) async throws {
        guard let control else { throw Unavailable(description: "the server was never launched") }
        let stopped = try await Self.run(control.stop + ["-m", mode])
        guard stopped.status == 0 else { throw Unavailable(description: "pg_ctl stop failed: \(stopped.output)") }
        try await startServer()
    }

    /// The `postgres-worker` executable (a second app instance), built next to the tests.
    static var workerBinary: String {
        let worker = Bundle.main.bundleURL.appendingPathComponent("postgres-worker").path
        return FileManager.default.isExecutableFile(atPath: worker) ? worker
            : URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("postgres-worker").path
    }

    /// The folder of `initdb`, `pg_ctl` and `pg_isready`: on PATH, or Debian's /usr/lib/postgresql/<version>/bin.
    static func serverBinaries() -> String? {
        let fileManager = FileManager.default
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        where fileManager.isExecutableFile(atPath: folder + "/initdb") {
            // /usr/local/bin/initdb may be a link into the folder that also has pg_ctl and pg_isready.
            let real = URL(fileURLWithPath: folder + "/initdb").resolvingSymlinksInPath().deletingLastPathComponent().path
            if fileManager.isExecutableFile(atPath: real + "/pg_ctl"), fileManager.isExecutableFile(atPath: real + "/pg_isready") { return real }
        }
        let versions = (try? fileManager.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let folder = "/usr/lib/postgresql/\(version)/bin"
            if fileManager.isExecutableFile(atPath: folder + "/initdb") { return folder }
        }
        return nil
    }

    /// A port nobody listens on now.
    static func freePort() throws -> Int {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Unavailable(description: "no socket for finding a free port") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound else { throw Unavailable(description: "cannot bind a socket on 127.0.0.1") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Runs a program to its end without blocking a thread: its status and output.
    static func run(_ arguments: [String], environment: [String: String]? = nil) async throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        if let environment { process.environment = environment }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("codablepostgres-out-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { process.terminationHandler = nil; continuation.resume(throwing: error) }
        }
        try? handle.close()
        // FileHandle rather than String(contentsOf:), whose Foundation buffer LeakSanitizer reports.
        let reader = try FileHandle(forReadingFrom: output)
        defer { try? reader.close() }
        return (status, String(decoding: (try reader.readToEnd()) ?? Data(), as: UTF8.self))
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only when a throwaway PostgreSQL server could be started; otherwise it is
    /// reported as skipped, with the reason.
    static var needsPostgres: ConditionTrait {
        .enabled("needs the PostgreSQL server binaries (initdb, pg_ctl); install the postgresql package") {
            await TestServer.shared.isAvailable
        }
    }
}
#endif
