import CSQLite
import Foundation

/// The `Swift.Decoder` that reads a row straight from a prepared statement.
///
/// Column names are mapped to coding keys once per statement; lookups are then remembered in
/// the order the type decodes its keys, which is the same for every row, so a row costs one
/// string comparison per key and no dictionary.
final class RowDecoder: Swift.Decoder {
    let statement: Statement
    let context: DecodingContext
    /// The row's index when decoding an array, first in every coding path.
    var rowIndex: Int?

    let columnCount: Int32
    private let columnByKey: [String: Int32]
    private struct Lookup {
        let key: String
        let column: Int32  // -1: no such column
    }
    private var lookups: [Lookup] = []
    private var lookupCursor = 0

    init(statement: Statement, options: DecodingOptions) {
        self.statement = statement
        let names = statement.columnNames
        context = DecodingContext(options: options, sql: statement.sql, columnNames: names)
        columnCount = Int32(names.count)
        var columnByKey: [String: Int32] = [:]
        for (column, name) in names.enumerated() {
            let key = options.convertsKeys ? options.keyName(for: name, at: .root) : name
            if columnByKey[key] == nil { columnByKey[key] = Int32(column) }  // leftmost wins
        }
        self.columnByKey = columnByKey
    }

    var codingPath: [any CodingKey] { rowIndex.map { [AnyCodingKey(intValue: $0)] } ?? [] }
    var userInfo: [CodingUserInfoKey: Any] { context.options.codingUserInfo }

    var basePath: CodingPath {
        rowIndex.map { CodingPath.root.appending(index: $0) } ?? .root
    }

    /// The coding keys the columns stand for, for `allKeys`.
    var columnKeys: [String] { Array(columnByKey.keys) }

    func decodeRow<T: Decodable>(_ type: T.Type) throws -> T {
        lookupCursor = 0
        if isStoredDirectly(T.self) {
            return try decodeValue(T.self, column: try singleColumn(for: T.self), key: nil as AnyCodingKey?)
        }
        return try T(from: self)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        lookupCursor = 0
        return KeyedDecodingContainer(RowKeyedDecodingContainer<Key>(decoder: self))
    }

    /// Several columns are read in order; a single column holds a JSON array.
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        if columnCount == 1 {
            return try ColumnDecoder(row: self, column: 0, key: nil).unkeyedContainer()
        }
        return RowUnkeyedDecodingContainer(decoder: self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        ColumnDecoder(row: self, column: try singleColumn(for: Any.self), key: nil)
    }

    private func singleColumn(for type: Any.Type) throws -> Int32 {
        guard columnCount == 1 else {
            throw DecodingError.typeMismatch(type, DecodingError.Context(
                codingPath: codingPath,
                debugDescription: "Expected to decode \(type) from a single column but the row has \(columnCount) columns "
                    + "(\(context.columnNames.joined(separator: ", "))); select one column, or decode a type with "
                    + "a property per column. SQL: \(context.sql)"))
        }
        return 0
    }

    /// The column for `key`, or `nil` when the result has none.
    @inline(__always)
    func column(for key: some CodingKey) -> Int32? {
        let name = key.stringValue
        if lookupCursor < lookups.count, lookups[lookupCursor].key == name {
            let column = lookups[lookupCursor].column
            lookupCursor += 1
            return column < 0 ? nil : column
        }
        let column = columnByKey[name]
        let lookup = Lookup(key: name, column: column ?? -1)
        if lookupCursor < lookups.count {
            lookups[lookupCursor] = lookup
        } else {
            lookups.append(lookup)
        }
        lookupCursor += 1
        return column
    }

    func keyNotFound(_ key: some CodingKey) -> DecodingError {
        .keyNotFound(key, DecodingError.Context(
            codingPath: codingPath,
            debugDescription: "No value associated with key \"\(key.stringValue)\": the result has no column "
                + "\"\(key.stringValue)\" (columns: \(context.columnNames.joined(separator: ", ")); SQL: \(context.sql))."))
    }

    // MARK: Reading columns

    private func path(_ key: (some CodingKey)?) -> [any CodingKey] {
        basePath.keys(appending: key)
    }

    private func unexpected(_ type: Any.Type, column: Int32, key: (some CodingKey)?) -> DecodingError {
        let storageClass = statement.type(at: column)
        if storageClass == SQLITE_NULL {
            return DecodingFailure.valueNotFound(type, found: "NULL", path: path(key), location: context.location(column: column))
        }
        return DecodingFailure.typeMismatch(
            type, found: DecodingContext.describe(storageClass: storageClass), path: path(key),
            location: context.location(column: column))
    }

    /// INTEGER or REAL: zero is false, anything else true.
    func decodeBool<K: CodingKey>(column: Int32, key: K?) throws -> Bool {
        switch statement.type(at: column) {
        case SQLITE_INTEGER: return statement.int64(at: column) != 0
        case SQLITE_FLOAT: return statement.double(at: column) != 0
        default: throw unexpected(Bool.self, column: column, key: key)
        }
    }

    /// INTEGER, or REAL holding a whole number, that fits the type exactly.
    func decodeInteger<I: FixedWidthInteger, K: CodingKey>(_ type: I.Type, column: Int32, key: K?) throws -> I {
        switch statement.type(at: column) {
        case SQLITE_INTEGER:
            let value = statement.int64(at: column)
            if let integer = I(exactly: value) { return integer }
            throw DecodingFailure.numberDoesNotFit(String(value), I.self, path: path(key), location: context.location(column: column))
        case SQLITE_FLOAT:
            let value = statement.double(at: column)
            if let integer = I(exactly: value) { return integer }
            throw DecodingFailure.numberDoesNotFit(String(value), I.self, path: path(key), location: context.location(column: column))
        default:
            throw unexpected(I.self, column: column, key: key)
        }
    }

    /// REAL or INTEGER; a finite REAL too large for `Float` is an error.
    func decodeFloat<F: BinaryFloatingPoint, K: CodingKey>(_ type: F.Type, column: Int32, key: K?) throws -> F {
        switch statement.type(at: column) {
        case SQLITE_FLOAT:
            let value = statement.double(at: column)
            let converted = F(value)
            if converted.isInfinite && value.isFinite {
                throw DecodingFailure.numberDoesNotFit(String(value), F.self, path: path(key), location: context.location(column: column))
            }
            return converted
        case SQLITE_INTEGER:
            return F(statement.int64(at: column))
        default:
            throw unexpected(F.self, column: column, key: key)
        }
    }

    func decodeString<K: CodingKey>(column: Int32, key: K?) throws -> String {
        guard statement.type(at: column) == SQLITE_TEXT else { throw unexpected(String.self, column: column, key: key) }
        return statement.text(at: column)
    }

    /// Any `Decodable`: the types SQLite stores directly by their own rule, else through a
    /// ``ColumnDecoder`` (single values read the column, containers read its JSON).
    func decodeValue<T: Decodable, K: CodingKey>(_ type: T.Type, column: Int32, key: K?) throws -> T {
        if T.self == Date.self, let date = try decodeDate(column: column, key: key) as? T {
            return date
        } else if T.self == UUID.self, let uuid = try decodeUUID(column: column, key: key) as? T {
            return uuid
        } else if T.self == Data.self {
            guard statement.type(at: column) == SQLITE_BLOB else { throw unexpected(Data.self, column: column, key: key) }
            if let data = statement.data(at: column) as? T { return data }
        } else if T.self == URL.self {
            let text = try decodeString(column: column, key: key)
            guard let url = URL(string: text) else {
                throw DecodingFailure.dataCorrupted(
                    "Invalid URL string \"\(DecodingFailure.preview(text))\"", path: path(key), location: context.location(column: column))
            }
            if let url = url as? T { return url }
        } else if T.self == Decimal.self, let decimal = try decodeDecimal(column: column, key: key) as? T {
            return decimal
        }
        return try T(from: ColumnDecoder(row: self, column: column, key: key.map(AnyCodingKey.init)))
    }

    private func decodeUUID<K: CodingKey>(column: Int32, key: K?) throws -> UUID {
        switch statement.type(at: column) {
        case SQLITE_TEXT:
            if let uuid = statement.withUTF8(at: column, ValueParsing.uuid) { return uuid }
            throw DecodingFailure.dataCorrupted(
                "Attempted to decode UUID from invalid UUID string \"\(DecodingFailure.preview(statement.text(at: column)))\"",
                path: path(key), location: context.location(column: column))
        case SQLITE_BLOB:
            if let uuid = ValueParsing.uuid(blob: statement.data(at: column)) { return uuid }
            throw DecodingFailure.dataCorrupted(
                "Attempted to decode UUID from a \(sqlite3_column_bytes(statement.handle, column))-byte blob; a UUID blob has 16 bytes",
                path: path(key), location: context.location(column: column))
        default:
            throw unexpected(UUID.self, column: column, key: key)
        }
    }

    private func decodeDecimal<K: CodingKey>(column: Int32, key: K?) throws -> Decimal {
        switch statement.type(at: column) {
        case SQLITE_TEXT:
            let text = statement.text(at: column)
            if let decimal = ValueParsing.decimal(text) { return decimal }
            throw DecodingFailure.dataCorrupted(
                "Text \"\(DecodingFailure.preview(text))\" is not a decimal number", path: path(key), location: context.location(column: column))
        case SQLITE_INTEGER: return Decimal(statement.int64(at: column))
        case SQLITE_FLOAT: return Decimal(statement.double(at: column))
        default: throw unexpected(Decimal.self, column: column, key: key)
        }
    }

    private func decodeDate<K: CodingKey>(column: Int32, key: K?) throws -> Date {
        let storageClass = statement.type(at: column)
        switch context.options.dateStrategy {
        case .iso8601:
            switch storageClass {
            case SQLITE_TEXT:
                if let date = statement.withUTF8(at: column, DateText.parse) { return date }
                throw DecodingFailure.invalidDate(statement.text(at: column), path: path(key), location: context.location(column: column))
            case SQLITE_INTEGER, SQLITE_FLOAT:
                return Date(timeIntervalSince1970: statement.double(at: column))
            default:
                throw unexpected(Date.self, column: column, key: key)
            }
        case .secondsSince1970:
            return Date(timeIntervalSince1970: try decodeFloat(Double.self, column: column, key: key))
        case .millisecondsSince1970:
            return Date(timeIntervalSince1970: try decodeFloat(Double.self, column: column, key: key) / 1000)
        case .deferredToDate:
            return Date(timeIntervalSinceReferenceDate: try decodeFloat(Double.self, column: column, key: key))
        case .formatted(let formatter):
            let text = try decodeString(column: column, key: key)
            if let date = formatter.date(from: text) { return date }
            throw DecodingFailure.dataCorrupted(
                "Date string \"\(DecodingFailure.preview(text))\" does not match format expected by formatter",
                path: path(key), location: context.location(column: column))
        case .custom(let decode):
            return try decode(ColumnDecoder(row: self, column: column, key: key.map(AnyCodingKey.init)))
        }
    }
}
