#if Fluent
import FluentBench
import Foundation

// The Fluent contender lives in FluentBench (its SQLite must not meet the system's in this
// module); here it joins the scenarios, its records converted outside the timings.
extension FluentContender: Contender {}

extension FluentRecord: ItemRecord {}

extension FluentContender: QueryContender {
    func store(forQueries items: [Item]) throws { try store(forQueries: items.map(FluentRecord.init)) }
    func page(_ page: Int) throws -> [Item] { try self.page(page, size: QueryBenchmark.pageSize).map(\.item) }
}
#endif
