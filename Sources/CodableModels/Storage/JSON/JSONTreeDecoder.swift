import Foundation

/// The `Swift.Decoder` for a value inside the JSON text of a column.
package final class JSONTreeDecoder: Swift.Decoder, SingleValueDecodingContainer {
    package let value: JSONValue
    package let path: CodingPath
    package let context: DecodingContext
    /// The column holding the JSON, for error messages.
    package let column: Int32

    package init(value: JSONValue, path: CodingPath, context: DecodingContext, column: Int32) {
        self.value = value
        self.path = path
        self.context = context
        self.column = column
    }

    package var codingPath: [any CodingKey] { path.keys }
    package var userInfo: [CodingUserInfoKey: Any] { context.options.codingUserInfo }

    package func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else {
            throw JSONScalars.unexpected([String: Any].self, value, path: path.keys, context: context, column: column)
        }
        return KeyedDecodingContainer(JSONKeyedDecodingContainer<Key>(
            members: JSONScalars.convertingKeys(members, at: path, options: context.options),
            originalMembers: members, path: path, context: context, column: column))
    }

    package func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else {
            throw JSONScalars.unexpected([Any].self, value, path: path.keys, context: context, column: column)
        }
        return JSONUnkeyedDecodingContainer(elements: elements, path: path, context: context, column: column)
    }

    package func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: SingleValueDecodingContainer

    package func decodeNil() -> Bool {
        if case .null = value { return true }
        return false
    }

    package func decode(_ type: Bool.Type) throws -> Bool { try JSONScalars.bool(value, path: path, context: context, column: column) }
    package func decode(_ type: String.Type) throws -> String { try JSONScalars.string(value, path: path, context: context, column: column) }
    package func decode(_ type: Double.Type) throws -> Double { try JSONScalars.float(type, value, path: path, context: context, column: column) }
    package func decode(_ type: Float.Type) throws -> Float { try JSONScalars.float(type, value, path: path, context: context, column: column) }
    package func decode(_ type: Int.Type) throws -> Int { try JSONScalars.integer(type, value, path: path, context: context, column: column) }
    package func decode(_ type: Int8.Type) throws -> Int8 { try JSONScalars.integer(type, value, path: path, context: context, column: column) }
    package func decode(_ type: Int16.Type) throws -> Int16 { try JSONScalars.integer(type, value, path: path, context: context, column: column) }
    package func decode(_ type: Int32.Type) throws -> Int32 { try JSONScalars.integer(type, value, path: path, context: context, column: column) }
    package func decode(_ type: Int64.Type) throws -> Int64 { try JSONScalars.integer(type, value, path: path, context: context, column: column) }
    package func decode(_ type: UInt.Type) throws -> UInt { try JSONScalars.integer(type, value, path: path, context: context, column: column) }
    package func decode(_ type: UInt8.Type) throws -> UInt8 { try JSONScalars.integer(type, value, path: path, context: context, column: column) }
    package func decode(_ type: UInt16.Type) throws -> UInt16 { try JSONScalars.integer(type, value, path: path, context: context, column: column) }
    package func decode(_ type: UInt32.Type) throws -> UInt32 { try JSONScalars.integer(type, value, path: path, context: context, column: column) }
    package func decode(_ type: UInt64.Type) throws -> UInt64 { try JSONScalars.integer(type, value, path: path, context: context, column: column) }
    package func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONScalars.value(type, value, path: path, context: context, column: column)
    }
}

package struct JSONKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    package let members: [String: JSONValue]
    /// Member names before the key strategy, to find `imageURL` written as `image_url`.
    package let originalMembers: [String: JSONValue]
    package let path: CodingPath
    package let context: DecodingContext
    package let column: Int32

    package var codingPath: [any CodingKey] { path.keys }
    package var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

    package func contains(_ key: Key) -> Bool { lookup(key) != nil }

    private func lookup(_ key: Key) -> JSONValue? {
        if let value = members[key.stringValue] { return value }
        if case .convertFromSnakeCase = context.options.keyStrategy {
            return originalMembers[KeyConversion.toSnakeCase(key.stringValue)]
        }
        return nil
    }

    private func member(_ key: Key) throws -> JSONValue {
        guard let value = lookup(key) else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(
                codingPath: path.keys,
                debugDescription: "No value associated with key \"\(key.stringValue)\"\(context.jsonLocation(column: column))."))
        }
        return value
    }

    private func present(_ key: Key) -> JSONValue? {
        guard let value = lookup(key) else { return nil }
        if case .null = value { return nil }
        return value
    }

    package func decodeNil(forKey key: Key) throws -> Bool {
        if case .null = try member(key) { return true }
        return false
    }

    package func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try JSONScalars.bool(try member(key), path: path.appending(key), context: context, column: column)
    }
    package func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try JSONScalars.string(try member(key), path: path.appending(key), context: context, column: column)
    }
    package func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try float(type, key) }
    package func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try float(type, key) }
    package func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(type, key) }
    package func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(type, key) }
    package func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(type, key) }
    package func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(type, key) }
    package func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(type, key) }
    package func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(type, key) }
    package func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(type, key) }
    package func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(type, key) }
    package func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(type, key) }
    package func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(type, key) }

    private func integer<I: FixedWidthInteger>(_ type: I.Type, _ key: Key) throws -> I {
        try JSONScalars.integer(type, try member(key), path: path.appending(key), context: context, column: column)
    }

    private func float<F: BinaryFloatingPoint & LosslessStringConvertible>(_ type: F.Type, _ key: Key) throws -> F {
        try JSONScalars.float(type, try member(key), path: path.appending(key), context: context, column: column)
    }

    package func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try JSONScalars.value(type, try member(key), in: path, key: key, context: context, column: column)
    }

    package func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = present(key) else { return nil }
        return try JSONScalars.value(type, value, in: path, key: key, context: context, column: column)
    }

    package func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try JSONTreeDecoder(value: try member(key), path: path.appending(key), context: context, column: column).container(keyedBy: type)
    }

    package func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try JSONTreeDecoder(value: try member(key), path: path.appending(key), context: context, column: column).unkeyedContainer()
    }

    package func superDecoder() throws -> any Swift.Decoder {
        JSONTreeDecoder(value: members["super"] ?? .null, path: path.appending(AnyCodingKey.super), context: context, column: column)
    }

    package func superDecoder(forKey key: Key) throws -> any Swift.Decoder {
        JSONTreeDecoder(value: lookup(key) ?? .null, path: path.appending(key), context: context, column: column)
    }
}

package struct JSONUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    package let elements: [JSONValue]
    package let path: CodingPath
    package let context: DecodingContext
    package let column: Int32
    package private(set) var currentIndex = 0

    package init(elements: [JSONValue], path: CodingPath, context: DecodingContext, column: Int32) {
        self.elements = elements
        self.path = path
        self.context = context
        self.column = column
    }

    package var codingPath: [any CodingKey] { path.keys }
    package var count: Int? { elements.count }
    package var isAtEnd: Bool { currentIndex >= elements.count }

    private mutating func next<T>(_ type: T.Type) throws -> (JSONValue, CodingPath) {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, DecodingError.Context(
                codingPath: path.keys(appending: AnyCodingKey(intValue: currentIndex)),
                debugDescription: "Unkeyed container is at end\(context.jsonLocation(column: column))."))
        }
        let element = elements[currentIndex]
        let elementPath = path.appending(index: currentIndex)
        currentIndex += 1
        return (element, elementPath)
    }

    package mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, case .null = elements[currentIndex] else { return false }
        currentIndex += 1
        return true
    }

    package mutating func decode(_ type: Bool.Type) throws -> Bool {
        let (element, elementPath) = try next(type)
        return try JSONScalars.bool(element, path: elementPath, context: context, column: column)
    }

    /// Strings are the common case (`[String]` columns): no path node unless an error needs one.
    package mutating func decode(_ type: String.Type) throws -> String {
        if currentIndex < elements.count, case .string(let text) = elements[currentIndex] {
            currentIndex += 1
            return text
        }
        let (element, elementPath) = try next(type)
        return try JSONScalars.string(element, path: elementPath, context: context, column: column)
    }

    package mutating func decode(_ type: Double.Type) throws -> Double { try float(type) }
    package mutating func decode(_ type: Float.Type) throws -> Float { try float(type) }
    package mutating func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    package mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    package mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    package mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    package mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    package mutating func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    package mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    package mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    package mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    package mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    private mutating func integer<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
        let (element, elementPath) = try next(type)
        return try JSONScalars.integer(type, element, path: elementPath, context: context, column: column)
    }

    private mutating func float<F: BinaryFloatingPoint & LosslessStringConvertible>(_ type: F.Type) throws -> F {
        let (element, elementPath) = try next(type)
        return try JSONScalars.float(type, element, path: elementPath, context: context, column: column)
    }

    package mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (element, elementPath) = try next(type)
        return try JSONScalars.value(type, element, path: elementPath, context: context, column: column)
    }

    package mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (element, elementPath) = try next(KeyedDecodingContainer<NestedKey>.self)
        return try JSONTreeDecoder(value: element, path: elementPath, context: context, column: column).container(keyedBy: type)
    }

    package mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (element, elementPath) = try next((any UnkeyedDecodingContainer).self)
        return try JSONTreeDecoder(value: element, path: elementPath, context: context, column: column).unkeyedContainer()
    }

    package mutating func superDecoder() throws -> any Swift.Decoder {
        let (element, elementPath) = try next((any Swift.Decoder).self)
        return JSONTreeDecoder(value: element, path: elementPath, context: context, column: column)
    }
}
