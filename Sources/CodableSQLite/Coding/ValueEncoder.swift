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

    /// The stored form of `value`.
    static func value<T: Encodable>(for value: T, at path: CodingPath, options: EncodingOptions) throws -> SQLite.Value {
        if T.self == Date.self {
            return try dateValue(identityCast(value, to: Date.self), at: path, options: options)
        } else if T.self == UUID.self {
            return .text(ValueParsing.text(of: identityCast(value, to: UUID.self)))
        } else if T.self == [String].self {
            return .text(JSONNode.text(of: identityCast(value, to: [String].self)))
        } else if T.self == Data.self {
            return .data(identityCast(value, to: Data.self))
        } else if T.self == URL.self {
            return .text(identityCast(value, to: URL.self).absoluteString)
        } else if T.self == Decimal.self {
            let decimal = identityCast(value, to: Decimal.self)
            guard !decimal.isNaN else {
                throw EncodingError.invalidValue(decimal, EncodingError.Context(
                    codingPath: path.keys, debugDescription: "Unable to store Decimal NaN in SQLite."))
            }
            return .text(decimal.description)
        }
        let encoder = ValueEncoder(path: path, options: options)
        try value.encode(to: encoder)
        return encoder.result
    }

    /// A date as a REAL number; a NaN date is an error (SQLite would store NULL).
    private static func number(_ value: Double, of date: Date, at path: CodingPath) throws -> SQLite.Value {
        guard !value.isNaN else {
            throw EncodingError.invalidValue(DateCoding.reportable(date), EncodingError.Context(
                codingPath: path.keys, debugDescription: "Unable to store a Date whose time is NaN: SQLite stores NaN as NULL."))
        }
        return .double(value)
    }

    static func dateValue(_ date: Date, at path: CodingPath, options: EncodingOptions) throws -> SQLite.Value {
        switch options.dateStrategy {
        case .iso8601:
            return .text(try DateCoding.text(for: date, path: path))
        case .secondsSince1970:
            return try number(date.timeIntervalSince1970, of: date, at: path)
        case .millisecondsSince1970:
            return try number(date.timeIntervalSince1970 * 1000, of: date, at: path)
        case .deferredToDate:
            return try number(date.timeIntervalSinceReferenceDate, of: date, at: path)
        case .formatted(let formatter):
            return .text(formatter.string(from: date))
        case .custom(let encode):
            let encoder = ValueEncoder(path: path, options: options)
            try encode(date, encoder)
            return encoder.result
        }
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
    func encode(_ value: Double) throws { single = .double(try ScalarEncoding.real(value, path: codingPath)) }
    func encode(_ value: Float) throws { single = .double(try ScalarEncoding.real(value, path: codingPath)) }
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
        single = .integer(try ScalarEncoding.integer(value, path: codingPath))
    }

    func encode<T: Encodable>(_ value: T) throws {
        single = try Self.value(for: value, at: path, options: options)
    }
}
