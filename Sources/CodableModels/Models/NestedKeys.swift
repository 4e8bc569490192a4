import Foundation

/// Whether a filter can reach a member of a nested value stored as JSON, decided from the nested
/// type alone.
///
/// Filters reach into a nested value stored as JSON by property name. When a nested type's
/// `CodingKeys` rename that property or leave it out, or the type is stored as a single value or
/// an array, the filter would silently match nothing; ``problem(at:)`` lets it throw instead.
///
/// The answer depends only on the type, never on what was saved before (so a filter is accepted
/// or refused the same way in every process): the type's `init(from:)` is started on a decoder
/// that stops it at its first request, which shows the container it decodes and, for a keyed
/// one, its `CodingKeys` type, asked whether a key of the member's name exists. No user code runs
/// on made-up data: the first request throws.
package enum NestedKeys {
    /// How a nested type is stored.
    fileprivate enum Shape {
        /// A JSON object whose keys are `Key` (the type's `CodingKeys`).
        case object(any CodingKey.Type)
        /// A single value or an array.
        case notAnObject
        /// Not decodable, or it decodes in a way the probe cannot see: not checked.
        case unknown
    }

    /// A pure function of the type, remembered (the same answer every time).
    private static let shapes = Locked<[ObjectIdentifier: Shape]>([:])

    private static func shape(of type: Any.Type) -> Shape {
        let key = ObjectIdentifier(type)
        if let known = shapes.withLock({ $0[key] }) { return known }
        let shape = probe(type)
        shapes.withLock { $0[key] = shape }
        return shape
    }

    private static func probe(_ type: Any.Type) -> Shape {
        guard let decodable = type as? any Decodable.Type else { return .unknown }
        do {
            _ = try decodable.init(from: ShapeProbe())
            return .unknown
        } catch let stop as ShapeProbe.Stop {
            switch stop {
            case .keyed(let keys): return .object(keys)
            case .notKeyed: return .notAnObject
            }
        } catch {
            return .unknown
        }
    }

    /// One step of a JSON path: the member `member` of a value of a nested type.
    package struct Hop: Hashable, Sendable {
        package let type: ObjectIdentifier
        package let typeName: String
        package let member: String
        /// The nested type (not part of equality: `type` identifies it).
        private let nested: MetatypeBox

        package init(type: Any.Type, member: String) {
            self.type = ObjectIdentifier(type)
            typeName = String(describing: type)
            self.member = member
            nested = MetatypeBox(type)
        }

        package static func == (a: Hop, b: Hop) -> Bool { a.type == b.type && a.member == b.member }
        package func hash(into hasher: inout Hasher) {
            hasher.combine(type)
            hasher.combine(member)
        }

        fileprivate var shape: Shape { NestedKeys.shape(of: nested.type) }
    }

    /// Why a filter cannot find the hop's member in the stored JSON by name, or `nil` when it can
    /// (or when the type's decoding cannot be seen).
    package static func problem(at hop: Hop) -> String? {
        let type = hop.typeName, member = hop.member
        switch hop.shape {
        case .notAnObject:
            return "\(type) is not stored as a JSON object with a member per property (it encodes a single value "
                + "or an array), so its properties cannot be filtered on"
        case .object(let keys) where keys.init(stringValue: member) == nil:
            return "\(type) does not store its property `\(member)` under that name (its CodingKeys rename it or "
                + "leave it out), so filters cannot find it in the stored JSON. Remove the renaming, or query the "
                + "stored JSON with your own SQL (SQLite.Decoder and json_extract, on SQLite)"
        default:
            return nil
        }
    }
}

/// A metatype in a `Sendable` value.
private struct MetatypeBox: @unchecked Sendable {  // a metatype is an immutable, global value
    let type: Any.Type
    init(_ type: Any.Type) { self.type = type }
}

/// A decoder that stops whoever decodes from it at the first request, reporting what was asked.
private struct ShapeProbe: Swift.Decoder {
    enum Stop: Error {
        case keyed(any CodingKey.Type)
        case notKeyed
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw Stop.keyed(Key.self)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw Stop.notKeyed }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { throw Stop.notKeyed }
}
