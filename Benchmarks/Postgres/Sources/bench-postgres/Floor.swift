// The floor: the same A–D work written by hand on postgres-nio, as a careful programmer would,
// on a table of exactly the columns and types CodablePostgres gives `Item` (`CREATE TABLE … (LIKE
// "Item" INCLUDING ALL)`), so that the server stores and sends the same bytes:
//   A  COPY … FROM STDIN in text format, the rows formatted by hand into one buffer per 10,000
//   B  SELECT of the ten columns, each row decoded by postgres-nio (`row.decode((Int64, String, …))`)
//      in its binary form, the `jsonb` tags parsed by hand
//   C  the same SELECT by id, 10,000 times
//   D  UPDATE … FROM (VALUES …) of 5,000 rows a statement, every value bound in its type
// A and D are one transaction each, as for the other contenders.
import Foundation
import Logging
import NIOCore
import PostgresNIO

func floorPostgresNIO(_ work: Workload) async throws -> Timings {
    let (items, changed, ids) = (work.items, work.changed, work.ids)
    var result = Timings(contender: "postgres-nio by hand")
    let logger = Logger(label: "floor")
    let connection = try await PostgresConnection.connect(configuration: try floorConfiguration(work.url), id: 1, logger: logger)
    func run(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) async throws -> PostgresRowSequence {
        try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
    }
    _ = try await run("DROP TABLE IF EXISTS \"ItemFloor\"")
    _ = try await run("CREATE TABLE \"ItemFloor\" (LIKE \"Item\" INCLUDING ALL)")
    let columns = ["id", "title", "note", "dueDate", "isCompleted", "priority", "score", "uuid", "tags", "createdAt"]
    let select = "SELECT " + columns.map { "\"\($0)\"" }.joined(separator: ", ") + " FROM \"ItemFloor\""

    result.seconds["A"] = try await measure {
        _ = try await run("BEGIN")
        try await connection.copyFrom(table: "ItemFloor", columns: columns, logger: logger) { writer in  // it quotes the names
            var buffer = ByteBuffer()
            for (index, item) in items.enumerated() {
                CopyText.append(item, to: &buffer)
                if index % 10_000 == 9_999 {
                    try await writer.write(buffer)
                    buffer.clear()
                }
            }
            if buffer.readableBytes > 0 { try await writer.write(buffer) }
        }
        _ = try await run("COMMIT")
    }

    func decodeItems(_ rows: PostgresRowSequence) async throws -> [Item] {
        var items: [Item] = []
        for try await row in rows {
            let (id, title, note, dueDate, isCompleted, priority, score, uuid, tags, createdAt) =
                try row.decode((Int64, String, String?, Date?, Bool, Int, Double, UUID, String, Date).self)
            items.append(Item(id: id, title: title, note: note, dueDate: dueDate, isCompleted: isCompleted, priority: priority,
                              score: score, uuid: uuid, tags: try StringArrayJSON.parse(tags), createdAt: createdAt))
        }
        return items
    }
    var all: [Item] = []
    result.seconds["B"] = try await measure { all = try await decodeItems(try await run(select + " ORDER BY \"id\"")) }
    result.checksums["B"] = { var sum = Checksum(); sum.add(all); return sum }()

    var found = Checksum()
    let lookup = select + " WHERE \"id\" = $1"
    result.seconds["C"] = try await measure {
        for id in ids {
            var binds = PostgresBindings()
            binds.append(id)
            for item in try await decodeItems(try await run(lookup, binds)) { found.add(item) }
        }
    }
    result.checksums["C"] = found

    result.seconds["D"] = try await measure {
        _ = try await run("BEGIN")
        for start in stride(from: 0, to: changed.count, by: 5_000) {
            var binds = PostgresBindings()
            var tuples: [String] = []
            for item in changed[start..<min(start + 5_000, changed.count)] {
                let first = binds.count
                binds.append(item.id)
                binds.append(item.title)
                if let note = item.note { binds.append(note) } else { binds.appendNull() }
                if let dueDate = item.dueDate { binds.append(dueDate) } else { binds.appendNull() }
                binds.append(item.isCompleted)
                binds.append(item.priority)
                binds.append(item.score)
                binds.append(item.uuid)
                binds.append(CopyText.json(item.tags))
                binds.append(item.createdAt)
                let placeholders = (1...10).map { "$\(first + $0)" }
                // Every value is bound with its type (tags as text), so each is cast where the column needs it.
                tuples.append("(" + zip(placeholders, ["", "", "", "", "", "", "", "", "::jsonb", ""]).map { $0 + $1 }.joined(separator: ", ") + ")")
            }
            _ = try await run("""
                UPDATE "ItemFloor" AS t SET "title" = v.title, "note" = v.note, "dueDate" = v.due, "isCompleted" = v.done,
                "priority" = v.priority, "score" = v.score, "uuid" = v.uuid, "tags" = v.tags, "createdAt" = v.created
                FROM (VALUES \(tuples.joined(separator: ", "))) AS v(id, title, note, due, done, priority, score, uuid, tags, created)
                WHERE t."id" = v.id
                """, binds)
        }
        _ = try await run("COMMIT")
    }
    var after = Checksum()
    after.add(try await decodeItems(try await run(select + " ORDER BY \"id\"")))
    result.checksums["D"] = after
    _ = try await run("DROP TABLE \"ItemFloor\"")
    try await connection.close()
    return result
}

/// The connection settings of a `postgres://user:password@host:port/database` URL.
private func floorConfiguration(_ url: String) throws -> PostgresConnection.Configuration {
    guard let parts = URLComponents(string: url), let host = parts.host, let user = parts.user else {
        throw PostgresDecodingError.Code.failure
    }
    let database = parts.path.hasPrefix("/") ? String(parts.path.dropFirst()) : parts.path
    return PostgresConnection.Configuration(host: host, port: parts.port ?? 5432, username: user, password: parts.password,
                                            database: database.isEmpty ? nil : database, tls: .disable)
}

/// `COPY`'s text format by hand: tab between columns, `\N` for NULL, a backslash before a
/// backslash, tab, newline or carriage return; timestamps as `YYYY-MM-DD HH:MM:SS.mmm+00`.
enum CopyText {
    static func append(_ item: Item, to buffer: inout ByteBuffer) {
        buffer.writeString(String(item.id)); tab(&buffer)
        text(item.title, &buffer); tab(&buffer)
        if let note = item.note { text(note, &buffer) } else { buffer.writeStaticString("\\N") }
        tab(&buffer)
        if let dueDate = item.dueDate { timestamp(dueDate, &buffer) } else { buffer.writeStaticString("\\N") }
        tab(&buffer)
        buffer.writeStaticString(item.isCompleted ? "t" : "f"); tab(&buffer)
        buffer.writeString(String(item.priority)); tab(&buffer)
        buffer.writeString(String(item.score)); tab(&buffer)
        buffer.writeString(item.uuid.uuidString); tab(&buffer)
        text(json(item.tags), &buffer); tab(&buffer)
        timestamp(item.createdAt, &buffer)
        buffer.writeInteger(UInt8(ascii: "\n"))
    }

    /// `["a","b"]`, with JSON's escapes.
    static func json(_ strings: [String]) -> String {
        var out = "["
        for (index, string) in strings.enumerated() {
            if index > 0 { out += "," }
            out += "\""
            for scalar in string.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\u{0}"..."\u{1F}": out += String(format: "\\u%04x", scalar.value)
                default: out.unicodeScalars.append(scalar)
                }
            }
            out += "\""
        }
        return out + "]"
    }

    private static func tab(_ buffer: inout ByteBuffer) { buffer.writeInteger(UInt8(ascii: "\t")) }

    private static func text(_ string: String, _ buffer: inout ByteBuffer) {
        var string = string
        string.withUTF8 { bytes in
            guard bytes.contains(where: { $0 == 0x5C || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) else {
                buffer.writeBytes(bytes)
                return
            }
            for byte in bytes {
                switch byte {
                case 0x5C: buffer.writeStaticString("\\\\")
                case 0x09: buffer.writeStaticString("\\t")
                case 0x0A: buffer.writeStaticString("\\n")
                case 0x0D: buffer.writeStaticString("\\r")
                default: buffer.writeInteger(byte)
                }
            }
        }
    }

    /// The UTC civil date of whole milliseconds (the benchmark's dates have no finer part).
    private static func timestamp(_ date: Date, _ buffer: inout ByteBuffer) {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let (days, dayMilliseconds) = milliseconds.quotientAndRemainder(dividingBy: 86_400_000)
        let (day, inDay) = dayMilliseconds < 0 ? (days - 1, dayMilliseconds + 86_400_000) : (days, dayMilliseconds)
        let (year, month, dayOfMonth) = CivilDate.civil(day)
        digits(year, 4, &buffer); buffer.writeInteger(UInt8(ascii: "-"))
        digits(month, 2, &buffer); buffer.writeInteger(UInt8(ascii: "-"))
        digits(dayOfMonth, 2, &buffer); buffer.writeInteger(UInt8(ascii: " "))
        digits(inDay / 3_600_000, 2, &buffer); buffer.writeInteger(UInt8(ascii: ":"))
        digits(inDay / 60_000 % 60, 2, &buffer); buffer.writeInteger(UInt8(ascii: ":"))
        digits(inDay / 1000 % 60, 2, &buffer); buffer.writeInteger(UInt8(ascii: "."))
        digits(inDay % 1000, 3, &buffer); buffer.writeStaticString("+00")
    }

    private static func digits(_ value: Int64, _ count: Int, _ buffer: inout ByteBuffer) {
        var divisor: Int64 = 1
        for _ in 1..<count { divisor *= 10 }
        var value = value
        while divisor > 0 {
            buffer.writeInteger(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            value %= divisor
            divisor /= 10
        }
    }
}

/// A JSON array of strings parsed by hand; anything with an escape goes through `JSONDecoder`.
enum StringArrayJSON {
    static func parse(_ text: String) throws -> [String] {
        var text = text
        let quick: [String]? = text.withUTF8 { bytes in
            guard !bytes.contains(0x5C) else { return nil }
            var strings: [String] = []
            var index = 0, start = -1
            while index < bytes.count {
                if bytes[index] == 0x22 {
                    if start < 0 { start = index + 1 } else {
                        strings.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
                        start = -1
                    }
                }
                index += 1
            }
            return strings
        }
        if let quick { return quick }
        return try JSONDecoder().decode([String].self, from: Data(text.utf8))
    }
}
