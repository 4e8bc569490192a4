#if Postgres
import Foundation
import PostgresNIO

/// The values of one save, column by column: each column one `text[]` parameter, so that a save of
/// any number of values is one statement with one parameter per column
/// (`INSERT … SELECT … FROM unnest($1::text[], $2::text[], …)`).
///
/// Each value is encoded once through the storage contract's JSON form (``JSONForm``), and each
/// member's text goes into its column's array; PostgreSQL casts the text to the column's type
/// (``ColumnKind/fromText(_:)``). The arrays travel in PostgreSQL's binary array format (no
/// quoting or escaping).
///
/// A save returns what was stored. Two things can make that differ from what was given, and both
/// are decided here, on the client, so that nothing has to come back from the server but assigned
/// ids: a `timestamp with time zone` keeps microseconds, so a date's text is cut to six decimals
/// before it is sent; and a value saved without an id gets the one the database assigns. Such
/// values are decoded again from their JSON form with the stored text (``savedValue(_:row:assignedID:table:)``).
struct ColumnArrays {
    /// One array per column of the table, in the table's column order.
    private(set) var columns: [[String?]] = []
    /// Rows (in the arrays) of the values saved without an id, when the database assigns ids.
    private(set) var idLessRows: [Int] = []
    /// Integer ids the save gives explicitly, when the database assigns ids.
    private(set) var explicitIDs: Set<Int64> = []
    /// For each value saved, its row in the arrays; -1 for a value replaced by a later one with its id.
    private(set) var rowOfValue: [Int] = []
    /// The number of rows in the arrays.
    private(set) var rowCount = 0
    /// The rows whose stored value differs from the value given (a date cut to microseconds, an
    /// id to be assigned).
    private var rewritten: Set<Int> = []

    /// Whether a stored value differs from the value given (then a graph's saved values are read back).
    var rewritesAny: Bool { !rewritten.isEmpty }

    /// Encodes `values`. When several values have the same id, only the last is kept (it wins, as
    /// saving them one by one would, and the earlier ones come back as they were given): one
    /// statement may not update a row twice.
    ///
    /// A to-one relationship's column holds the id text `toOneIDs[name][position]` of the target
    /// saved for the value at `position`; to-many relationships (in link tables) are left out.
    init<T: Model>(_ values: [T], table: PostgresTable, toOneIDs: [String: [String?]] = [:]) throws {
        let toMany = Set(table.schema.relationships.filter(\.isToMany).map(\.name))
        var indexByName: [String: Int] = [:]
        for (index, column) in table.columns.enumerated() { indexByName[column.name] = index }
        let idIndex = indexByName[table.id.name] ?? 0
        var rows: [[String?]] = []
        rows.reserveCapacity(values.count)
        var rewrittenPositions: Set<Int> = []
        var lastPositionOfID: [ByteKey: Int] = [:]
        for (position, value) in values.enumerated() {
            guard let members = try JSONForm.members(of: value) else {
                throw ModelError(.unsupportedModel, T.self, "does not encode as a keyed container, so it has no columns")
            }
            var row = [String?](repeating: nil, count: table.columns.count)
            var changed = false
            for (key, member) in members where !toMany.contains(key) {
                guard let index = indexByName[key] else {
                    throw ModelError(.unsupportedModel, T.self, "encodes the key \"\(key)\", which is not one of its stored properties; CodingKeys must not rename properties")
                }
                if let ids = toOneIDs[key] {
                    row[index] = position < ids.count ? ids[position] : nil
                    continue
                }
                switch table.columns[index].kind {
                case .jsonb:
                    row[index] = member.json
                case .timestamp:
                    guard let text = member.text else { continue }
                    let stored = Self.microseconds(text)
                    if stored.utf8.count != text.utf8.count { changed = true }
                    row[index] = stored
                default:
                    row[index] = member.text
                }
            }
            if let id = row[idIndex] {
                lastPositionOfID[ByteKey(id)] = position
                if table.schema.assignsID, let integer = Int64(id) { explicitIDs.insert(integer) }
            } else if table.schema.assignsID {
                changed = true
            }
            if changed { rewrittenPositions.insert(position) }
            rows.append(row)
        }
        // Rows in input order; an id given more than once keeps its last value only.
        columns = Array(repeating: [], count: table.columns.count)
        for index in columns.indices { columns[index].reserveCapacity(rows.count) }
        rowOfValue.reserveCapacity(rows.count)
        for (position, row) in rows.enumerated() {
            if let id = row[idIndex] {
                guard lastPositionOfID[ByteKey(id)] == position else {
                    rowOfValue.append(-1)
                    continue
                }
            } else if table.schema.assignsID {
                idLessRows.append(rowCount)
            }
            if rewrittenPositions.contains(position) { rewritten.insert(rowCount) }
            rowOfValue.append(rowCount)
            rowCount += 1
            for (index, text) in row.enumerated() { columns[index].append(text) }
        }
    }

    /// A date's text (`YYYY-MM-DD HH:MM:SS.fraction`) with at most six decimals: what a
    /// `timestamp with time zone` keeps. Further digits are dropped, so the stored time is never
    /// later than the value's.
    static func microseconds(_ text: String) -> String {
        let bytes = text.utf8
        guard bytes.count > 26, let point = bytes.firstIndex(of: UInt8(ascii: ".")) else { return text }
        let decimals = bytes.distance(from: point, to: bytes.endIndex) - 1
        guard decimals > 6 else { return text }
        return String(text[..<bytes.index(point, offsetBy: 7)])
    }

    /// Appends one `text[]` parameter per column.
    func bind(to binds: inout PostgresBindings) throws {
        for column in columns { try binds.append(TextArray(elements: column), context: .default) }
    }

    /// The value stored for `row`, when it differs from the value given (else `nil`): decoded from
    /// the row's JSON form built from the stored column texts, as a read builds it on the server
    /// (``ColumnKind/toJSON(_:)``), with the assigned id.
    func savedValue<T: Model>(_ type: T.Type, row: Int, assignedID: Int64?, table: PostgresTable) throws -> T? {
        guard rewritten.contains(row) else { return nil }
        var json: [UInt8] = [UInt8(ascii: "{")]
        json.reserveCapacity(256)
        for (index, column) in table.columns.enumerated() {
            let text = column.name == table.id.name ? assignedID.map(String.init) ?? columns[index][row] : columns[index][row]
            if json.count > 1 { json.append(UInt8(ascii: ",")) }
            JSONForm.appendString(column.name, to: &json)
            json.append(UInt8(ascii: ":"))
            // NULL is `null`, as json_build_object writes it: `decodeNil(forKey:)` needs the key.
            guard let text else {
                json.append(contentsOf: "null".utf8)
                continue
            }
            switch column.kind {
            case .bigint, .double, .numeric, .boolean, .jsonb: json.append(contentsOf: text.utf8)
            case .text, .uuid, .timestamp, .bytea: JSONForm.appendString(text, to: &json)
            }
        }
        json.append(UInt8(ascii: "}"))
        return try json.withUnsafeBytes { buffer in
            try JSONForm.decode(T.self, from: buffer, source: "the value saved into \(table.quotedTable)", label: table.schema.table)
        }
    }
}

/// Text compared by its bytes, as PostgreSQL compares `text` (Swift's `String` equality treats
/// canonically equivalent texts, such as "café" in two Unicode forms, as equal).
private struct ByteKey: Hashable {
    let text: String
    init(_ text: String) { self.text = text }

    static func == (left: ByteKey, right: ByteKey) -> Bool {
        left.text.utf8.elementsEqual(right.text.utf8)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(text.utf8.count)
        for byte in text.utf8 { hasher.combine(byte) }
    }
}

/// A `text[]` parameter whose elements may be NULL, in PostgreSQL's binary array format.
struct TextArray: PostgresThrowingDynamicTypeEncodable {
    let elements: [String?]

    var psqlType: PostgresDataType { .textArray }
    var psqlFormat: PostgresFormat { .binary }

    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) throws {
        // Header: dimensions, whether any element is NULL, the element type; then one dimension's
        // length and lower bound; then each element as its byte count (-1 for NULL) and bytes.
        buffer.writeInteger(Int32(1))
        buffer.writeInteger(Int32(elements.contains(nil) ? 1 : 0))
        buffer.writeInteger(PostgresDataType.text.rawValue)
        buffer.writeInteger(Int32(elements.count))
        buffer.writeInteger(Int32(1))
        for element in elements {
            guard let element else {
                buffer.writeInteger(Int32(-1))
                continue
            }
            let lengthIndex = buffer.writerIndex
            buffer.writeInteger(Int32(0))
            let written = buffer.writeString(element)
            buffer.setInteger(Int32(written), at: lengthIndex)
        }
    }
}
#endif
