import CodableSQLite
import Foundation

extension Item: Model {}

/// Scenario E: the same work through the model API, no SQL written: the table comes from the type.
final class CodableSQLiteModelsContender: Contender {
    private let database: SQLite.Database

    init(path: String) throws {
        database = try SQLite.Database(path: path)
    }

    func insert(_ items: [Item]) throws {
        try database.save(items)
    }

    func fetchAll() throws -> [Item] {
        try database.get(Item.self)
    }

    func fetch(ids: [Int64]) throws -> [Item] {
        var items: [Item] = []
        items.reserveCapacity(ids.count)
        for id in ids {
            if let item = try database.get(Item.self, id: id) { items.append(item) }
        }
        return items
    }

    func update(_ items: [Item]) throws {
        try database.save(items)
    }
}
