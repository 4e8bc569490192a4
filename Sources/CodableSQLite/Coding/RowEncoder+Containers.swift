import Foundation

/// Binds each key to the parameter of the same name.
struct RowKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: RowEncoder

    var codingPath: [any CodingKey] { encoder.codingPath }

    private func path(_ key: Key) -> [any CodingKey] { encoder.basePath.keys(appending: AnyCodingKey(key)) }

    mutating func encodeNil(forKey key: Key) throws {
        guard let target = try encoder.target(for: key, value: Optional<Int>.none as Any) else { return }
        try encoder.bindNull(to: target)
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws {
        guard let target = try encoder.target(for: key, value: value) else { return }
        try encoder.bind(Int64(value ? 1 : 0), to: target)
    }

    mutating func encode(_ value: String, forKey key: Key) throws {
        guard let target = try encoder.target(for: key, value: value) else { return }
        try encoder.bind(value, to: target)
    }

    mutating func encode(_ value: Double, forKey key: Key) throws {
        guard let target = try encoder.target(for: key, value: value) else { return }
        try encoder.bind(try StoredForm.real(value, path: path(key)), to: target)
    }

    mutating func encode(_ value: Float, forKey key: Key) throws {
        guard let target = try encoder.target(for: key, value: value) else { return }
        try encoder.bind(try StoredForm.real(value, path: path(key)), to: target)
    }

    mutating func encode(_ value: Int, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try encodeInteger(value, forKey: key) }

    @inline(__always)
    private func encodeInteger<I: BinaryInteger>(_ value: I, forKey key: Key) throws {
        guard let target = try encoder.target(for: key, value: value) else { return }
        try encoder.bind(try StoredForm.integer(value, path: path(key)), to: target)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let encoder = self.encoder
        try encoder.encodeProperty(value, forKey: key) { value in try encoder.target(for: key, value: value) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let box = JSONObjectBox()
        pendJSON(.object(box), forKey: key)
        return KeyedEncodingContainer(JSONKeyedEncodingContainer<NestedKey>(
            box: box, path: encoder.basePath.appending(key), options: encoder.options))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let box = JSONArrayBox()
        pendJSON(.array(box), forKey: key)
        return JSONUnkeyedEncodingContainer(box: box, path: encoder.basePath.appending(key), options: encoder.options)
    }

    mutating func superEncoder() -> any Swift.Encoder {
        superEncoder(forKey: AnyCodingKey.super)
    }

    mutating func superEncoder(forKey key: Key) -> any Swift.Encoder {
        superEncoder(forKey: AnyCodingKey(key))
    }

    private func superEncoder(forKey key: AnyCodingKey) -> any Swift.Encoder {
        let path = encoder.basePath.appending(key)
        do {
            if let target = try encoder.target(for: key, value: "super encoder") {
                return encoder.encoderBoundLater(to: target, path: path)
            }
        } catch {
            if encoder.deferredError == nil { encoder.deferredError = error }
        }
        return ValueEncoder(path: path, options: encoder.options)  // ignored: no parameter
    }

    /// Nested containers cannot throw: a missing parameter is reported when the row is done.
    private func pendJSON(_ node: JSONNode, forKey key: some CodingKey) {
        do {
            if let target = try encoder.target(for: key, value: "nested container") {
                encoder.bindLater(node, to: target)
            }
        } catch {
            if encoder.deferredError == nil { encoder.deferredError = error }
        }
    }
}

/// Binds values in order to the positional parameters `?1`, `?2`…
struct RowUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let encoder: RowEncoder
    private(set) var count = 0

    init(encoder: RowEncoder) {
        self.encoder = encoder
    }

    var codingPath: [any CodingKey] { encoder.codingPath }

    private var path: CodingPath { encoder.basePath.appending(index: count) }

    private mutating func nextTarget(_ value: @autoclosure () -> Any) throws -> ParameterTarget {
        let target = try encoder.positionalTarget(for: value(), elementIndex: count)
        count += 1
        return target
    }

    mutating func encodeNil() throws { try encoder.bindNull(to: try nextTarget(Optional<Int>.none as Any)) }
    mutating func encode(_ value: Bool) throws { try encoder.bind(Int64(value ? 1 : 0), to: try nextTarget(value)) }
    mutating func encode(_ value: String) throws { try encoder.bind(value, to: try nextTarget(value)) }

    mutating func encode(_ value: Double) throws {
        let real = try StoredForm.real(value, path: path.keys)
        try encoder.bind(real, to: try nextTarget(value))
    }

    mutating func encode(_ value: Float) throws {
        let real = try StoredForm.real(value, path: path.keys)
        try encoder.bind(real, to: try nextTarget(value))
    }

    mutating func encode(_ value: Int) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int8) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int16) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int32) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int64) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt8) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt16) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt32) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt64) throws { try encodeInteger(value) }

    private mutating func encodeInteger<I: BinaryInteger>(_ value: I) throws {
        let integer = try StoredForm.integer(value, path: path.keys)
        try encoder.bind(integer, to: try nextTarget(value))
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let elementPath = path
        try encoder.encodeValue(value, to: try nextTarget(value), path: elementPath)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let box = JSONObjectBox()
        let elementPath = path
        pendJSON(.object(box))
        return KeyedEncodingContainer(JSONKeyedEncodingContainer<NestedKey>(box: box, path: elementPath, options: encoder.options))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let box = JSONArrayBox()
        let elementPath = path
        pendJSON(.array(box))
        return JSONUnkeyedEncodingContainer(box: box, path: elementPath, options: encoder.options)
    }

    mutating func superEncoder() -> any Swift.Encoder {
        let elementPath = path
        do {
            return encoder.encoderBoundLater(to: try nextTarget("super encoder"), path: elementPath)
        } catch {
            if encoder.deferredError == nil { encoder.deferredError = error }
            return ValueEncoder(path: elementPath, options: encoder.options)
        }
    }

    private mutating func pendJSON(_ node: JSONNode) {
        do {
            encoder.bindLater(node, to: try nextTarget("nested container"))
        } catch {
            if encoder.deferredError == nil { encoder.deferredError = error }
        }
    }
}

/// A single value at the top of a row: a value SQLite stores directly binds `?1`; anything
/// else encodes itself into the row (a struct wrapped in a single-value container stays keyed).
struct RowSingleValueEncodingContainer: SingleValueEncodingContainer {
    let encoder: RowEncoder

    var codingPath: [any CodingKey] { encoder.codingPath }

    /// Every parameter already starts as NULL.
    mutating func encodeNil() throws {}

    mutating func encode(_ value: Bool) throws { try encoder.bind(Int64(value ? 1 : 0), to: try encoder.positionalTarget(for: value)) }
    mutating func encode(_ value: String) throws { try encoder.bind(value, to: try encoder.positionalTarget(for: value)) }

    mutating func encode(_ value: Double) throws {
        let real = try StoredForm.real(value, path: codingPath)
        try encoder.bind(real, to: try encoder.positionalTarget(for: value))
    }

    mutating func encode(_ value: Float) throws {
        let real = try StoredForm.real(value, path: codingPath)
        try encoder.bind(real, to: try encoder.positionalTarget(for: value))
    }

    mutating func encode(_ value: Int) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int8) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int16) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int32) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int64) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt8) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt16) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt32) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt64) throws { try encodeInteger(value) }

    private func encodeInteger<I: BinaryInteger>(_ value: I) throws {
        let integer = try StoredForm.integer(value, path: codingPath)
        try encoder.bind(integer, to: try encoder.positionalTarget(for: value))
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try encoder.encodeTopLevel(value)
    }
}
