import CodableSQLite
import Foundation

/// I: an array of structs kept on disk, the third source document's use case. The app holds the
/// array; it is written once, read back at start-up, then one element is appended, changed or
/// removed `changes` times, each change on disk before the next. Contenders: rewriting a JSON file
/// with `JSONEncoder` (what that document does), the key-value store (`store` the whole array), and
/// models (`save` or `delete` the one element).
struct StructsBenchmark {
    let settings: Settings
    static let changes = 1_000

    /// One way of keeping the array on disk.
    struct Contender: Sendable {
        let name: String
        /// Rewrites the whole array, so its changes are timed on a sample and the total projected.
        let rewritesAll: Bool
        let make: @Sendable (URL) throws -> any Store
    }

    protocol Store {
        func saveAll(_ items: [Item]) throws
        func load() throws -> [Item]
        /// Persists one change; `items` is the array after it.
        func persist(_ change: Change, items: [Item]) throws
    }

    enum Change {
        case append(Item), update(Item), remove(Item)
    }

    static let contenders = [
        Contender(name: "JSON file (JSONEncoder, rewritten)", rewritesAll: true) { JSONFileStore(url: $0.appendingPathComponent("items.json")) },
        Contender(name: "key-value store (store)", rewritesAll: true) { try KeyValueStore(path: $0.appendingPathComponent("kv.sqlite").path) },
        Contender(name: "models (save / delete)", rewritesAll: false) { try ModelStore(path: $0.appendingPathComponent("models.sqlite").path) },
    ]

    func run() throws -> String {
        var lines = ["", "I: structs kept on disk, \(Self.changes.formatted()) changes (append, change or remove one element, each written before the next)"]
        lines.append("  " + "contender".padding(toLength: 36, withPad: " ", startingAt: 0)
            + "   first save        load  per change   all changes     on disk")
        for count in [1_000, settings.rows] {
            lines.append("  \(count.formatted()) structs")
            let original = Item.generate(count: count)
            for contender in Self.contenders {
                let folder = FileManager.default.temporaryDirectory.appendingPathComponent("codablesqlite-bench-i-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: folder) }
                let store = try contender.make(folder)
                let save = try measureSeconds { try store.saveAll(original) }
                var loaded: [Item] = []
                let load = try measureSeconds { loaded = try store.load() }
                guard loaded == original else { throw BenchmarkError.verification("I \(contender.name): load differs") }

                // A whole-array rewrite costs the same each time: time a sample, project the rest.
                let sample = contender.rewritesAll ? min(Self.changes, settings.rows == 10_000 ? 5 : 20) : Self.changes
                var items = loaded
                var random = SplitMix(seed: 5)
                var nextID = Int64(count)
                var perChange: [Double] = []
                for step in 0..<sample {
                    let change = Self.change(step, &items, &random, &nextID)
                    perChange.append(try measureSeconds { try store.persist(change, items: items) })
                }
                guard try store.load() == items else { throw BenchmarkError.verification("I \(contender.name): changes lost") }
                let median = perChange.sorted()[perChange.count / 2]
                let total = sample == Self.changes
                    ? String(format: "%12.3fs", perChange.reduce(0, +))
                    : String(format: "%11.1fs*", median * Double(Self.changes))
                lines.append("    " + contender.name.padding(toLength: 34, withPad: " ", startingAt: 0)
                    + String(format: " %11.3fs %10.3fs %9.3fms", save, load, median * 1000) + " " + total
                    + String(format: " %8.1f MB", Double(Self.bytes(in: folder)) / 1_048_576))
            }
        }
        lines.append("  * projected from the median of a sample (each change rewrites everything, so it costs the same every time)")
        return lines.joined(separator: "\n")
    }

    /// Change number `step`: append, change or remove in turn, at a random place.
    private static func change(_ step: Int, _ items: inout [Item], _ random: inout SplitMix, _ nextID: inout Int64) -> Change {
        let index = Int(random.next() % UInt64(items.count))
        switch step % 3 {
        case 0:
            nextID += 1
            var item = items[index]
            item.id = nextID
            items.append(item)
            return .append(item)
        case 1:
            items[index].title += " (changed)"
            items[index].score += 1
            return .update(items[index])
        default:
            return .remove(items.remove(at: index))
        }
    }

    private static func bytes(in folder: URL) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.reduce(0) { total, name in
            let attributes = try? FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(name).path)
            return total + ((attributes?[.size] as? NSNumber)?.intValue ?? 0)
        }
    }
}

/// The whole array as one JSON file, rewritten atomically on every change.
private struct JSONFileStore: StructsBenchmark.Store {
    let url: URL

    func saveAll(_ items: [Item]) throws { try JSONEncoder().encode(items).write(to: url, options: .atomic) }
    func load() throws -> [Item] { try JSONDecoder().decode([Item].self, from: Data(contentsOf: url)) }
    func persist(_ change: StructsBenchmark.Change, items: [Item]) throws { try saveAll(items) }
}

/// The whole array as one value of the key-value store, stored again on every change.
private struct KeyValueStore: StructsBenchmark.Store {
    let database: SQLite.Database

    init(path: String) throws { database = try SQLite.Database(path: path) }

    func saveAll(_ items: [Item]) throws { try database.store(items, forKey: "items") }
    func load() throws -> [Item] { try database.value([Item].self, forKey: "items") ?? [] }
    func persist(_ change: StructsBenchmark.Change, items: [Item]) throws { try saveAll(items) }
}

/// One row per element: a change saves or deletes just that element.
private struct ModelStore: StructsBenchmark.Store {
    let database: SQLite.Database

    init(path: String) throws { database = try SQLite.Database(path: path) }

    func saveAll(_ items: [Item]) throws { try database.save(items) }
    func load() throws -> [Item] { try database.get(Item.self) }

    func persist(_ change: StructsBenchmark.Change, items: [Item]) throws {
        switch change {
        case .append(let item), .update(let item): try database.save(item)
        case .remove(let item): try database.delete(item)
        }
    }
}
