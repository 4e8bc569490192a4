import Foundation

/// The `Swift.Decoder` for one column of the current row: a single value reads the column as
/// SQLite stores it (an enum from its raw value); keyed and unkeyed containers read the JSON text
/// the column holds.
final class ColumnDecoder: Swift.Decoder, SingleValueDecodingContainer {
    private let row: RowDecoder
    private let column: Int32
    private let key: AnyCodingKey?

    init(row: RowDecoder, column: Int32, key: AnyCodingKey?) {
        self.row = row
        self.column = column
        self.key = key
    }

    var codingPath: [any CodingKey] { row.basePath.keys(appending: key) }
    var userInfo: [CodingUserInfoKey: Any] { row.context.options.codingUserInfo }

    /// The column's JSON, as a decoder positioned at this column's coding path.
    private func json(expecting type: Any.Type) throws -> JSONTreeDecoder {
        let statement = row.statement
        let storageClass = statement.type(at: column)
        let location = row.context.location(column: column)
        switch storageClass {
        case .text, .blob:
            let value: JSONValue
            do {
                value = try statement.withUTF8(at: column) { try JSONParser.parse($0) }
            } catch {
                let detail = (error as? JSONSyntaxError)?.description ?? "\(error)"
                throw DecodingFailure.dataCorrupted(
                    "Expected JSON text for \(type) but the column holds text that is not valid JSON: \(detail)",
                    path: codingPath, location: location)
            }
            var path = row.basePath
            if let key { path = path.appending(key) }
            return JSONTreeDecoder(value: value, path: path, context: row.context, column: column)
        case .null:
            throw DecodingFailure.valueNotFound(type, found: "NULL", path: codingPath, location: location)
        default:
            throw DecodingFailure.typeMismatch(
                type, found: storageClass.description + " (not JSON text)",
                path: codingPath, location: location)
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        try json(expecting: [String: Any].self).container(keyedBy: type)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try json(expecting: [Any].self).unkeyedContainer()
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: SingleValueDecodingContainer

    func decodeNil() -> Bool { row.statement.type(at: column) == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try row.decodeBool(column: column, key: { self.key }) }
    func decode(_ type: String.Type) throws -> String { try row.decodeString(column: column, key: { self.key }) }
    func decode(_ type: Double.Type) throws -> Double { try row.decodeFloat(type, column: column, key: { self.key }) }
    func decode(_ type: Float.Type) throws -> Float { try row.decodeFloat(type, column: column, key: { self.key }) }
    func decode(_ type: Int.Type) throws -> Int { try row.decodeInteger(type, column: column, key: { self.key }) }
    func decode(_ type: Int8.Type) throws -> Int8 { try row.decodeInteger(type, column: column, key: { self.key }) }
    func decode(_ type: Int16.Type) throws -> Int16 { try row.decodeInteger(type, column: column, key: { self.key }) }
    func decode(_ type: Int32.Type) throws -> Int32 { try row.decodeInteger(type, column: column, key: { self.key }) }
    func decode(_ type: Int64.Type) throws -> Int64 { try row.decodeInteger(type, column: column, key: { self.key }) }
    func decode(_ type: UInt.Type) throws -> UInt { try row.decodeInteger(type, column: column, key: { self.key }) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try row.decodeInteger(type, column: column, key: { self.key }) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try row.decodeInteger(type, column: column, key: { self.key }) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try row.decodeInteger(type, column: column, key: { self.key }) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try row.decodeInteger(type, column: column, key: { self.key }) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try row.decodeValue(type, column: column, key: { self.key }) }
}
