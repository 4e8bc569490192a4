import Foundation

extension ColumnForm {
    /// A column's value as a member of the value's JSON form, for ``Reader``: its text, or the
    /// value itself where a binary cell gives it (so that it is not printed and parsed again).
    package enum Member {
        case null
        case bool(Bool)
        /// A JSON number's literal text.
        case number(String)
        /// A whole number: the JSON number of its decimal text.
        case integer(Int64)
        /// A finite real: the JSON number of its shortest decimal text.
        case real(Double)
        /// A date in years 0–9999: the JSON form's date text (``DateText``).
        case date(Date)
        /// A UUID: its lowercase text.
        case uuid(UUID)
        case string(String)
        /// JSON text (an object, an array or any other JSON value).
        case json(String)
    }

    /// Decodes values from rows of column texts (each column a ``Member`` of the value's JSON
    /// form), without building a JSON object per row: the column lookups and
    /// the error context are made once, for every row of a save.
    ///
    /// Errors are the JSON form's: `DecodingError` with the property's coding path, naming the
    /// column and `source`.
    package final class Reader {
        private let names: [String]
        fileprivate let index: [String: Int]
        fileprivate let context: DecodingContext

        /// A reader of rows whose columns are `columns`, in that order; errors name `source`.
        package init(columns: [String], source: String) {
            names = columns
            var index: [String: Int] = Dictionary(minimumCapacity: columns.count)
            for (position, name) in columns.enumerated() where index[name] == nil { index[name] = position }
            self.index = index
            context = DecodingContext(options: DecodingOptions(), sql: source, columnNames: columns)
        }

        /// Decodes a `T` from `row` (one member per column, in the reader's column order).
        package func decode<T: Decodable>(_ type: T.Type, row: [Member]) throws -> T {
            guard row.count == names.count else {
                throw DecodingError.dataCorrupted(DecodingError.Context(
                    codingPath: [], debugDescription: "A row of \(row.count) columns where \(names.count) were expected (SQL: \(context.sql))."))
            }
            do {
                return try T(from: ColumnRowDecoder(reader: self, values: row))
            } catch is NotKeyed {
                // A type that decodes itself from something else than one keyed container: its
                // JSON form decodes it, or says why not.
                var object: [String: JSONValue] = [:]
                for (column, (name, member)) in zip(names, row).enumerated() where object[name] == nil {
                    object[name] = try member.jsonValue(key: name, context: context, column: Int32(column))
                }
                return try JSONScalars.value(T.self, .object(object), path: .root, context: context, column: 0)
            }
        }

        fileprivate func name(_ column: Int) -> String { column < names.count ? names[column] : "#\(column)" }
    }
}

extension ColumnForm.Member {
    fileprivate func jsonValue(key: String, context: DecodingContext, column: Int32) throws -> JSONValue {
        switch self {
        case .null: return .null
        case .bool(let value): return .bool(value)
        case .number(let text): return .number(text)
        case .integer(let integer): return .number(String(integer))
        case .real(let real): return .number(String(real))
        case .date(let date): return DateText.format(date).map(JSONValue.string) ?? .null
        case .uuid(let uuid): return .string(uuid.uuidString.lowercased())
        case .string(let text): return .string(text)
        case .json(var text):
            do {
                return try text.withUTF8 { try JSONParser.parse($0) }
            } catch let error as JSONSyntaxError {
                throw DecodingFailure.dataCorrupted("The stored JSON is not valid: \(error.description)",
                                                    path: [AnyCodingKey(stringValue: key)], location: context.jsonLocation(column: column))
            }
        }
    }
}

/// Asked for something else than one keyed container at the top.
private struct NotKeyed: Error {}

/// The `Swift.Decoder` of one row of a ``ColumnForm/Reader``.
private final class ColumnRowDecoder: Swift.Decoder {
    let reader: ColumnForm.Reader
    let values: [ColumnForm.Member]

    init(reader: ColumnForm.Reader, values: [ColumnForm.Member]) {
        self.reader = reader
        self.values = values
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { reader.context.options.codingUserInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(ColumnRowContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw NotKeyed() }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { throw NotKeyed() }
}

/// Each key from the column of the same name, through the JSON form's scalar rules.
private struct ColumnRowContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: ColumnRowDecoder
    private var context: DecodingContext { decoder.reader.context }

    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { decoder.reader.index.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { decoder.reader.index[key.stringValue] != nil }

    /// The JSON value of `column`.
    @inline(__always)
    private func value(_ column: Int) throws -> JSONValue {
        try decoder.values[column].jsonValue(key: decoder.reader.name(column), context: context, column: Int32(column))
    }

    /// The column of `key`.
    @inline(__always)
    private func column(_ key: Key) throws -> Int {
        guard let column = decoder.reader.index[key.stringValue] else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(
                codingPath: [], debugDescription: "No value associated with key \"\(key.stringValue)\" (SQL: \(context.sql))."))
        }
        return column
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        if case .null = decoder.values[try column(key)] { return true }
        return false
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        let column = try column(key)
        return try JSONScalars.bool(try value(column), path: CodingPath.root.appending(key), context: context, column: Int32(column))
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        let column = try column(key)
        return try JSONScalars.string(try value(column), path: CodingPath.root.appending(key), context: context, column: Int32(column))
    }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try float(type, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try float(type, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(type, key) }

    private func integer<I: FixedWidthInteger>(_ type: I.Type, _ key: Key) throws -> I {
        let column = try column(key)
        if case .integer(let integer) = decoder.values[column] {
            if let exact = I(exactly: integer) { return exact }
            throw DecodingFailure.numberDoesNotFit(String(integer), I.self, path: CodingPath.root.appending(key).keys,
                                                   location: context.jsonLocation(column: Int32(column)))
        }
        return try JSONScalars.integer(type, try value(column), path: CodingPath.root.appending(key), context: context, column: Int32(column))
    }

    private func float<F: BinaryFloatingPoint & LosslessStringConvertible>(_ type: F.Type, _ key: Key) throws -> F {
        let column = try column(key)
        // A Double is what its text parses to; a Float of a Double's text can differ from
        // `Float(double)`, so it takes the text path.
        if F.self == Double.self {
            switch decoder.values[column] {
            case .real(let real): return F(real)
            case .integer(let integer): return F(integer)
            default: break
            }
        }
        return try JSONScalars.float(type, try value(column), path: CodingPath.root.appending(key), context: context, column: Int32(column))
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let column = try column(key)
        switch decoder.values[column] {
        case .date(let date) where T.self == Date.self: return try identityCast(date, to: T.self)
        case .uuid(let uuid) where T.self == UUID.self: return try identityCast(uuid, to: T.self)
        default: break
        }
        if T.self == stringArrayType, case .json(var text) = decoder.values[column],
           let strings = text.withUTF8(JSONParser.parseStringArray) {
            // The common nested value, straight from its text (as a column of SQLite's is).
            return try identityCast(strings, to: T.self)
        }
        return try JSONScalars.value(type, try value(column), in: .root, key: key, context: context, column: Int32(column))
    }

    // One lookup for a missing key or null, instead of the default's three.
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let column = decoder.reader.index[key.stringValue] else { return nil }
        if case .null = decoder.values[column] { return nil }
        return try JSONScalars.string(try value(column), path: CodingPath.root.appending(key), context: context, column: Int32(column))
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let column = decoder.reader.index[key.stringValue] else { return nil }
        if case .null = decoder.values[column] { return nil }
        return try decode(type, forKey: key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        let column = try column(key)
        return try JSONTreeDecoder(value: try value(column), path: CodingPath.root.appending(key), context: context, column: Int32(column)).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let column = try column(key)
        return try JSONTreeDecoder(value: try value(column), path: CodingPath.root.appending(key), context: context, column: Int32(column)).unkeyedContainer()
    }

    func superDecoder() throws -> any Swift.Decoder {
        try superDecoder(for: AnyCodingKey.super)
    }

    func superDecoder(forKey key: Key) throws -> any Swift.Decoder {
        try superDecoder(for: AnyCodingKey(key))
    }

    /// The value under `key`, or null when there is no such column (as in the JSON form).
    private func superDecoder(for key: AnyCodingKey) throws -> any Swift.Decoder {
        let column = decoder.reader.index[key.stringValue]
        return JSONTreeDecoder(value: try column.map(value) ?? .null, path: CodingPath.root.appending(key),
                               context: context, column: Int32(column ?? 0))
    }
}
