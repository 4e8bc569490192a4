import Foundation

/// The keys nested values of saved models are stored under, learned from the values themselves.
///
/// Filters reach into a nested value stored as JSON by property name. When a nested type's
/// `CodingKeys` rename that property, or the type is stored as a single value or an array, the
/// filter would silently match nothing; ``problem(at:)`` lets it throw instead.
///
/// The keys are learned when a model's table is prepared for saving, by encoding the nested
/// values of the value being saved (as saving does anyway): no user code runs on made-up data.
/// A nested type no saved value has shown in this process is not checked.
enum NestedKeys {
    /// How a nested type is stored: as a JSON object with these keys, or not as an object.
    private enum Shape {
        /// The keys one value encoded; `optionals` are its optional properties, which a nil
        /// value may leave out.
        case object(keys: Set<String>, optionals: Set<String>)
        case notAnObject
    }

    private static let learned = Locked<[ObjectIdentifier: Shape]>([:])

    /// Learns the shapes of the nested values in `value` (a model being saved), a few levels deep.
    static func learn(from value: Any, depth: Int = 0) {
        guard depth < 4, let fields = try? ModelReflection.storedFields(ofType: type(of: value)) else { return }
        for field in fields where StorageType.of(field.type) == (.untyped, false) {
            guard let nested = value[keyPath: field.keyPath] as? any Encodable else { continue }
            let key = ObjectIdentifier(field.type)
            if learned.withLock({ $0[key] }) == nil {
                guard let (keys, isKeyed) = try? KeyDiscovery.keys(of: nested),
                      let members = try? ModelReflection.storedFields(ofType: type(of: nested))
                else { continue }
                let optionals = Set(members.filter { StorageType.of($0.type).isOptional }.map(\.name))
                learned.withLock { $0[key] = isKeyed ? .object(keys: keys, optionals: optionals) : .notAnObject }
            }
            learn(from: nested, depth: depth + 1)
        }
    }

    /// One step of a JSON path: the member `member` of a value of a nested type.
    struct Hop: Hashable, Sendable {
        let type: ObjectIdentifier
        let typeName: String
        let member: String

        init(type: Any.Type, member: String) {
            self.type = ObjectIdentifier(type)
            typeName = String(describing: type)
            self.member = member
        }
    }

    /// Why a filter cannot find the hop's member in the stored JSON by name, or `nil` when it can
    /// (or when no saved value has shown how the nested type is stored).
    static func problem(at hop: Hop) -> String? {
        let type = hop.typeName, member = hop.member
        switch learned.withLock({ $0[hop.type] }) {
        case .notAnObject?:
            return "\(type) is not stored as a JSON object with a member per property (it encodes a single value "
                + "or an array), so its properties cannot be filtered on"
        case .object(let keys, let optionals)? where !keys.contains(member) && !optionals.contains(member):
            return "\(type) does not store its property `\(member)` under that name (its CodingKeys rename it; it "
                + "stores the keys \(keys.sorted().map { "\"\($0)\"" }.joined(separator: ", "))), so filters cannot "
                + "find it in the stored JSON. Remove the renaming, or query with SQLite.Decoder and json_extract"
        default:
            return nil
        }
    }
}
