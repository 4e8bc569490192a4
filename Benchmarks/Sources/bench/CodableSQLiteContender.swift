import CodableSQLite
import Foundation

/// CodableSQLite's SQLite.Encoder and SQLite.Decoder with default settings: through plain Codable
/// for `Item`, through the generated coder for `GeneratedItem` (@RowCodable).
final class CodableSQLiteContender<Record: ItemRecord>: Contender {
    private let database: SQLite.Database
    private let encoder: SQLite.Encoder
    private let decoder: SQLite.Decoder

    init(path: String) throws {
        database = try SQLite.Database(path: path)  // files: WAL, synchronous=NORMAL by default
        try database.execute(raw: Item.createTable)
        encoder = SQLite.Encoder(database)
        decoder = SQLite.Decoder(database)
    }

    func insert(_ items: [Record]) throws {
        try encoder.encode(items, using: Item.insert)
    }

    func fetchAll() throws -> [Record] {
        try decoder.decode([Record].self, using: Item.selectAll)
    }

    func fetch(ids: [Int64]) throws -> [Record] {
        var items: [Record] = []
        items.reserveCapacity(ids.count)
        for id in ids {
            if let item = try decoder.decode(Record.self, using: Item.selectOne, arguments: ["id": .integer(id)]) {
                items.append(item)
            }
        }
        return items
    }

    func update(_ items: [Record]) throws {
        try encoder.encode(items, using: Item.update)
    }

    /// H with SQL written by hand: the same query as the model API's, through the Decoder.
    func store(forQueries items: [Record]) throws {
        try insert(items)
        try database.execute(raw: QueryBenchmark.indexSQL)
    }

    func page(_ page: Int) throws -> [Record] {
        try decoder.decode([Record].self, using: QueryBenchmark.pageSQL, arguments: ["offset": .integer(Int64(page * QueryBenchmark.pageSize))])
    }
}
