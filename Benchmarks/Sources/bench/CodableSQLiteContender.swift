import CodableSQLite
import Foundation

/// CodableSQLite through plain Codable: SQLite.Encoder and SQLite.Decoder with default settings.
final class CodableSQLiteContender: Contender {
    private let database: SQLite.Database
    private let encoder: SQLite.Encoder
    private let decoder: SQLite.Decoder

    init(path: String) throws {
        database = try SQLite.Database(path: path)  // files: WAL, synchronous=NORMAL by default
        try database.execute(raw: Item.createTable)
        encoder = SQLite.Encoder(database)
        decoder = SQLite.Decoder(database)
    }

    func insert(_ items: [Item]) throws {
        try encoder.encode(items, using: Item.insert)
    }

    func fetchAll() throws -> [Item] {
        try decoder.decode([Item].self, using: Item.selectAll)
    }

    func fetch(ids: [Int64]) throws -> [Item] {
        var items: [Item] = []
        items.reserveCapacity(ids.count)
        for id in ids {
            if let item = try decoder.decode(Item.self, using: Item.selectOne, arguments: ["id": .integer(id)]) {
                items.append(item)
            }
        }
        return items
    }

    func update(_ items: [Item]) throws {
        try encoder.encode(items, using: Item.update)
    }

    /// H with SQL written by hand: the same query as the model API's, through the Decoder.
    func store(forQueries items: [Item]) throws {
        try insert(items)
        try database.execute(raw: QueryBenchmark.indexSQL)
    }

    func page(_ page: Int) throws -> [Item] {
        try decoder.decode([Item].self, using: QueryBenchmark.pageSQL, arguments: ["offset": .integer(Int64(page * QueryBenchmark.pageSize))])
    }
}
