import Foundation

/// Reads each key from the result column of the same name.
struct RowKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: RowDecoder

    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [Key] {
        (decoder.columnKeys + (decoder.options.overrides?.keys.subtracting(decoder.columnKeys) ?? [])).compactMap { Key(stringValue: $0) }
    }

    func contains(_ key: Key) -> Bool { decoder.isOverridden(key) || decoder.column(for: key) != nil }

    @inline(__always)
    private func column(_ key: Key) throws -> Int32 {
        guard let column = decoder.column(for: key) else { throw decoder.keyNotFound(key) }
        return column
    }

    @inline(__always)
    private func presentColumn(_ key: Key) -> PresentColumn? {
        decoder.present(decoder.column(for: key))
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        if decoder.isOverridden(key) { return try decoder.overriddenValue(Any.self, key: key) == nil }
        return decoder.statement.type(at: try column(key)) == .null
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decoder.decodeBool(column: try column(key), key: { AnyCodingKey(key) }) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decoder.decodeString(column: try column(key), key: { AnyCodingKey(key) }) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decoder.decodeFloat(type, column: try column(key), key: { AnyCodingKey(key) }) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decoder.decodeFloat(type, column: try column(key), key: { AnyCodingKey(key) }) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decoder.decodeInteger(type, column: try column(key), key: { AnyCodingKey(key) }) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decoder.decodeInteger(type, column: try column(key), key: { AnyCodingKey(key) }) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decoder.decodeInteger(type, column: try column(key), key: { AnyCodingKey(key) }) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decoder.decodeInteger(type, column: try column(key), key: { AnyCodingKey(key) }) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decoder.decodeInteger(type, column: try column(key), key: { AnyCodingKey(key) }) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decoder.decodeInteger(type, column: try column(key), key: { AnyCodingKey(key) }) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decoder.decodeInteger(type, column: try column(key), key: { AnyCodingKey(key) }) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decoder.decodeInteger(type, column: try column(key), key: { AnyCodingKey(key) }) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decoder.decodeInteger(type, column: try column(key), key: { AnyCodingKey(key) }) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decoder.decodeInteger(type, column: try column(key), key: { AnyCodingKey(key) }) }

    // The generic forms hold no `T?` of their own: in code not specialized for `T`, each one would
    // look up `Optional<T>`'s metadata on every call (a tenth of decoding a row, measured).
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        if decoder.isOverridden(key) { return try decoder.requiredOverriddenValue(type, key: key) }
        return try decoder.decodeValue(type, column: try column(key), key: { AnyCodingKey(key) })
    }

    // A missing column or NULL decodes nil, with a single lookup.
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try presentColumn(key).map { try decoder.decodeBool(column: $0.column, storageClass: $0.storageClass, key: { AnyCodingKey(key) }) } }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try presentColumn(key).map { try decoder.decodeString(column: $0.column, storageClass: $0.storageClass, key: { AnyCodingKey(key) }) } }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try presentColumn(key).map { try decoder.decodeFloat(type, column: $0.column, storageClass: $0.storageClass, key: { AnyCodingKey(key) }) } }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try presentColumn(key).map { try decoder.decodeFloat(type, column: $0.column, storageClass: $0.storageClass, key: { AnyCodingKey(key) }) } }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try presentColumn(key).map { try decoder.decodeInteger(type, column: $0.column, storageClass: $0.storageClass, key: { AnyCodingKey(key) }) } }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try presentColumn(key).map { try decoder.decodeInteger(type, column: $0.column, storageClass: $0.storageClass, key: { AnyCodingKey(key) }) } }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try presentColumn(key).map { try decoder.decodeInteger(type, column: $0.column, storageClass: $0.storageClass, key: { AnyCodingKey(key) }) } }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try presentColumn(key).map { try decoder.decodeInteger(type, column: $0.column, storageClass: $0.storageClass, key: { AnyCodingKey(key) }) } }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try presentColumn(key).map { try decoder.decodeInteger(type, column: $0.column, storageClass: $0.storageClass, key: { AnyCodingKey(key) }) } }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try presentColumn(key).map { try decoder.decodeInteger(type, column: $0.column, storageClass: $0.storageClass, key: { AnyCodingKey(key) }) } }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try presentColumn(key).map { try decoder.decodeInteger(type, column: $0.column, storageClass: $0.storageClass, key: { AnyCodingKey(key) }) } }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try presentColumn(key).map { try decoder.decodeInteger(type, column: $0.column, storageClass: $0.storageClass, key: { AnyCodingKey(key) }) } }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try presentColumn(key).map { try decoder.decodeInteger(type, column: $0.column, storageClass: $0.storageClass, key: { AnyCodingKey(key) }) } }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try presentColumn(key).map { try decoder.decodeInteger(type, column: $0.column, storageClass: $0.storageClass, key: { AnyCodingKey(key) }) } }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        if decoder.isOverridden(key) { return try decoder.overriddenValue(type, key: key) }
        guard let present = presentColumn(key) else { return nil }
        return try decoder.decodeValue(type, column: present.column, key: { AnyCodingKey(key) })
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try ColumnDecoder(row: decoder, column: try column(key), key: AnyCodingKey(key)).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ColumnDecoder(row: decoder, column: try column(key), key: AnyCodingKey(key)).unkeyedContainer()
    }

    func superDecoder() throws -> any Swift.Decoder {
        try superDecoder(for: AnyCodingKey.super)
    }

    func superDecoder(forKey key: Key) throws -> any Swift.Decoder {
        try superDecoder(for: AnyCodingKey(key))
    }

    /// The value under `super` (a JSON column), or null when there is no such column.
    private func superDecoder(for key: AnyCodingKey) throws -> any Swift.Decoder {
        if let column = decoder.column(for: key) {
            return ColumnDecoder(row: decoder, column: column, key: key)
        }
        return JSONTreeDecoder(value: .null, path: decoder.basePath.appending(key), context: decoder.context, column: 0)
    }
}

/// Reads the columns of a row in order, for types that decode an unkeyed container from a
/// row of several columns.
struct RowUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let decoder: RowDecoder
    private(set) var currentIndex = 0

    init(decoder: RowDecoder) {
        self.decoder = decoder
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { Int(decoder.columnCount) }
    var isAtEnd: Bool { currentIndex >= Int(decoder.columnCount) }

    private var key: AnyCodingKey { AnyCodingKey(intValue: currentIndex) }

    private mutating func next<T>(_ type: T.Type, _ read: (Int32, AnyCodingKey) throws -> T) throws -> T {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, DecodingError.Context(
                codingPath: decoder.basePath.keys(appending: key),
                debugDescription: "Unkeyed container is at end: the row has \(decoder.columnCount) columns. SQL: \(decoder.context.sql)"))
        }
        let value = try read(Int32(currentIndex), key)
        currentIndex += 1
        return value
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, decoder.statement.type(at: Int32(currentIndex)) == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { let decoder = self.decoder; return try next(type) { column, key in try decoder.decodeBool(column: column, key: { key }) } }
    mutating func decode(_ type: String.Type) throws -> String { let decoder = self.decoder; return try next(type) { column, key in try decoder.decodeString(column: column, key: { key }) } }
    mutating func decode(_ type: Double.Type) throws -> Double { let decoder = self.decoder; return try next(type) { column, key in try decoder.decodeFloat(type, column: column, key: { key }) } }
    mutating func decode(_ type: Float.Type) throws -> Float { let decoder = self.decoder; return try next(type) { column, key in try decoder.decodeFloat(type, column: column, key: { key }) } }
    mutating func decode(_ type: Int.Type) throws -> Int { let decoder = self.decoder; return try next(type) { column, key in try decoder.decodeInteger(type, column: column, key: { key }) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { let decoder = self.decoder; return try next(type) { column, key in try decoder.decodeInteger(type, column: column, key: { key }) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { let decoder = self.decoder; return try next(type) { column, key in try decoder.decodeInteger(type, column: column, key: { key }) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { let decoder = self.decoder; return try next(type) { column, key in try decoder.decodeInteger(type, column: column, key: { key }) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { let decoder = self.decoder; return try next(type) { column, key in try decoder.decodeInteger(type, column: column, key: { key }) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { let decoder = self.decoder; return try next(type) { column, key in try decoder.decodeInteger(type, column: column, key: { key }) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { let decoder = self.decoder; return try next(type) { column, key in try decoder.decodeInteger(type, column: column, key: { key }) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { let decoder = self.decoder; return try next(type) { column, key in try decoder.decodeInteger(type, column: column, key: { key }) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { let decoder = self.decoder; return try next(type) { column, key in try decoder.decodeInteger(type, column: column, key: { key }) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { let decoder = self.decoder; return try next(type) { column, key in try decoder.decodeInteger(type, column: column, key: { key }) } }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let decoder = self.decoder
        return try next(type) { column, key in try decoder.decodeValue(type, column: column, key: { key }) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let decoder = self.decoder
        return try next(KeyedDecodingContainer<NestedKey>.self) { try ColumnDecoder(row: decoder, column: $0, key: $1).container(keyedBy: type) }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let decoder = self.decoder
        return try next((any UnkeyedDecodingContainer).self) { try ColumnDecoder(row: decoder, column: $0, key: $1).unkeyedContainer() }
    }

    mutating func superDecoder() throws -> any Swift.Decoder {
        let decoder = self.decoder
        return try next((any Swift.Decoder).self) { ColumnDecoder(row: decoder, column: $0, key: $1) }
    }
}
