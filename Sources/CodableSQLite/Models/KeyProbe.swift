import Foundation

/// Learns, without any data, which keys a type's `init(from:)` reads at its top level: a decoder
/// that answers every request with a placeholder and records the keys asked for.
///
/// Filters reach into nested values stored as JSON by property name, so a nested type whose
/// `CodingKeys` rename its properties (or that is not stored as a JSON object at all) would make
/// a filter silently match nothing; ``problem(in:member:)`` finds those cases so the filter can throw.
final class KeyProbe: Swift.Decoder {
    /// What the probed type's top level asked for.
    final class Record: @unchecked Sendable {  // filled by one probe, then only read
        enum Shape { case keyed, unkeyed, singleValue }
        var shape: Shape?
        var keys: [String] = []
        /// Whether `init(from:)` accepted the placeholders, so `keys` has every key it reads.
        var isComplete = false
    }

    private let record: Record
    private let depth: Int

    private init(record: Record, depth: Int) {
        self.record = record
        self.depth = depth
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Why a filter cannot find `type`'s property `member` in its stored JSON by name, or `nil`
    /// when it can (or when the probe cannot tell, because the type rejected a placeholder first).
    static func problem(in type: Any.Type, member: String) -> String? {
        let record = cache.withLock { $0[ObjectIdentifier(type)] } ?? {
            let record = probe(type)
            cache.withLock { $0[ObjectIdentifier(type)] = record }
            return record
        }()
        switch record.shape {
        case .unkeyed?, .singleValue?:
            return "\(type) is not stored as a JSON object with a member per property (its Codable form is "
                + "\(record.shape == .unkeyed ? "an array" : "a single value")), so its properties cannot be filtered on"
        case .keyed? where record.isComplete && !record.keys.contains(member):
            return "\(type) does not store its property `\(member)` under that name (its CodingKeys rename it; it "
                + "stores the keys \(record.keys.map { "\"\($0)\"" }.joined(separator: ", "))), so filters cannot find "
                + "it in the stored JSON. Remove the renaming, or query with SQLite.Decoder and json_extract"
        default:
            return nil
        }
    }

    private static let cache = Locked<[ObjectIdentifier: Record]>([:])

    private static func probe(_ type: Any.Type) -> Record {
        let record = Record()
        guard let decodable = type as? any Decodable.Type else { return record }
        record.isComplete = (try? decodable.init(from: KeyProbe(record: record, depth: 0))) != nil
        return record
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        if depth == 0, record.shape == nil { record.shape = .keyed }
        return KeyedDecodingContainer(Keyed<Key>(probe: self))
    }

    func unkeyedContainer() -> any UnkeyedDecodingContainer {
        if depth == 0, record.shape == nil { record.shape = .unkeyed }
        return Empty()
    }

    func singleValueContainer() -> any SingleValueDecodingContainer {
        if depth == 0, record.shape == nil { record.shape = .singleValue }
        return Single(probe: self)
    }

    /// A placeholder `T`: a fixed value for Foundation's scalar types, else `T` decoded from a probe
    /// one level down (so nested keys are not recorded). Recursion stops at a fixed depth.
    fileprivate func placeholder<T: Decodable>(_ type: T.Type) throws -> T {
        let fixed: Any? = switch type {
        case is String.Type: ""
        case is Bool.Type: false
        case is UUID.Type: UUID()
        case is Date.Type: Date(timeIntervalSince1970: 0)
        case is URL.Type: URL(fileURLWithPath: "/")
        case is Data.Type: Data()
        case is Decimal.Type: Decimal(0)
        default: nil
        }
        if let value = fixed as? T { return value }
        if let number = type as? any Numeric.Type, let zero = number.zero as? T { return zero }
        guard depth < 8 else { throw KeyProbeLimit() }
        return try T(from: KeyProbe(record: record, depth: depth + 1))
    }

    fileprivate func note(_ key: some CodingKey) {
        if depth == 0 { record.keys.append(key.stringValue) }
    }

    private struct KeyProbeLimit: Error {}

    private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let probe: KeyProbe
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { [] }

        func contains(_ key: Key) -> Bool { probe.note(key); return true }
        func decodeNil(forKey key: Key) throws -> Bool { probe.note(key); return false }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            probe.note(key)
            return try probe.placeholder(type)
        }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { probe.note(key); return false }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { probe.note(key); return "" }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { probe.note(key); return 0 }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { probe.note(key); return 0 }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { probe.note(key); return 0 }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { probe.note(key); return 0 }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { probe.note(key); return 0 }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { probe.note(key); return 0 }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { probe.note(key); return 0 }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { probe.note(key); return 0 }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { probe.note(key); return 0 }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { probe.note(key); return 0 }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { probe.note(key); return 0 }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { probe.note(key); return 0 }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) -> KeyedDecodingContainer<NestedKey> {
            probe.note(key)
            return KeyedDecodingContainer(Keyed<NestedKey>(probe: KeyProbe(record: probe.record, depth: probe.depth + 1)))
        }
        func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedDecodingContainer { probe.note(key); return Empty() }
        func superDecoder() -> any Swift.Decoder { KeyProbe(record: probe.record, depth: probe.depth + 1) }
        func superDecoder(forKey key: Key) -> any Swift.Decoder {
            probe.note(key)
            return KeyProbe(record: probe.record, depth: probe.depth + 1)
        }
    }

    private struct Single: SingleValueDecodingContainer {
        let probe: KeyProbe
        var codingPath: [any CodingKey] { [] }
        func decodeNil() -> Bool { false }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try probe.placeholder(type) }
        func decode(_ type: Bool.Type) throws -> Bool { try probe.placeholder(type) }
        func decode(_ type: String.Type) throws -> String { try probe.placeholder(type) }
        func decode(_ type: Double.Type) throws -> Double { try probe.placeholder(type) }
        func decode(_ type: Float.Type) throws -> Float { try probe.placeholder(type) }
        func decode(_ type: Int.Type) throws -> Int { try probe.placeholder(type) }
        func decode(_ type: Int8.Type) throws -> Int8 { try probe.placeholder(type) }
        func decode(_ type: Int16.Type) throws -> Int16 { try probe.placeholder(type) }
        func decode(_ type: Int32.Type) throws -> Int32 { try probe.placeholder(type) }
        func decode(_ type: Int64.Type) throws -> Int64 { try probe.placeholder(type) }
        func decode(_ type: UInt.Type) throws -> UInt { try probe.placeholder(type) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try probe.placeholder(type) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try probe.placeholder(type) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try probe.placeholder(type) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try probe.placeholder(type) }
    }

    /// An empty array.
    private struct Empty: UnkeyedDecodingContainer {
        var codingPath: [any CodingKey] { [] }
        var count: Int? { 0 }
        var isAtEnd: Bool { true }
        var currentIndex: Int { 0 }
        private func end(_ type: Any.Type) -> DecodingError {
            DecodingError.valueNotFound(type, DecodingError.Context(codingPath: [], debugDescription: "placeholder array"))
        }
        mutating func decodeNil() throws -> Bool { throw end(Never.self) }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { throw end(type) }
        mutating func decode(_ type: Bool.Type) throws -> Bool { throw end(type) }
        mutating func decode(_ type: String.Type) throws -> String { throw end(type) }
        mutating func decode(_ type: Double.Type) throws -> Double { throw end(type) }
        mutating func decode(_ type: Float.Type) throws -> Float { throw end(type) }
        mutating func decode(_ type: Int.Type) throws -> Int { throw end(type) }
        mutating func decode(_ type: Int8.Type) throws -> Int8 { throw end(type) }
        mutating func decode(_ type: Int16.Type) throws -> Int16 { throw end(type) }
        mutating func decode(_ type: Int32.Type) throws -> Int32 { throw end(type) }
        mutating func decode(_ type: Int64.Type) throws -> Int64 { throw end(type) }
        mutating func decode(_ type: UInt.Type) throws -> UInt { throw end(type) }
        mutating func decode(_ type: UInt8.Type) throws -> UInt8 { throw end(type) }
        mutating func decode(_ type: UInt16.Type) throws -> UInt16 { throw end(type) }
        mutating func decode(_ type: UInt32.Type) throws -> UInt32 { throw end(type) }
        mutating func decode(_ type: UInt64.Type) throws -> UInt64 { throw end(type) }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            throw end(type)
        }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { throw end(Never.self) }
        mutating func superDecoder() throws -> any Swift.Decoder { throw end(Never.self) }
    }
}
