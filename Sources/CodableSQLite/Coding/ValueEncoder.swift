import Foundation

/// Turns one `Encodable` value into the ``SQLite/Value`` it is stored as: a single value as SQLite
/// stores it (so an enum stores its raw value, not a JSON fragment), keyed and unkeyed containers
/// as JSON text. Used for row parameters, filter values and key-value storage alike.
final class ValueEncoder: Swift.Encoder, SingleValueEncodingContainer {
    private let path: CodingPath
    let options: EncodingOptions
    private var root: JSONNode?
    private var single: SQLite.Value = .null

    init(path: CodingPath, options: EncodingOptions) {
        self.path = path
        self.options = options
    }

    /// The stored form of `value` (see ``StoredForm``).
    static func value<T: Encodable>(for value: T, at path: CodingPath, options: EncodingOptions) throws -> SQLite.Value {
        if StoredForm.isSpecial(T.self) {
            return try StoredForm.columnValue(StoredForm.encode(value, at: path, options: options), at: path, options: options)
        } else if T.self == [String].self {
            // A fast path for the most common nested value; the same JSON as the general path.
            return .text(JSONNode.text(of: try identityCast(value, to: [String].self)))
        }
        let encoder = ValueEncoder(path: path, options: options)
        try value.encode(to: encoder)
        return encoder.result
    }

    /// What was encoded: a single value as it is, containers as JSON text.
    var result: SQLite.Value {
        root.map { .text($0.text) } ?? single
    }

    var codingPath: [any CodingKey] { path.keys }
    var userInfo: [CodingUserInfoKey: Any] { options.codingUserInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let box: JSONObjectBox
        if case .object(let existing)? = root {
            box = existing
        } else {
            box = JSONObjectBox()
            root = .object(box)
        }
        return KeyedEncodingContainer(JSONKeyedEncodingContainer<Key>(box: box, path: path, options: options))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let box: JSONArrayBox
        if case .array(let existing)? = root {
            box = existing
        } else {
            box = JSONArrayBox()
            root = .array(box)
        }
        return JSONUnkeyedEncodingContainer(box: box, path: path, options: options)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    // MARK: SingleValueEncodingContainer

    func encodeNil() throws { single = .null }
    func encode(_ value: Bool) throws { single = .integer(value ? 1 : 0) }
    func encode(_ value: String) throws { single = .text(value) }
    func encode(_ value: Double) throws { single = .double(try StoredForm.real(value, path: codingPath)) }
    func encode(_ value: Float) throws { single = .double(try StoredForm.real(value, path: codingPath)) }
    func encode(_ value: Int) throws { try encodeInteger(value) }
    func encode(_ value: Int8) throws { try encodeInteger(value) }
    func encode(_ value: Int16) throws { try encodeInteger(value) }
    func encode(_ value: Int32) throws { try encodeInteger(value) }
    func encode(_ value: Int64) throws { try encodeInteger(value) }
    func encode(_ value: UInt) throws { try encodeInteger(value) }
    func encode(_ value: UInt8) throws { try encodeInteger(value) }
    func encode(_ value: UInt16) throws { try encodeInteger(value) }
    func encode(_ value: UInt32) throws { try encodeInteger(value) }
    func encode(_ value: UInt64) throws { try encodeInteger(value) }

    private func encodeInteger<I: BinaryInteger>(_ value: I) throws {
        single = .integer(try StoredForm.integer(value, path: codingPath))
    }

    func encode<T: Encodable>(_ value: T) throws {
        single = try Self.value(for: value, at: path, options: options)
    }
}
