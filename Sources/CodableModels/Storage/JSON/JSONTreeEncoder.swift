import Foundation

/// The `Swift.Encoder` for values nested inside a JSON column: it builds a ``JSONNode``.
///
/// Dates inside JSON are written exactly as date columns are (same strategy, same text), so
/// `json_extract(payload, '$.due') = dueDate` holds in SQL.
package final class JSONTreeEncoder: Swift.Encoder, SingleValueEncodingContainer {
    private let path: CodingPath
    package let options: EncodingOptions
    /// Where a `superEncoder` delivers its value.
    private let reference: JSONReferenceBox?
    package private(set) var root: JSONNode? {
        didSet { reference?.node = root }
    }

    package init(path: CodingPath, options: EncodingOptions, reference: JSONReferenceBox? = nil) {
        self.path = path
        self.options = options
        self.reference = reference
    }

    package var codingPath: [any CodingKey] { path.keys }
    package var userInfo: [CodingUserInfoKey: Any] { options.codingUserInfo }

    /// The JSON for any value; something that encodes nothing is an empty object, as in JSONEncoder.
    package static func node<T: Encodable>(for value: T, at path: CodingPath, options: EncodingOptions) throws -> JSONNode {
        if StoredForm.isSpecial(T.self) {
            return try StoredForm.jsonNode(StoredForm.encode(value, at: path, options: options), at: path, options: options)
        }
        let encoder = JSONTreeEncoder(path: path, options: options)
        try value.encode(to: encoder)
        return encoder.root ?? .object(JSONObjectBox())
    }

    package func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let box: JSONObjectBox
        if case .object(let existing)? = root {
            box = existing
        } else {
            box = JSONObjectBox()
            root = .object(box)
        }
        return KeyedEncodingContainer(JSONKeyedEncodingContainer<Key>(box: box, path: path, options: options))
    }

    package func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let box: JSONArrayBox
        if case .array(let existing)? = root {
            box = existing
        } else {
            box = JSONArrayBox()
            root = .array(box)
        }
        return JSONUnkeyedEncodingContainer(box: box, path: path, options: options)
    }

    package func singleValueContainer() -> any SingleValueEncodingContainer { self }

    // MARK: SingleValueEncodingContainer

    package func encodeNil() throws { root = .null }
    package func encode(_ value: Bool) throws { root = .bool(value) }
    package func encode(_ value: String) throws { root = .string(value) }
    package func encode(_ value: Double) throws { root = try StoredForm.jsonNumber(value, at: path) }
    package func encode(_ value: Float) throws { root = try StoredForm.jsonNumber(value, at: path) }
    package func encode(_ value: Int) throws { root = .number(String(value)) }
    package func encode(_ value: Int8) throws { root = .number(String(value)) }
    package func encode(_ value: Int16) throws { root = .number(String(value)) }
    package func encode(_ value: Int32) throws { root = .number(String(value)) }
    package func encode(_ value: Int64) throws { root = .number(String(value)) }
    package func encode(_ value: UInt) throws { root = .number(String(value)) }
    package func encode(_ value: UInt8) throws { root = .number(String(value)) }
    package func encode(_ value: UInt16) throws { root = .number(String(value)) }
    package func encode(_ value: UInt32) throws { root = .number(String(value)) }
    package func encode(_ value: UInt64) throws { root = .number(String(value)) }
    package func encode<T: Encodable>(_ value: T) throws { root = try Self.node(for: value, at: path, options: options) }
}

package struct JSONKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    package let box: JSONObjectBox
    package let path: CodingPath
    package let options: EncodingOptions

    package init(box: JSONObjectBox, path: CodingPath, options: EncodingOptions) {
        self.box = box
        self.path = path
        self.options = options
    }

    package var codingPath: [any CodingKey] { path.keys }

    private func name(_ key: some CodingKey) -> String { options.name(for: key, at: path) }

    package mutating func encodeNil(forKey key: Key) throws { box.set(name(key), .null) }
    package mutating func encode(_ value: Bool, forKey key: Key) throws { box.set(name(key), .bool(value)) }
    package mutating func encode(_ value: String, forKey key: Key) throws { box.set(name(key), .string(value)) }
    package mutating func encode(_ value: Double, forKey key: Key) throws {
        box.set(name(key), try StoredForm.jsonNumber(value, at: path.appending(key)))
    }
    package mutating func encode(_ value: Float, forKey key: Key) throws {
        box.set(name(key), try StoredForm.jsonNumber(value, at: path.appending(key)))
    }
    package mutating func encode(_ value: Int, forKey key: Key) throws { box.set(name(key), .number(String(value))) }
    package mutating func encode(_ value: Int8, forKey key: Key) throws { box.set(name(key), .number(String(value))) }
    package mutating func encode(_ value: Int16, forKey key: Key) throws { box.set(name(key), .number(String(value))) }
    package mutating func encode(_ value: Int32, forKey key: Key) throws { box.set(name(key), .number(String(value))) }
    package mutating func encode(_ value: Int64, forKey key: Key) throws { box.set(name(key), .number(String(value))) }
    package mutating func encode(_ value: UInt, forKey key: Key) throws { box.set(name(key), .number(String(value))) }
    package mutating func encode(_ value: UInt8, forKey key: Key) throws { box.set(name(key), .number(String(value))) }
    package mutating func encode(_ value: UInt16, forKey key: Key) throws { box.set(name(key), .number(String(value))) }
    package mutating func encode(_ value: UInt32, forKey key: Key) throws { box.set(name(key), .number(String(value))) }
    package mutating func encode(_ value: UInt64, forKey key: Key) throws { box.set(name(key), .number(String(value))) }

    package mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        box.set(name(key), try JSONTreeEncoder.node(for: value, at: path.appending(key), options: options))
    }

    package mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let child = JSONObjectBox()
        box.set(name(key), .object(child))
        return KeyedEncodingContainer(JSONKeyedEncodingContainer<NestedKey>(box: child, path: path.appending(key), options: options))
    }

    package mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = JSONArrayBox()
        box.set(name(key), .array(child))
        return JSONUnkeyedEncodingContainer(box: child, path: path.appending(key), options: options)
    }

    package mutating func superEncoder() -> any Swift.Encoder {
        superEncoder(for: AnyCodingKey.super)
    }

    package mutating func superEncoder(forKey key: Key) -> any Swift.Encoder {
        superEncoder(for: AnyCodingKey(key))
    }

    private func superEncoder(for key: AnyCodingKey) -> any Swift.Encoder {
        let reference = JSONReferenceBox()
        box.set(name(key), .reference(reference))
        return JSONTreeEncoder(path: path.appending(key), options: options, reference: reference)
    }
}

package struct JSONUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    package let box: JSONArrayBox
    package let path: CodingPath
    package let options: EncodingOptions

    package init(box: JSONArrayBox, path: CodingPath, options: EncodingOptions) {
        self.box = box
        self.path = path
        self.options = options
    }

    package var codingPath: [any CodingKey] { path.keys }
    package var count: Int { box.elements.count }

    private var elementPath: CodingPath { path.appending(index: box.elements.count) }

    package mutating func encodeNil() throws { box.elements.append(.null) }
    package mutating func encode(_ value: Bool) throws { box.elements.append(.bool(value)) }
    package mutating func encode(_ value: String) throws { box.elements.append(.string(value)) }
    package mutating func encode(_ value: Double) throws { box.elements.append(try StoredForm.jsonNumber(value, at: elementPath)) }
    package mutating func encode(_ value: Float) throws { box.elements.append(try StoredForm.jsonNumber(value, at: elementPath)) }
    package mutating func encode(_ value: Int) throws { box.elements.append(.number(String(value))) }
    package mutating func encode(_ value: Int8) throws { box.elements.append(.number(String(value))) }
    package mutating func encode(_ value: Int16) throws { box.elements.append(.number(String(value))) }
    package mutating func encode(_ value: Int32) throws { box.elements.append(.number(String(value))) }
    package mutating func encode(_ value: Int64) throws { box.elements.append(.number(String(value))) }
    package mutating func encode(_ value: UInt) throws { box.elements.append(.number(String(value))) }
    package mutating func encode(_ value: UInt8) throws { box.elements.append(.number(String(value))) }
    package mutating func encode(_ value: UInt16) throws { box.elements.append(.number(String(value))) }
    package mutating func encode(_ value: UInt32) throws { box.elements.append(.number(String(value))) }
    package mutating func encode(_ value: UInt64) throws { box.elements.append(.number(String(value))) }

    package mutating func encode<T: Encodable>(_ value: T) throws {
        box.elements.append(try JSONTreeEncoder.node(for: value, at: elementPath, options: options))
    }

    package mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let child = JSONObjectBox()
        let childPath = elementPath
        box.elements.append(.object(child))
        return KeyedEncodingContainer(JSONKeyedEncodingContainer<NestedKey>(box: child, path: childPath, options: options))
    }

    package mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let child = JSONArrayBox()
        let childPath = elementPath
        box.elements.append(.array(child))
        return JSONUnkeyedEncodingContainer(box: child, path: childPath, options: options)
    }

    package mutating func superEncoder() -> any Swift.Encoder {
        let reference = JSONReferenceBox()
        let childPath = elementPath
        box.elements.append(.reference(reference))
        return JSONTreeEncoder(path: childPath, options: options, reference: reference)
    }
}
