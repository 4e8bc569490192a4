import Foundation

/// A value's top-level properties, each in the form its own column stores: the seam through which
/// an engine that keeps each property in a column (CodablePostgres) encodes many values without
/// building a JSON tree per value. ``JSONForm`` stays the general path, for values this one does
/// not take (see ``encode(_:slots:into:)``).
///
/// Each property is its stored form (``StoredForm``: integers, finite reals, text, blobs, dates as
/// the contract's UTC text, `Decimal`s as exact text, an enum as its raw value), or, for a column
/// that holds JSON, its JSON text: exactly the members ``JSONForm/members(of:)`` gives.
package enum ColumnForm {
    /// Where a property goes.
    package enum Slot: Sendable {
        /// Into `row[index]`: the stored value, or with `asJSON` the property's JSON text.
        case column(Int, asJSON: Bool)
        /// Nowhere: the property is stored another way (a relationship), and is not encoded.
        case skipped
    }

    /// A key the value encoded that has no slot (a property of no column).
    package struct UnknownKey: Error {
        package let name: String
    }

    /// Encodes `value`'s properties into `row`, one element per column; a column no property
    /// wrote (a nil optional) stays `nil`. Returns `false`, with `row` in no particular state, when
    /// the value does not encode as one flat keyed container (it asks for a nested container or a
    /// super encoder for one of its properties, or it is a single value): the caller then takes
    /// ``JSONForm/members(of:)``.
    ///
    /// Throws ``UnknownKey`` for a key with no slot, `EncodingError` for a value that cannot be
    /// stored (`Double.nan`, an integer outside `Int64`), with its coding path.
    package static func encode<T: Encodable>(_ value: T, slots: [String: Slot], into row: inout [StoredValue?]) throws -> Bool {
        if StoredForm.isSpecial(T.self) { return false }
        let encoder = ColumnFormEncoder(slots: slots, row: row)
        row = []   // the encoder's copy is then the only one: written in place
        defer { row = encoder.row }
        do {
            try value.encode(to: encoder)
        } catch where !encoder.isFlat {
            // Thrown inside a container handed out only to let the value finish: the JSON form
            // encodes the value again and reports the error with its whole coding path.
            return false
        }
        return encoder.isFlat
    }
}

/// The `Swift.Encoder` behind ``ColumnForm``: one keyed container writing straight into a row.
private final class ColumnFormEncoder: Swift.Encoder {
    let slots: [String: ColumnForm.Slot]
    /// Unchecked: an encoder is used by one thread, for one value.
    @exclusivity(unchecked) var row: [StoredValue?]
    /// Whether the value stayed one flat keyed container.
    var isFlat = true
    let options = EncodingOptions()

    init(slots: [String: ColumnForm.Slot], row: [StoredValue?]) {
        self.slots = slots
        self.row = row
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(ColumnFormContainer<Key>(encoder: self))
    }

    // Not a flat keyed container: the caller encodes the value again through its JSON form. The
    // containers handed out meanwhile only let the value's `encode(to:)` run to its end.
    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        isFlat = false
        return JSONTreeEncoder(path: .root, options: options).unkeyedContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        isFlat = false
        return JSONTreeEncoder(path: .root, options: options)
    }

    func slot(for key: some CodingKey) throws -> ColumnForm.Slot {
        guard let slot = slots[key.stringValue] else { throw ColumnForm.UnknownKey(name: key.stringValue) }
        return slot
    }
}

private struct ColumnFormContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: ColumnFormEncoder
    var codingPath: [any CodingKey] { [] }

    /// Stores `value` for `key`: `stored()` for a plain column, the JSON text for a JSON one.
    @inline(__always)
    private func put<T: Encodable>(_ value: T, _ key: Key, stored: () throws -> StoredValue) throws {
        guard case .column(let index, let asJSON) = try encoder.slot(for: key) else { return }
        if asJSON {
            if T.self == stringArrayType {
                // The common nested value, as ValueEncoder writes it: the same JSON text.
                encoder.row[index] = .text(JSONNode.text(of: try stringArray(value)))
                return
            }
            let node = try JSONTreeEncoder.node(for: value, at: CodingPath.root.appending(key), options: encoder.options)
            if case .null = node { encoder.row[index] = .null } else { encoder.row[index] = .text(node.text) }
        } else {
            encoder.row[index] = try stored()
        }
    }

    private func integer<I: BinaryInteger & Encodable>(_ value: I, _ key: Key) throws {
        try put(value, key) { .integer(try StoredForm.integer(value, path: [key])) }
    }

    private func real<F: BinaryFloatingPoint & LosslessStringConvertible & Encodable>(_ value: F, _ key: Key) throws {
        // Finite only, as in the JSON form: the engine reads reals back through JSON.
        try put(value, key) {
            _ = try StoredForm.jsonNumber(value, at: CodingPath.root.appending(key))
            return .double(Double(value))
        }
    }

    mutating func encodeNil(forKey key: Key) throws {
        guard case .column(let index, _) = try encoder.slot(for: key) else { return }
        encoder.row[index] = .null
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws { try put(value, key) { .integer(value ? 1 : 0) } }
    mutating func encode(_ value: String, forKey key: Key) throws { try put(value, key) { .text(value) } }
    mutating func encode(_ value: Double, forKey key: Key) throws { try real(value, key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try real(value, key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try put(value, key) { .integer(Int64(value)) } }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try put(value, key) { .integer(value) } }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try integer(value, key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try put(value, key) {
            let stored = try ValueEncoder.value(for: value, at: CodingPath.root.appending(key), options: encoder.options)
            if case .double(let real) = stored { _ = try StoredForm.jsonNumber(real, at: CodingPath.root.appending(key)) }
            return stored
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        encoder.isFlat = false
        return JSONTreeEncoder(path: .root, options: encoder.options).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.isFlat = false
        return JSONTreeEncoder(path: .root, options: encoder.options).unkeyedContainer()
    }

    mutating func superEncoder() -> any Swift.Encoder {
        encoder.isFlat = false
        return JSONTreeEncoder(path: .root, options: encoder.options)
    }

    mutating func superEncoder(forKey key: Key) -> any Swift.Encoder {
        encoder.isFlat = false
        return JSONTreeEncoder(path: .root, options: encoder.options)
    }
}
