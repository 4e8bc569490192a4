#if Fluent
#if canImport(FluentBench)
import FluentBench
#endif
import Foundation

// A Fluent record and the benchmark's `Item`, converted outside the timings. Shared with
// `Benchmarks/Postgres` (symlinked), where FluentRecord and FluentItem are compiled in its module.
extension FluentRecord {
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

#if !canImport(FluentBench)
extension FluentItem {
    convenience init(_ item: Item) { self.init(FluentRecord(item)) }
    var item: Item { record.item }
    func set(_ item: Item) { set(FluentRecord(item)) }
}
#endif
#endif
