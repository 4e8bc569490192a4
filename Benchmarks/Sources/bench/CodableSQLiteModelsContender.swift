import CodableSQLite
import Foundation

extension Item: Model {}

/// Scenario E: the same work through the model API, no SQL written: the table comes from the type.
final class CodableSQLiteModelsContender: Contender {
    private let database: SQLite.Database

    init(path: String) throws {
        database = try SQLite.Database(path: path)
    }

    init(database: SQLite.Database) {
        self.database = database
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

extension CodableSQLiteModelsContender {
    /// H through the model API: `db.get(with: Filter(…).sort(by:).limit(_:page:))`. The index is
    /// made with SQL on the model's table: declaring `indexes: [.index(\.dueDate, \.priority)]`
    /// makes the same one, but `Item`'s conformance is shared with E, whose writes must not pay for it.
    func store(forQueries items: [Item]) throws {
        try insert(items)
        try database.execute(raw: QueryBenchmark.indexSQL(table: Item.tableName))
    }

    func page(_ page: Int) throws -> [Item] {
        try database.get(with: Filter(\Item.priority, is: .greater(than: 2)).sort(by: \.dueDate)
            .limit(QueryBenchmark.pageSize, page: page + 1))
    }
}

/// H through Foundation's `#Predicate` and `SortDescriptor` (`Filter(_:sortBy:)`), on the same
/// table and index as the model API's contender: the translation's cost against `Filter`'s.
final class CodableSQLitePredicateContender {
    private let models: CodableSQLiteModelsContender
    private let database: SQLite.Database

    init(path: String) throws {
        database = try SQLite.Database(path: path)
        models = CodableSQLiteModelsContender(database: database)
    }

    func store(forQueries items: [Item]) throws {
        try models.store(forQueries: items)
    }

    func page(_ page: Int) throws -> [Item] {
        try database.get(with: Filter(#Predicate<Item> { $0.priority > 2 }, sortBy: [SortDescriptor(\.dueDate)])
            .limit(QueryBenchmark.pageSize, page: page + 1))
    }
}
