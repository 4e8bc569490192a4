import CodableSQLite
import Foundation

/// The benchmark record: every common column kind, tags as JSON text.
struct Item: Codable, Equatable, Sendable {
    var id: Int64
    var title: String
    var note: String?
    var dueDate: Date?
    var isCompleted: Bool
    var priority: Int
    var score: Double
    var uuid: UUID
    var tags: [String]
    var createdAt: Date
}

/// What a contender stores and fetches: ``Item`` itself, or a twin of the same fields whose
/// conversions run outside the timings.
protocol ItemRecord: Codable, Equatable, Sendable {
    init(_ item: Item)
    var item: Item { get }
}

extension Item: ItemRecord {
    init(_ item: Item) { self = item }
    var item: Item { self }
}

#if Generated
/// ``Item`` with generated row coding: the same fields, so the same columns and bytes.
@RowCodable
struct GeneratedItem: ItemRecord {
    var id: Int64
    var title: String
    var note: String?
    var dueDate: Date?
    var isCompleted: Bool
    var priority: Int
    var score: Double
    var uuid: UUID
    var tags: [String]
    var createdAt: Date

    init(_ item: Item) {
        (id, title, note, dueDate, isCompleted, priority, score, uuid, tags, createdAt) =
            (item.id, item.title, item.note, item.dueDate, item.isCompleted, item.priority, item.score, item.uuid, item.tags, item.createdAt)
    }

    var item: Item {
        Item(id: id, title: title, note: note, dueDate: dueDate, isCompleted: isCompleted, priority: priority, score: score,
             uuid: uuid, tags: tags, createdAt: createdAt)
    }
}
#endif

extension Item {
    static let createTable = """
        CREATE TABLE item (
            id INTEGER PRIMARY KEY,
            title TEXT NOT NULL,
            note TEXT,
            dueDate TEXT,
            isCompleted INTEGER NOT NULL,
            priority INTEGER NOT NULL,
            score REAL NOT NULL,
            uuid TEXT NOT NULL,
            tags TEXT NOT NULL,
            createdAt TEXT NOT NULL
        )
        """

    static let insert = """
        INSERT INTO item (id, title, note, dueDate, isCompleted, priority, score, uuid, tags, createdAt)
        VALUES (:id, :title, :note, :dueDate, :isCompleted, :priority, :score, :uuid, :tags, :createdAt)
        """

    static let update = """
        UPDATE item SET title = :title, note = :note, dueDate = :dueDate, isCompleted = :isCompleted,
            priority = :priority, score = :score, uuid = :uuid, tags = :tags, createdAt = :createdAt
        WHERE id = :id
        """

    static let selectAll = "SELECT id, title, note, dueDate, isCompleted, priority, score, uuid, tags, createdAt FROM item ORDER BY id"
    static let selectOne = "SELECT id, title, note, dueDate, isCompleted, priority, score, uuid, tags, createdAt FROM item WHERE id = :id"

    /// `count` items from a fixed seed, so every run and contender sees the same data. Dates have
    /// whole milliseconds, which every contender's storage keeps exactly.
    static func generate(count: Int, seed: UInt64 = 0x5EED) -> [Item] {
        var random = SplitMix(seed: seed)
        let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett", "kilo", "lima"]
        let base: Int64 = 1_700_000_000_000  // ms since 1970
        return (0..<count).map { index in
            let word = words[Int(random.next() % UInt64(words.count))]
            let tagCount = Int(random.next() % 4)
            return Item(
                id: Int64(index + 1),
                title: "Task \(index) \(word)",
                note: random.next() % 3 == 0 ? nil : "A note about \(word) number \(index)",
                dueDate: random.next() % 2 == 0 ? nil : date(ms: base + Int64(random.next() % 10_000_000_000)),
                isCompleted: random.next() % 2 == 0,
                priority: Int(random.next() % 5),
                score: Double(random.next() % 1_000_000) / 1000,
                uuid: UUID(uuid: random.uuidBytes()),
                tags: (0..<tagCount).map { _ in words[Int(random.next() % UInt64(words.count))] },
                createdAt: date(ms: base - Int64(random.next() % 10_000_000_000)))
        }
    }

    /// The same items with every mutable field changed, for the update scenario.
    static func updated(_ items: [Item]) -> [Item] {
        items.map { item in
            var item = item
            item.title += " (edited)"
            item.isCompleted.toggle()
            item.priority = (item.priority + 1) % 5
            item.score += 1
            item.tags.append("edited")
            return item
        }
    }

    static func date(ms: Int64) -> Date {
        Date(timeIntervalSince1970: Double(ms) / 1000)
    }
}

/// A checksum over fetched values, so no contender can skip work or return wrong data.
struct Checksum: Equatable, CustomStringConvertible {
    private(set) var value: UInt64 = 0xCBF2_9CE4_8422_2325
    private(set) var count = 0

    mutating func add(_ item: Item) {
        count += 1
        mix(UInt64(bitPattern: item.id))
        mix(text: item.title)
        if let note = item.note { mix(text: note) } else { mix(0xFFFF) }
        mix(item.dueDate.map(Self.milliseconds) ?? 0xDEAD)
        mix(item.isCompleted ? 1 : 2)
        mix(UInt64(item.priority))
        mix(UInt64(bitPattern: Int64((item.score * 1000).rounded())))
        withUnsafeBytes(of: item.uuid.uuid) { for byte in $0 { mix(UInt64(byte)) } }
        for tag in item.tags { mix(text: tag) }
        mix(UInt64(item.tags.count))
        mix(Self.milliseconds(item.createdAt))
    }

    mutating func add<Record: ItemRecord>(_ items: [Record]) {
        for record in items { add(record.item) }
    }

    private static func milliseconds(_ date: Date) -> UInt64 {
        UInt64(bitPattern: Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }

    private mutating func mix(_ word: UInt64) {
        value = (value ^ word) &* 0x100_0000_01B3
    }

    private mutating func mix(text: String) {
        for byte in text.utf8 { mix(UInt64(byte)) }
    }

    var description: String { "\(count) items, \(String(value, radix: 16))" }
}

/// A small deterministic generator (SplitMix64).
struct SplitMix {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func uuidBytes() -> uuid_t {
        let a = next(), b = next()
        return withUnsafeBytes(of: (a, b)) { raw in
            (raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
             raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15])
        }
    }
}
