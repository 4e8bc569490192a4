#if Fluent
import FluentBench
import Foundation

// The Fluent contender lives in FluentBench (its SQLite must not meet the system's in this
// module); here it joins the scenarios, its records converted outside the timings.
extension FluentContender: Contender {}

extension FluentRecord: ItemRecord {
    init(_ item: Item) {
        let halves = withUnsafeBytes(of: item.uuid.uuid) { raw in
            (raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self).bigEndian, raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self).bigEndian)
        }
        self.init(
            id: item.id, title: item.title, note: item.note, dueDate: item.dueDate?.timeIntervalSince1970, isCompleted: item.isCompleted,
            priority: item.priority, score: item.score, uuid: halves, tags: item.tags, createdAt: item.createdAt.timeIntervalSince1970)
    }

    var item: Item {
        let uuid = withUnsafeBytes(of: (self.uuid.high.bigEndian, self.uuid.low.bigEndian)) { raw in
            UUID(uuid: (raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                        raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]))
        }
        return Item(
            id: id, title: title, note: note, dueDate: dueDate.map(Date.init(timeIntervalSince1970:)), isCompleted: isCompleted,
            priority: priority, score: score, uuid: uuid, tags: tags, createdAt: Date(timeIntervalSince1970: createdAt))
    }
}

extension FluentContender: QueryContender {
    func store(forQueries items: [Item]) throws { try store(forQueries: items.map(FluentRecord.init)) }
    func page(_ page: Int) throws -> [Item] { try self.page(page, size: QueryBenchmark.pageSize).map(\.item) }
}
#endif
