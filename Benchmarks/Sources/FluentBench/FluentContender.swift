#if Fluent
internal import FluentKit
internal import FluentSQLiteDriver
internal import Foundation
internal import SQLKit

// A module of its own: fluent-sqlite-driver brings sqlite-nio's SQLite, whose header disagrees
// with the system's (CodableSQLite's and GRDB's, which `bench` imports) on FTS5's structs, and
// one Swift module cannot see both. Built with library evolution, so that `bench` loads nothing
// of what this module imports (internally); its interface names only the standard library.

/// Fluent 1.57 with fluent-sqlite-driver 4.9 (its own SQLite, through SQLiteNIO): the ORM
/// server-side Swift developers use, on the same record through its model API and query builder.
/// One event loop and one connection, WAL and synchronous=NORMAL for files, like everyone else.
public final class FluentContender {
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let threadPool = NIOThreadPool(numberOfThreads: 1)
    private let databases: Databases
    private let db: any FluentKit.Database

    public init(path: String) throws {
        threadPool.start()
        databases = Databases(threadPool: threadPool, on: group)
        let storage: SQLiteConfiguration.Storage = path == ":memory:" ? .memory : .file(path: path)
        databases.use(.sqlite(SQLiteConfiguration(storage: storage, enableForeignKeys: false), sqlLogLevel: nil), as: .sqlite)
        guard let db = databases.database(logger: Logger(label: "bench"), on: group.any()) else {
            throw FluentBenchError("no database")
        }
        self.db = db
        try blocking { [db] in
            if path != ":memory:", let sql = db as? any SQLDatabase {
                try await sql.raw("PRAGMA journal_mode = WAL").run()
                try await sql.raw("PRAGMA synchronous = NORMAL").run()
            }
            try await FluentItem.createTable(on: db)
        }
    }

    deinit {
        databases.shutdown()
        try? threadPool.syncShutdownGracefully()
        try? group.syncShutdownGracefully()
    }

    public func insert(_ items: [FluentRecord]) throws {
        // Fluent creates an array of models with one INSERT; 1,000 rows keep it under SQLite's bound-value limit.
        try blocking { [db] in
            try await db.transaction { tx in
                for start in stride(from: 0, to: items.count, by: 1_000) {
                    try await items[start..<min(start + 1_000, items.count)].map(FluentItem.init).create(on: tx)
                }
            }
        }
    }

    public func fetchAll() throws -> [FluentRecord] {
        try blocking { [db] in try await FluentItem.query(on: db).sort(\.$id).all().map(\.record) }
    }

    public func fetch(ids: [Int64]) throws -> [FluentRecord] {
        try blocking { [db] in
            var items: [FluentRecord] = []
            items.reserveCapacity(ids.count)
            for id in ids { if let model = try await FluentItem.find(id, on: db) { items.append(model.record) } }
            return items
        }
    }

    public func update(_ items: [FluentRecord]) throws {
        // Fluent updates one model per statement; a model it did not fetch is marked as stored.
        try blocking { [db] in
            try await db.transaction { tx in
                for record in items {
                    let model = FluentItem(record)
                    model.$id.exists = true
                    try await model.update(on: tx)
                }
            }
        }
    }
}

extension FluentContender {
    /// Stores the items and scenario H's index on (dueDate, priority).
    public func store(forQueries items: [FluentRecord]) throws {
        try insert(items)
        try blocking { [db] in
            guard let sql = db as? any SQLDatabase else { throw FluentBenchError("no SQL database") }
            try await sql.create(index: "fluent_item_dueDate_priority").on(FluentItem.schema).column("dueDate").column("priority").run()
        }
    }

    /// Page `page` (0-based) of `size` items with priority > 2, by dueDate.
    public func page(_ page: Int, size: Int) throws -> [FluentRecord] {
        try blocking { [db] in
            try await FluentItem.query(on: db).filter(\.$priority > 2).sort(\.$dueDate)
                .range(page * size..<(page + 1) * size).all().map(\.record)
        }
    }
}

/// Runs async work to completion for the synchronous benchmark loop. The caller is the main
/// thread, never a thread of Swift's cooperative pool, so blocking it cannot starve the work.
private func blocking<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
    let done = DispatchSemaphore(value: 0)
    let box = ResultBox<T>()
    Task {
        do { box.result = .success(try await work()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    guard let result = box.result else { throw FluentBenchError("async work ended without a result") }
    return try result.get()
}

/// What went wrong in the Fluent contender.
public struct FluentBenchError: Error, CustomStringConvertible {
    public let description: String
    init(_ message: String) { description = "Fluent: \(message)" }
}

private final class ResultBox<T>: @unchecked Sendable {  // written by the task before it signals, read after the wait
    var result: Result<T, any Error>?
}
#endif
