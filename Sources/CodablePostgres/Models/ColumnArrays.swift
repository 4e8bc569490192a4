#if Postgres
import Foundation
import PostgresNIO

/// The values of one save, column by column: each column one `text[]` parameter, so that a save of
/// any number of values is one statement with one parameter per column
/// (`INSERT … SELECT … FROM unnest($1::text[], $2::text[], …)`).
///
/// Each value is encoded once, each property straight into its column's array in the form its
/// column stores (``ColumnForm``; a value that is not one flat keyed container goes through its
/// JSON form, ``JSONForm``, instead); PostgreSQL casts the text to the column's type
/// (``ColumnKind/fromText(_:)``). The arrays travel in PostgreSQL's binary array format (no
/// quoting or escaping).
///
/// A save returns what was stored. Two things can make that differ from what was given, and both
/// are decided here, on the client, so that nothing has to come back from the server but assigned
/// ids: a `timestamp with time zone` keeps microseconds, so a date is rounded to the nearest
/// microsecond before it is sent; and a value saved without an id gets the one the database assigns. Such
/// values are decoded again from the stored column texts
/// (``savedValue(_:row:assignedID:table:reader:)``).
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
    /// The id's column.
    private let idIndex: Int
    /// Each column's type, in column order.
    private let kinds: [ColumnKind]
    /// The rows whose stored value differs from the value given (a date rounded to microseconds, an
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
        let width = table.columns.count
        var indexByName: [String: Int] = [:]
        for (index, column) in table.columns.enumerated() { indexByName[column.name] = index }
        let idIndex = indexByName[table.id.name] ?? 0
        self.idIndex = idIndex
        let kinds = table.columns.map(\.kind)
        self.kinds = kinds
        // Where each property goes: its column, or nowhere for a relationship saved elsewhere.
        var slots: [String: ColumnForm.Slot] = [:]
        for (index, column) in table.columns.enumerated() {
            slots[column.name] = toOneIDs[column.name] != nil ? .skipped : .column(index, asJSON: column.kind == .jsonb)
        }
        for name in toMany { slots[name] = .skipped }
        let toOneColumns = toOneIDs.compactMap { name, ids in indexByName[name].map { ($0, ids) } }

        var columns = [[String?]](repeating: [], count: width)
        for index in columns.indices { columns[index].reserveCapacity(values.count) }
        var isRewritten = [Bool](repeating: false, count: values.count)
        var ids: [ByteKey?] = []
        ids.reserveCapacity(values.count)
        var stored = [StoredValue?](repeating: nil, count: width)
        var row = [String?](repeating: nil, count: width)
        for (position, value) in values.enumerated() {
            var changed = false
            for index in 0..<width {
                stored[index] = nil
                row[index] = nil
            }
            let isFlat: Bool
            do {
                isFlat = try ColumnForm.encode(value, slots: slots, into: &stored)
            } catch let unknown as ColumnForm.UnknownKey {
                throw Self.unknownKey(unknown.name, T.self)
            }
            if isFlat {
                for index in 0..<width {
                    guard let value = stored[index] else { continue }
                    row[index] = try Self.text(value, kind: kinds[index], changed: &changed)
                }
            } else {
                try Self.encodeMembers(of: value, table: table, skipping: toMany, indexByName: indexByName, into: &row, changed: &changed)
            }
            for (index, ids) in toOneColumns { row[index] = position < ids.count ? ids[position] : nil }
            ids.append(row[idIndex].map(ByteKey.init))
            if let id = row[idIndex] {
                if table.schema.assignsID, let integer = Int64(id) { explicitIDs.insert(integer) }
            } else if table.schema.assignsID {
                changed = true
            }
            isRewritten[position] = changed
            for index in 0..<width { columns[index].append(row[index]) }
        }

        // An id given more than once keeps its last value only (GraphSave): the earlier rows are dropped.
        let kept = GraphSave.storedPositions(ids: ids)
        if kept.contains(false) {
            for index in columns.indices {
                columns[index] = zip(columns[index], kept).compactMap { text, keep in keep ? .some(text) : nil }
            }
        }
        rowOfValue.reserveCapacity(values.count)
        for position in values.indices {
            guard kept[position] else {
                rowOfValue.append(-1)
                continue
            }
            if table.schema.assignsID, columns[idIndex][rowCount] == nil { idLessRows.append(rowCount) }
            if isRewritten[position] { rewritten.insert(rowCount) }
            rowOfValue.append(rowCount)
            rowCount += 1
        }
        self.columns = columns
    }

    /// A stored value (``ColumnForm``) as the text its column is cast from
    /// (``ColumnKind/fromText(_:)``); `changed` is set when a date is rounded to microseconds.
    private static func text(_ value: StoredValue, kind: ColumnKind, changed: inout Bool) throws -> String? {
        switch value {
        case .null: return nil
        case .integer(let integer): return kind == .boolean ? (integer != 0 ? "true" : "false") : String(integer)
        case .double(let real): return real.description
        case .data(let data): return data.base64EncodedString()
        case .text(let text):
            guard kind == .timestamp else { return text }
            let stored = microseconds(text)
            if stored.utf8.count != text.utf8.count { changed = true }
            return stored
        }
    }

    /// The general path, for a value that is not one flat keyed container (``ColumnForm``): its
    /// JSON form's members, each member's text into its column.
    private static func encodeMembers<T: Model>(
        of value: T, table: PostgresTable, skipping toMany: Set<String>, indexByName: [String: Int],
        into row: inout [String?], changed: inout Bool
    ) throws {
        guard let members = try JSONForm.members(of: value) else {
            throw ModelError(.unsupportedModel, T.self, "does not encode as a keyed container, so it has no columns")
        }
        for (key, member) in members where !toMany.contains(key) {
            guard let index = indexByName[key] else { throw unknownKey(key, T.self) }
            let kind = table.columns[index].kind
            if kind == .jsonb {
                row[index] = member.json
            } else if let text = member.text {
                row[index] = try Self.text(.text(text), kind: kind, changed: &changed)
            }
        }
    }

    private static func unknownKey(_ key: String, _ type: any Model.Type) -> ModelError {
        ModelError(.unsupportedModel, type, "encodes the key \"\(key)\", which is not one of its stored properties; CodingKeys must not rename properties")
    }

    /// A date's text (`YYYY-MM-DD HH:MM:SS.fraction`) at the nearest microsecond, what a
    /// `timestamp with time zone` keeps (``DateText/microsecondText(_:)``, the rule both engines'
    /// callers share): saves, filters and ids agree.
    static func microseconds(_ text: String) -> String {
        DateText.microsecondText(text)
    }

    /// Appends one `text[]` parameter per column.
    func bind(to binds: inout PostgresBindings) throws {
        for column in columns { try binds.append(TextArray(elements: column), context: .default) }
    }

    /// The value stored for `row`, when it differs from the value given (else `nil`): decoded from
    /// the stored column texts, as a read decodes the row's JSON form built on the server
    /// (``ColumnKind/toJSON(_:)``), with the assigned id. `reader` is ``savedValueReader(table:)``.
    func savedValue<T: Model>(_ type: T.Type, row: Int, assignedID: Int64?, table: PostgresTable, reader: ColumnForm.Reader) throws -> T? {
        guard rewritten.contains(row) else { return nil }
        var members: [ColumnForm.Member] = []
        members.reserveCapacity(kinds.count)
        for (index, kind) in kinds.enumerated() {
            // NULL is `null`, as json_build_object writes it: `decodeNil(forKey:)` needs the key.
            guard let text = index == idIndex ? assignedID.map(String.init) ?? columns[index][row] : columns[index][row] else {
                members.append(.null)
                continue
            }
            switch kind {
            case .bigint, .double, .numeric: members.append(.number(text))
            case .boolean: members.append(text == "true" ? .bool(true) : text == "false" ? .bool(false) : .string(text))
            case .jsonb: members.append(.json(text))
            case .text, .uuid, .timestamp, .bytea: members.append(.string(text))
            }
        }
        return try reader.decode(T.self, row: members)
    }

    /// The reader ``savedValue(_:row:assignedID:table:reader:)`` decodes with, made once per save.
    static func savedValueReader(table: PostgresTable) -> ColumnForm.Reader {
        ColumnForm.Reader(columns: table.columns.map(\.name), source: "the value saved into \(table.quotedTable)")
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
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
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
