import Foundation

/// Learns which top-level keys a model encodes, without encoding values, so properties left out
/// of its `CodingKeys` are not given columns and renamed keys are reported.
package final class KeyDiscovery: Swift.Encoder {
    package private(set) var keys: [String] = []
    package private(set) var encodesKeyedContainer = false

    package var codingPath: [any CodingKey] { [] }
    package var userInfo: [CodingUserInfoKey: Any] { [:] }

    package static func keys<T: Encodable>(of value: T) throws -> (keys: Set<String>, isKeyed: Bool) {
        let discovery = KeyDiscovery()
        try value.encode(to: discovery)
        return (Set(discovery.keys), discovery.encodesKeyedContainer)
    }

    package func record(_ key: some CodingKey) {
        keys.append(key.stringValue)
    }

    package func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        encodesKeyedContainer = true
        return KeyedEncodingContainer(Recorder<Key>(discovery: self))
    }

    package func unkeyedContainer() -> any UnkeyedEncodingContainer {
        JSONUnkeyedEncodingContainer(box: JSONArrayBox(), path: .root, options: EncodingOptions())
    }

    package func singleValueContainer() -> any SingleValueEncodingContainer {
        JSONTreeEncoder(path: .root, options: EncodingOptions())
    }

    private struct Recorder<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let discovery: KeyDiscovery
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil(forKey key: Key) throws { discovery.record(key) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { discovery.record(key) }
        mutating func encode(_ value: String, forKey key: Key) throws { discovery.record(key) }
        mutating func encode(_ value: Double, forKey key: Key) throws { discovery.record(key) }
        mutating func encode(_ value: Float, forKey key: Key) throws { discovery.record(key) }
        mutating func encode(_ value: Int, forKey key: Key) throws { discovery.record(key) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { discovery.record(key) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { discovery.record(key) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { discovery.record(key) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { discovery.record(key) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { discovery.record(key) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { discovery.record(key) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { discovery.record(key) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { discovery.record(key) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { discovery.record(key) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { discovery.record(key) }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            discovery.record(key)
            return KeyedEncodingContainer(JSONKeyedEncodingContainer<NestedKey>(box: JSONObjectBox(), path: .root, options: EncodingOptions()))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            discovery.record(key)
            return JSONUnkeyedEncodingContainer(box: JSONArrayBox(), path: .root, options: EncodingOptions())
        }

        mutating func superEncoder() -> any Swift.Encoder {
            discovery.record(AnyCodingKey.super)
            return JSONTreeEncoder(path: .root, options: EncodingOptions())
        }

        mutating func superEncoder(forKey key: Key) -> any Swift.Encoder {
            discovery.record(key)
            return JSONTreeEncoder(path: .root, options: EncodingOptions())
        }
    }
}

extension ModelReflection {
    /// The properties values of the model store, learned from what `sample` encodes: each key must
    /// name a stored property (CodingKeys must not rename), non-optional properties the value does
    /// not encode get no column, and the id must be encoded.
    package func storedColumns<T: Model>(of sample: T) throws -> [Property] {
        let (keys, isKeyed) = try KeyDiscovery.keys(of: sample)
        guard isKeyed else {
            throw ModelError(.unsupportedModel, T.self, "does not encode a keyed container (a property per key), so it cannot be stored as a row")
        }
        let names = Set(properties.map(\.name) + relationships.map(\.name))
        if let renamed = keys.sorted().first(where: { !names.contains($0) }) {
            throw ModelError(.unsupportedModel, T.self, """
                encodes the key "\(renamed)", which is not the name of one of its stored properties. Models store each \
                property in a column named after it, so CodingKeys must not rename properties; remove the renaming, \
                or store the type with your own SQL (SQLite.Encoder, on SQLite).
                """)
        }
        let columns = properties.filter { keys.contains($0.name) || $0.isOptional }
        guard columns.contains(where: { $0.name == id.name }) else {
            throw ModelError(.unsupportedModel, T.self, "does not encode its `id`, so its rows could not be found again; add id to its CodingKeys")
        }
        return columns
    }
}
