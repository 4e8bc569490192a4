import Foundation

/// Turns one `Encodable` value into the `SQLite.Value` it is stored as: a single value as SQLite
/// stores it (so an enum stores its raw value, not a JSON fragment), keyed and unkeyed containers
/// as JSON text. Used for row parameters, filter values and key-value storage alike.
package final class ValueEncoder: Swift.Encoder, SingleValueEncodingContainer {
    private let path: CodingPath
    package let options: EncodingOptions
    /// Builds the JSON of keyed and unkeyed containers, made when one is asked for.
    private var tree: JSONTreeEncoder?
    private var single: StoredValue = .null

    package init(path: CodingPath, options: EncodingOptions) {
        self.path = path
        self.options = options
    }

    /// The stored form of `value` (see ``StoredForm``).
    /// `path` is made only for an error or a nested value.
    package static func value<T: Encodable>(for value: T, at path: @autoclosure () -> CodingPath, options: EncodingOptions) throws -> StoredValue {
        // The common ids and filter values first, without an encoder: the same values it stores.
        if T.self == Int.self {
            return .integer(Int64(try identityCast(value, to: Int.self)))
        } else if T.self == Int64.self {
            return .integer(try identityCast(value, to: Int64.self))
        } else if T.self == String.self {
            return .text(try identityCast(value, to: String.self))
        } else if StoredForm.isSpecial(T.self) {
            return try StoredForm.columnValue(StoredForm.encode(value, at: path(), options: options), at: path(), options: options)
        } else if T.self == stringArrayType {
            // A fast path for the most common nested value; the same JSON as the general path.
            return .text(JSONNode.text(of: try stringArray(value)))
        }
        let encoder = ValueEncoder(path: path(), options: options)
        try value.encode(to: encoder)
        return encoder.result
    }

    /// What was encoded: a single value as it is, containers as JSON text.
    package var result: StoredValue {
        tree?.root.map { .text($0.text) } ?? single
    }

    package var codingPath: [any CodingKey] { path.keys }
    package var userInfo: [CodingUserInfoKey: Any] { options.codingUserInfo }

    private var treeEncoder: JSONTreeEncoder {
        if let tree { return tree }
        let tree = JSONTreeEncoder(path: path, options: options)
        self.tree = tree
        return tree
    }

    package func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        treeEncoder.container(keyedBy: type)
    }

    package func unkeyedContainer() -> any UnkeyedEncodingContainer {
        treeEncoder.unkeyedContainer()
    }

    package func singleValueContainer() -> any SingleValueEncodingContainer { self }

    // MARK: SingleValueEncodingContainer

    package func encodeNil() throws { single = .null }
    package func encode(_ value: Bool) throws { single = .integer(value ? 1 : 0) }
    package func encode(_ value: String) throws { single = .text(value) }
    package func encode(_ value: Double) throws { single = .double(try StoredForm.real(value, path: codingPath)) }
    package func encode(_ value: Float) throws { single = .double(try StoredForm.real(value, path: codingPath)) }
    package func encode(_ value: Int) throws { try encodeInteger(value) }
    package func encode(_ value: Int8) throws { try encodeInteger(value) }
    package func encode(_ value: Int16) throws { try encodeInteger(value) }
    package func encode(_ value: Int32) throws { try encodeInteger(value) }
    package func encode(_ value: Int64) throws { try encodeInteger(value) }
    package func encode(_ value: UInt) throws { try encodeInteger(value) }
    package func encode(_ value: UInt8) throws { try encodeInteger(value) }
    package func encode(_ value: UInt16) throws { try encodeInteger(value) }
    package func encode(_ value: UInt32) throws { try encodeInteger(value) }
    package func encode(_ value: UInt64) throws { try encodeInteger(value) }

    private func encodeInteger<I: BinaryInteger>(_ value: I) throws {
        single = .integer(try StoredForm.integer(value, path: codingPath))
    }

    package func encode<T: Encodable>(_ value: T) throws {
        single = try Self.value(for: value, at: path, options: options)
    }
}
