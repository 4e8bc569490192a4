import Foundation
import GRDB

/// Opens a GRDB database with the benchmark settings: a pool (WAL) for files, a queue in memory.
func openGRDB(path: String) throws -> any DatabaseWriter {
    var configuration = Configuration()
    configuration.prepareDatabase { db in
        try db.execute(sql: "PRAGMA synchronous = NORMAL")
    }
    let writer: any DatabaseWriter = path == ":memory:"
        ? try DatabaseQueue(configuration: configuration)
        : try DatabasePool(path: path, configuration: configuration)
    try writer.write { db in try db.execute(sql: Item.createTable) }
    return writer
}

/// GRDB 7.10 with a hand-written record: `init(row:)` and `encode(to:)` by column name.
final class GRDBHandWritten: Contender {
    private let writer: any DatabaseWriter

    init(path: String) throws {
        writer = try openGRDB(path: path)
    }

    struct Record: FetchableRecord, PersistableRecord {
        static let databaseTableName = "item"
        static let jsonEncoder = JSONEncoder()
        static let jsonDecoder = JSONDecoder()
        var item: Item

        init(_ item: Item) {
            self.item = item
        }

        init(row: Row) throws {
            let tags: String = row["tags"]
            let uuid: String = row["uuid"]
            guard let parsedUUID = UUID(uuidString: uuid) else { throw BenchmarkError.verification("bad uuid") }
            item = Item(
                id: row["id"], title: row["title"], note: row["note"], dueDate: row["dueDate"],
                isCompleted: row["isCompleted"], priority: row["priority"], score: row["score"], uuid: parsedUUID,
                tags: try Self.jsonDecoder.decode([String].self, from: Data(tags.utf8)), createdAt: row["createdAt"])
        }

        func encode(to container: inout PersistenceContainer) throws {
            container["id"] = item.id
            container["title"] = item.title
            container["note"] = item.note
            container["dueDate"] = item.dueDate
            container["isCompleted"] = item.isCompleted
            container["priority"] = item.priority
            container["score"] = item.score
            container["uuid"] = item.uuid.uuidString
            container["tags"] = String(decoding: try Self.jsonEncoder.encode(item.tags), as: UTF8.self)
            container["createdAt"] = item.createdAt
        }
    }

    func insert(_ items: [Item]) throws {
        try writer.write { db in
            for item in items { try Record(item).insert(db) }
        }
    }

    func fetchAll() throws -> [Item] {
        try writer.read { db in try Record.fetchAll(db, sql: Item.selectAll).map(\.item) }
    }

    func fetch(ids: [Int64]) throws -> [Item] {
        try writer.read { db in
            let statement = try db.cachedStatement(sql: Item.selectOne)
            return try ids.compactMap { try Record.fetchOne(statement, arguments: ["id": $0])?.item }
        }
    }

    func update(_ items: [Item]) throws {
        try writer.write { db in
            for item in items { try Record(item).update(db) }
        }
    }
}

extension Item: FetchableRecord, PersistableRecord {
    static let databaseTableName = "item"
}

/// GRDB 7.10 with the same `Codable` Item and GRDB's default Codable support.
final class GRDBCodable: Contender {
    private let writer: any DatabaseWriter

    init(path: String) throws {
        writer = try openGRDB(path: path)
    }

    func insert(_ items: [Item]) throws {
        try writer.write { db in
            for item in items { try item.insert(db) }
        }
    }

    func fetchAll() throws -> [Item] {
        try writer.read { db in try Item.fetchAll(db, sql: Item.selectAll) }
    }

    func fetch(ids: [Int64]) throws -> [Item] {
        try writer.read { db in
            let statement = try db.cachedStatement(sql: Item.selectOne)
            return try ids.compactMap { try Item.fetchOne(statement, arguments: ["id": $0]) }
        }
    }

    func update(_ items: [Item]) throws {
        try writer.write { db in
            for item in items { try item.update(db) }
        }
    }
}

extension GRDBCodable {
    /// H through GRDB's query interface:
    /// `Item.filter(Column("priority") > 2).order(Column("dueDate")).limit(50, offset:)`.
    func store(forQueries items: [Item]) throws {
        try insert(items)
        try writer.write { db in try db.execute(sql: QueryBenchmark.indexSQL) }
    }

    func page(_ page: Int) throws -> [Item] {
        try writer.read { db in
            try Item.filter(Column("priority") > 2).order(Column("dueDate"))
                .limit(QueryBenchmark.pageSize, offset: page * QueryBenchmark.pageSize).fetchAll(db)
        }
    }
}
