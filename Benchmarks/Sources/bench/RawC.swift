import Foundation
import GRDBSQLite

private let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

/// The baseline: SQLite's C API by hand. Statements prepared once, values bound and read by
/// index, dates as REAL Unix time (the cheapest form), JSONEncoder/JSONDecoder only for tags.
final class RawC: Contender {
    private let db: OpaquePointer
    private let jsonEncoder = JSONEncoder()
    private let jsonDecoder = JSONDecoder()

    init(path: String) throws {
        db = try openItemDatabase(path)
    }

    deinit {
        sqlite3_close_v2(db)
    }

    private func exec(_ sql: String) throws { try execute(sql, on: db) }

    private func prepare(_ sql: String) throws -> OpaquePointer { try prepareStatement(sql, on: db) }

    private func check(_ resultCode: Int32) throws {
        guard resultCode == SQLITE_OK || resultCode == SQLITE_DONE || resultCode == SQLITE_ROW else {
            throw BenchmarkError.sqlite(String(cString: sqlite3_errmsg(db)))
        }
    }

    private func bindText(_ statement: OpaquePointer, _ index: Int32, _ text: String) {
        var text = text
        text.withUTF8 { bytes in
            _ = sqlite3_bind_text(statement, index, bytes.baseAddress, Int32(bytes.count), transient)
        }
    }

    /// Binds ?1…?10 in `Item.insert` column order; `Item.update` lists id last, as ?10 → see `bindUpdate`.
    private func bind(_ item: Item, to statement: OpaquePointer, idIndex: Int32, firstColumnIndex: Int32) throws {
        sqlite3_bind_int64(statement, idIndex, item.id)
        var index = firstColumnIndex
        bindText(statement, index, item.title); index += 1
        if let note = item.note { bindText(statement, index, note) } else { sqlite3_bind_null(statement, index) }
        index += 1
        if let dueDate = item.dueDate {
            sqlite3_bind_double(statement, index, dueDate.timeIntervalSince1970)
        } else {
            sqlite3_bind_null(statement, index)
        }
        index += 1
        sqlite3_bind_int64(statement, index, item.isCompleted ? 1 : 0); index += 1
        sqlite3_bind_int64(statement, index, Int64(item.priority)); index += 1
        sqlite3_bind_double(statement, index, item.score); index += 1
        bindText(statement, index, item.uuid.uuidString); index += 1
        let tags = try jsonEncoder.encode(item.tags)
        tags.withUnsafeBytes { bytes in
            _ = sqlite3_bind_text(statement, index, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), transient)
        }
        index += 1
        sqlite3_bind_double(statement, index, item.createdAt.timeIntervalSince1970)
    }

    private func text(_ statement: OpaquePointer, _ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
    }

    private func readItem(_ statement: OpaquePointer) throws -> Item {
        let tagsBytes = sqlite3_column_text(statement, 8)
        let tagsData = tagsBytes.map { Data(bytes: $0, count: Int(sqlite3_column_bytes(statement, 8))) } ?? Data()
        guard let uuid = UUID(uuidString: text(statement, 7)) else { throw BenchmarkError.verification("bad uuid") }
        return Item(
            id: sqlite3_column_int64(statement, 0),
            title: text(statement, 1),
            note: sqlite3_column_type(statement, 2) == SQLITE_NULL ? nil : text(statement, 2),
            dueDate: sqlite3_column_type(statement, 3) == SQLITE_NULL
                ? nil : Date(timeIntervalSince1970: sqlite3_column_double(statement, 3)),
            isCompleted: sqlite3_column_int64(statement, 4) != 0,
            priority: Int(sqlite3_column_int64(statement, 5)),
            score: sqlite3_column_double(statement, 6),
            uuid: uuid,
            tags: try jsonDecoder.decode([String].self, from: tagsData),
            createdAt: Date(timeIntervalSince1970: sqlite3_column_double(statement, 9)))
    }

    func insert(_ items: [Item]) throws {
        let statement = try prepare(
            "INSERT INTO item (id, title, note, dueDate, isCompleted, priority, score, uuid, tags, createdAt) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)")
        defer { sqlite3_finalize(statement) }
        try exec("BEGIN")
        for item in items {
            try bind(item, to: statement, idIndex: 1, firstColumnIndex: 2)
            try check(sqlite3_step(statement))
            sqlite3_reset(statement)
        }
        try exec("COMMIT")
    }

    func fetchAll() throws -> [Item] {
        let statement = try prepare(Item.selectAll)
        defer { sqlite3_finalize(statement) }
        var items: [Item] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            items.append(try readItem(statement))
        }
        return items
    }

    func fetch(ids: [Int64]) throws -> [Item] {
        let statement = try prepare(Item.selectOne.replacingOccurrences(of: ":id", with: "?1"))
        defer { sqlite3_finalize(statement) }
        var items: [Item] = []
        items.reserveCapacity(ids.count)
        for id in ids {
            sqlite3_bind_int64(statement, 1, id)
            if sqlite3_step(statement) == SQLITE_ROW {
                items.append(try readItem(statement))
            }
            sqlite3_reset(statement)
        }
        return items
    }

    func update(_ items: [Item]) throws {
        let statement = try prepare("""
            UPDATE item SET title = ?2, note = ?3, dueDate = ?4, isCompleted = ?5, priority = ?6, score = ?7,
                uuid = ?8, tags = ?9, createdAt = ?10 WHERE id = ?1
            """)
        defer { sqlite3_finalize(statement) }
        try exec("BEGIN")
        for item in items {
            try bind(item, to: statement, idIndex: 1, firstColumnIndex: 2)
            try check(sqlite3_step(statement))
            sqlite3_reset(statement)
        }
        try exec("COMMIT")
    }
}

/// Opens a database for the C contenders: WAL and synchronous=NORMAL for files, the `item` table.
func openItemDatabase(_ path: String) throws -> OpaquePointer {
    var opened: OpaquePointer?
    guard sqlite3_open_v2(path, &opened, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK,
          let handle = opened
    else {
        sqlite3_close_v2(opened)
        throw BenchmarkError.sqlite("cannot open \(path)")
    }
    let setup = (path == ":memory:" ? [] : ["PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL"]) + [Item.createTable]
    for sql in setup where sqlite3_exec(handle, sql, nil, nil, nil) != SQLITE_OK {
        let message = String(cString: sqlite3_errmsg(handle))
        sqlite3_close_v2(handle)
        throw BenchmarkError.sqlite(message)
    }
    return handle
}
