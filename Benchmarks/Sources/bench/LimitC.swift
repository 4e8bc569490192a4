import Foundation
import GRDBSQLite

private let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

/// The limit: SQLite's C API by hand, storing exactly the bytes CodableSQLite stores (dates as
/// `YYYY-MM-DD HH:MM:SS[.fraction]` UTC text, UUIDs as upper-case text, tags as compact JSON text)
/// with hand-written formatting and parsing: no Foundation formatters, no JSON coders, no
/// `UUID(uuidString:)`. Statements are prepared once. `selfCheck()` proves the bytes are
/// CodableSQLite's.
final class LimitC: Contender {
    private let db: OpaquePointer
    private var insertStatement: OpaquePointer?
    private var updateStatement: OpaquePointer?
    private var selectAllStatement: OpaquePointer?
    private var selectOneStatement: OpaquePointer?
    private var pageStatement: OpaquePointer?
    /// Formatted dates, UUIDs and tags, one at a time: bound with `SQLITE_TRANSIENT`, so reused.
    private var scratch: [UInt8] = []

    init(path: String) throws {
        db = try openItemDatabase(path)
        insertStatement = try prepare(
            "INSERT INTO item (id, title, note, dueDate, isCompleted, priority, score, uuid, tags, createdAt) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)")
        updateStatement = try prepare("""
            UPDATE item SET title = ?2, note = ?3, dueDate = ?4, isCompleted = ?5, priority = ?6, score = ?7,
                uuid = ?8, tags = ?9, createdAt = ?10 WHERE id = ?1
            """)
        selectAllStatement = try prepare(Item.selectAll)
        selectOneStatement = try prepare(Item.selectOne.replacingOccurrences(of: ":id", with: "?1"))
        scratch.reserveCapacity(1024)
    }

    deinit {
        for statement in [insertStatement, updateStatement, selectAllStatement, selectOneStatement, pageStatement] { sqlite3_finalize(statement) }
        sqlite3_close_v2(db)
    }

    private func exec(_ sql: String) throws { try execute(sql, on: db) }

    private func prepare(_ sql: String) throws -> OpaquePointer { try prepareStatement(sql, on: db) }

    /// Formats a value into the reused scratch buffer and binds a copy of its bytes.
    private func bindFormatted(_ statement: OpaquePointer, _ index: Int32, _ format: (inout [UInt8]) throws -> Void) rethrows {
        scratch.removeAll(keepingCapacity: true)
        try format(&scratch)
        scratch.withUnsafeBytes { buffer in
            _ = sqlite3_bind_text(statement, index, buffer.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(buffer.count), transient)
        }
    }

    private func bindText(_ statement: OpaquePointer, _ index: Int32, _ text: String) {
        var text = text
        text.withUTF8 { bytes in _ = sqlite3_bind_text(statement, index, bytes.baseAddress, Int32(bytes.count), transient) }
    }

    private func bind(_ item: Item, to statement: OpaquePointer) throws {
        sqlite3_bind_int64(statement, 1, item.id)
        bindText(statement, 2, item.title)
        if let note = item.note { bindText(statement, 3, note) } else { sqlite3_bind_null(statement, 3) }
        if let dueDate = item.dueDate { try bindFormatted(statement, 4) { try HandFormat.appendDate(dueDate, to: &$0) } } else { sqlite3_bind_null(statement, 4) }
        sqlite3_bind_int64(statement, 5, item.isCompleted ? 1 : 0)
        sqlite3_bind_int64(statement, 6, Int64(item.priority))
        sqlite3_bind_double(statement, 7, item.score)
        bindFormatted(statement, 8) { HandFormat.appendUUID(item.uuid, to: &$0) }
        bindFormatted(statement, 9) { HandFormat.appendJSON(item.tags, to: &$0) }
        try bindFormatted(statement, 10) { try HandFormat.appendDate(item.createdAt, to: &$0) }
    }

    private func bytes(_ statement: OpaquePointer, _ column: Int32) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: sqlite3_column_text(statement, column), count: Int(sqlite3_column_bytes(statement, column)))
    }

    private func readItem(_ statement: OpaquePointer) throws -> Item {
        Item(
            id: sqlite3_column_int64(statement, 0),
            title: String(decoding: bytes(statement, 1), as: UTF8.self),
            note: sqlite3_column_type(statement, 2) == SQLITE_NULL ? nil : String(decoding: bytes(statement, 2), as: UTF8.self),
            dueDate: sqlite3_column_type(statement, 3) == SQLITE_NULL ? nil : try HandFormat.parseDate(bytes(statement, 3)),
            isCompleted: sqlite3_column_int64(statement, 4) != 0,
            priority: Int(sqlite3_column_int64(statement, 5)),
            score: sqlite3_column_double(statement, 6),
            uuid: try HandFormat.parseUUID(bytes(statement, 7)),
            tags: try HandFormat.parseStrings(bytes(statement, 8)),
            createdAt: try HandFormat.parseDate(bytes(statement, 9)))
    }

    private func write(_ items: [Item], with statement: OpaquePointer?) throws {
        guard let statement else { throw BenchmarkError.sqlite("no statement") }
        try exec("BEGIN")
        for item in items {
            try bind(item, to: statement)
            guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchmarkError.sqlite(String(cString: sqlite3_errmsg(db))) }
            sqlite3_reset(statement)
        }
        try exec("COMMIT")
    }

    func insert(_ items: [Item]) throws { try write(items, with: insertStatement) }
    func update(_ items: [Item]) throws { try write(items, with: updateStatement) }

    func fetchAll() throws -> [Item] {
        guard let statement = selectAllStatement else { return [] }
        defer { sqlite3_reset(statement) }
        var items: [Item] = []
        while sqlite3_step(statement) == SQLITE_ROW { items.append(try readItem(statement)) }
        return items
    }

    func fetch(ids: [Int64]) throws -> [Item] {
        guard let statement = selectOneStatement else { return [] }
        var items: [Item] = []
        items.reserveCapacity(ids.count)
        for id in ids {
            sqlite3_bind_int64(statement, 1, id)
            if sqlite3_step(statement) == SQLITE_ROW { items.append(try readItem(statement)) }
            sqlite3_reset(statement)
        }
        return items
    }

    /// H: the items, then the index, and the page query prepared once.
    func store(forQueries items: [Item]) throws {
        try insert(items)
        try exec(QueryBenchmark.indexSQL)
        pageStatement = try prepare(QueryBenchmark.pageSQL.replacingOccurrences(of: ":offset", with: "?1"))
    }

    func page(_ page: Int) throws -> [Item] {
        guard let statement = pageStatement else { throw BenchmarkError.sqlite("no page statement") }
        defer { sqlite3_reset(statement) }
        sqlite3_bind_int64(statement, 1, Int64(page * QueryBenchmark.pageSize))
        var items: [Item] = []
        items.reserveCapacity(QueryBenchmark.pageSize)
        while sqlite3_step(statement) == SQLITE_ROW { items.append(try readItem(statement)) }
        return items
    }

    /// Writes the same items with CodableSQLite and with this contender, and compares every
    /// column's type and bytes (`quote()`): the limit must store exactly what CodableSQLite stores.
    static func selfCheck(items: [Item]) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("codablesqlite-limit-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let ours = folder.appendingPathComponent("ours.sqlite").path
        let limit = folder.appendingPathComponent("limit.sqlite").path
        try autoreleasepool(invoking: {
            try CodableSQLiteContender<Item>(path: ours).insert(items)
            try LimitC(path: limit).insert(items)
        })
        func dump(_ path: String) throws -> [String] {
            var handle: OpaquePointer?
            guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let handle else { throw BenchmarkError.sqlite("cannot open \(path)") }
            defer { sqlite3_close_v2(handle) }
            var statement: OpaquePointer?
            let columns = ["id", "title", "note", "dueDate", "isCompleted", "priority", "score", "uuid", "tags", "createdAt"]
            let sql = "SELECT " + columns.map { "typeof(\($0)) || ':' || quote(\($0))" }.joined(separator: " || '|' || ") + " FROM item ORDER BY id"
            guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else { throw BenchmarkError.sqlite("cannot read \(path)") }
            defer { sqlite3_finalize(statement) }
            var rows: [String] = []
            while sqlite3_step(statement) == SQLITE_ROW { rows.append(String(cString: sqlite3_column_text(statement, 0))) }
            return rows
        }
        let (expected, actual) = (try dump(ours), try dump(limit))
        guard expected.count == items.count, expected == actual else {
            let first = zip(expected, actual).first { $0 != $1 }
            throw BenchmarkError.verification("the limit contender does not store CodableSQLite's bytes: \(first.map { "\($0.0) vs \($0.1)" } ?? "\(expected.count) vs \(actual.count) rows")")
        }
    }
}

/// Hand-written formatting and parsing of the stored forms, as a careful C programmer would write
/// them: formatting appends to one reused buffer and parsing reads SQLite's bytes in place, so no
/// value costs a heap allocation beyond the `String`s and arrays the record itself holds.
enum HandFormat {
    private static let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\"), dash = UInt8(ascii: "-")
    /// 2001-01-01 as days from 1970-01-01.
    private static let referenceDay: Int64 = 11_323

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10
    }

    private static func nibble(_ byte: UInt8) throws -> UInt8 {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte &- UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte &- UInt8(ascii: "A") &+ 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte &- UInt8(ascii: "a") &+ 10
        default: throw BenchmarkError.verification("bad hex digit")
        }
    }

    /// `value` as exactly `width` decimal digits.
    private static func appendDigits(_ value: Int64, width: Int, to bytes: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<width { divisor *= 10 }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }

    /// `YYYY-MM-DD HH:MM:SS[.fraction]`: the fraction digits are those of the shortest decimal that
    /// gives back the same `Double` (the standard library's `description`, a small string with no
    /// heap storage for these values), trailing zeros removed.
    static func appendDate(_ date: Date, to bytes: inout [UInt8]) throws {
        let interval = date.timeIntervalSinceReferenceDate
        let text = interval.description.utf8
        guard interval >= 0, interval < 1e15, !text.contains(UInt8(ascii: "e")) else {
            throw BenchmarkError.verification("the limit contender only formats dates after 2001: \(date)")
        }
        var whole: Int64 = 0
        var fraction = text.endIndex
        for index in text.indices {
            let byte = text[index]
            if byte == UInt8(ascii: ".") { fraction = text.index(after: index); break }
            whole = whole * 10 + Int64(byte &- UInt8(ascii: "0"))
        }
        let days = whole / 86_400
        let second = whole % 86_400
        let (year, month, day) = CivilDate.civil(days + referenceDay)
        appendDigits(year, width: 4, to: &bytes); bytes.append(dash)
        appendDigits(month, width: 2, to: &bytes); bytes.append(dash)
        appendDigits(day, width: 2, to: &bytes); bytes.append(UInt8(ascii: " "))
        appendDigits(second / 3600, width: 2, to: &bytes); bytes.append(UInt8(ascii: ":"))
        appendDigits(second / 60 % 60, width: 2, to: &bytes); bytes.append(UInt8(ascii: ":"))
        appendDigits(second % 60, width: 2, to: &bytes)
        guard fraction < text.endIndex else { return }
        bytes.append(UInt8(ascii: "."))
        bytes.append(contentsOf: text[fraction...])
        while bytes.last == UInt8(ascii: "0") { bytes.removeLast() }
        if bytes.last == UInt8(ascii: ".") { bytes.removeLast() }
    }

    static func parseDate(_ text: UnsafeBufferPointer<UInt8>) throws -> Date {
        guard text.count >= 19 else { throw BenchmarkError.verification("bad date") }
        func number(_ start: Int, _ count: Int) -> Int64 {
            var value: Int64 = 0
            for index in start..<(start + count) { value = value * 10 + Int64(text[index] &- UInt8(ascii: "0")) }
            return value
        }
        let days = daysFromCivil(number(0, 4), number(5, 2), number(8, 2)) - referenceDay
        let whole = days * 86_400 + number(11, 2) * 3600 + number(14, 2) * 60 + number(17, 2)
        guard text.count > 20 else { return Date(timeIntervalSinceReferenceDate: Double(whole)) }
        // whole.fraction, correctly rounded: an exact integer over an exact power of ten while the
        // integer is exact in a Double, else the standard library's correctly rounded parser.
        let digits = text.count - 20
        if digits <= 15 {
            var numerator = whole
            var scale = 1.0
            for index in 20..<text.count {
                numerator = numerator * 10 + Int64(text[index] &- UInt8(ascii: "0"))
                scale *= 10
            }
            if numerator <= 1 << 53 { return Date(timeIntervalSinceReferenceDate: Double(numerator) / scale) }
        }
        guard let seconds = Double(String(decoding: UnsafeBufferPointer(rebasing: text[11...]), as: UTF8.self)
            .split(separator: ".").last.map { "\(whole)." + $0 } ?? "") else { throw BenchmarkError.verification("bad date") }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }

    /// Upper-case `8-4-4-4-12` hex.
    static func appendUUID(_ uuid: UUID, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: uuid.uuid) { raw in
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 { bytes.append(dash) }
                bytes.append(hexDigit(raw[index] >> 4))
                bytes.append(hexDigit(raw[index] & 0x0F))
            }
        }
    }

    static func parseUUID(_ text: UnsafeBufferPointer<UInt8>) throws -> UUID {
        guard text.count == 36, text[8] == dash, text[13] == dash, text[18] == dash, text[23] == dash else {
            throw BenchmarkError.verification("bad uuid")
        }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        try withUnsafeMutableBytes(of: &value) { raw in
            var position = 0
            for index in 0..<16 {
                if position == 8 || position == 13 || position == 18 || position == 23 { position += 1 }
                raw[index] = try nibble(text[position]) << 4 | nibble(text[position + 1])
                position += 2
            }
        }
        return UUID(uuid: value)
    }

    /// `["a","b"]`, escaping quotes, backslashes and control characters.
    static func appendJSON(_ strings: [String], to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "["))
        for (index, string) in strings.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(quote)
            for byte in string.utf8 {
                switch byte {
                case quote, backslash: bytes.append(backslash); bytes.append(byte)
                case 0x0A: bytes.append(backslash); bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(backslash); bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(backslash); bytes.append(UInt8(ascii: "t"))
                case 0..<0x20:
                    bytes.append(contentsOf: "\\u00".utf8)
                    bytes.append(hexDigit(byte >> 4))
                    bytes.append(hexDigit(byte & 0x0F))
                default: bytes.append(byte)
                }
            }
            bytes.append(quote)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// A compact JSON array of strings; a string without escapes is made straight from SQLite's bytes.
    static func parseStrings(_ text: UnsafeBufferPointer<UInt8>) throws -> [String] {
        var index = 0
        func expect(_ byte: UInt8) throws {
            guard index < text.count, text[index] == byte else { throw BenchmarkError.verification("bad JSON") }
            index += 1
        }
        try expect(UInt8(ascii: "["))
        if index < text.count, text[index] == UInt8(ascii: "]") { return [] }
        var strings: [String] = []
        var quotes = 0
        for byte in text where byte == quote { quotes &+= 1 }
        strings.reserveCapacity(quotes / 2)
        while true {
            try expect(quote)
            let start = index
            var escaped = false
            while index < text.count, text[index] != quote {
                if text[index] == backslash { escaped = true; index += 1 }
                index += 1
            }
            guard index < text.count else { throw BenchmarkError.verification("bad JSON") }
            let content = UnsafeBufferPointer(rebasing: text[start..<index])
            strings.append(escaped ? try unescape(content) : String(decoding: content, as: UTF8.self))
            index += 1
            guard index < text.count else { throw BenchmarkError.verification("bad JSON") }
            if text[index] == UInt8(ascii: "]") { return strings }
            try expect(UInt8(ascii: ","))
        }
    }

    /// The rare string with escapes.
    private static func unescape(_ text: UnsafeBufferPointer<UInt8>) throws -> String {
        var bytes: [UInt8] = []
        var index = 0
        while index < text.count {
            guard text[index] == backslash, index + 1 < text.count else {
                bytes.append(text[index])
                index += 1
                continue
            }
            index += 1
            switch text[index] {
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "u"):
                guard index + 4 < text.count else { throw BenchmarkError.verification("bad JSON") }
                var scalar: UInt32 = 0
                for offset in 1...4 { scalar = scalar << 4 | UInt32(try nibble(text[index + offset])) }
                index += 4
                bytes.append(contentsOf: String(Character(Unicode.Scalar(scalar) ?? "?")).utf8)
            default: bytes.append(text[index])
            }
            index += 1
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func daysFromCivil(_ year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = y / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        return era * 146_097 + yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear - 719_468
    }
}
