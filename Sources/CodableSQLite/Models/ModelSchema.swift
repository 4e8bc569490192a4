@_spi(Reflection) import Swift
import Foundation

/// The stored properties of a model type, read with Swift's runtime reflection, and what they
/// become in SQLite.
struct ModelSchema: @unchecked Sendable {  // immutable after creation; AnyKeyPath and Any.Type are immutable values
    struct Property: @unchecked Sendable {  // AnyKeyPath and Any.Type are immutable
        let name: String
        let keyPath: AnyKeyPath
        let type: Any.Type
        let storage: StorageType
        let isOptional: Bool
    }

    let modelType: Any.Type
    let table: String
    let properties: [Property]
    let id: Property
    /// Whether SQLite assigns the id (an optional integer id, `nil` until saved).
    let assignsID: Bool

    func property(named name: String) -> Property? {
        properties.first { $0.name == name }
    }

    /// The schema of `T`, computed once per type.
    static func of<T: Model>(_ type: T.Type) throws -> ModelSchema {
        let key = ObjectIdentifier(T.self)
        if let cached = cache.withLock({ $0[key] }) { return try cached.get() }
        let result = Result { try make(T.self) }
        cache.withLock { $0[key] = result }
        return try result.get()
    }

    private static let cache = Locked<[ObjectIdentifier: Result<ModelSchema, any Error>]>([:])

    private static func make<T: Model>(_ type: T.Type) throws -> ModelSchema {
        let fields = try storedFields(of: T.self)
        guard !fields.isEmpty else {
            throw ModelError(T.self, "has no stored properties to save; models are structs (or final classes) with stored properties")
        }
        let properties = fields.map { field in
            let (storage, isOptional) = StorageType.of(field.type)
            return Property(name: field.name, keyPath: field.keyPath, type: field.type, storage: storage, isOptional: isOptional)
        }
        guard let id = properties.first(where: { $0.name == "id" }) else {
            throw ModelError(T.self, "has no stored property named `id`; a model needs one (UUID, String, Int, Int64 or an optional integer)")
        }
        let assignsID = id.isOptional
        if assignsID && id.storage != .integer {
            throw ModelError(T.self, "has an optional `id` of type \(id.type); only optional integer ids (Int?, Int64?) can be assigned on insert. Make the id non-optional.")
        }
        let table = T.tableName
        guard !table.isEmpty else { throw ModelError(T.self, "has an empty tableName") }
        return ModelSchema(modelType: T.self, table: table, properties: properties, id: id, assignsID: assignsID)
    }

    struct Field {
        let name: String
        let keyPath: AnyKeyPath
        let type: Any.Type
    }

    /// ``storedFields(of:)`` for a type known only at run time.
    static func storedFields(ofType type: Any.Type) throws -> [Field] {
        func open<T>(_ type: T.Type) throws -> [Field] { try storedFields(of: type) }
        return try _openExistential(type, do: open)
    }

    /// Stored properties with their names, key paths and types, in declaration order.
    static func storedFields<Root>(of type: Root.Type) throws -> [Field] {
        var options: _EachFieldOptions = []
        // `.classType` (raw value 1) is declared as a mutable static, which Swift 6 rejects; spell its value.
        if Root.self is AnyClass { options.insert(_EachFieldOptions(rawValue: 1)) }
        var names: [String] = []
        var keyPaths: [AnyKeyPath] = []
        let keyPathsRead = _forEachFieldWithKeyPath(of: Root.self, options: options) { name, keyPath in
            names.append(String(cString: name))
            keyPaths.append(keyPath)
            return true
        }
        var types: [Any.Type] = []
        let typesRead = _forEachField(of: Root.self, options: options) { _, _, type, _ in
            types.append(type)
            return true
        }
        guard keyPathsRead, typesRead, names.count == types.count else {
            throw ModelError(Root.self, "cannot be reflected: Swift's runtime does not list its stored properties (is it a struct or a final class?)")
        }
        return (0..<names.count).map { Field(name: names[$0], keyPath: keyPaths[$0], type: types[$0]) }
    }
}

/// How a Swift type is declared in a table, which decides SQLite's type affinity for the column.
enum StorageType: String, Sendable {
    case integer = "INTEGER"
    case real = "REAL"
    case text = "TEXT"
    case blob = "BLOB"
    /// No declared type: values are stored exactly as encoded (JSON text, custom encodings).
    case untyped = ""

    /// The storage for `type`, and whether it is an `Optional`.
    static func of(_ type: Any.Type) -> (StorageType, isOptional: Bool) {
        if let optional = type as? any OptionalType.Type {
            return (of(optional.wrappedType).0, true)
        }
        return (nonOptional(type), false)
    }

    private static func nonOptional(_ type: Any.Type) -> StorageType {
        switch type {
        case is Bool.Type, is Int.Type, is Int8.Type, is Int16.Type, is Int32.Type, is Int64.Type,
             is UInt.Type, is UInt8.Type, is UInt16.Type, is UInt32.Type, is UInt64.Type:
            return .integer
        case is Double.Type, is Float.Type:
            return .real
        case is String.Type, is Date.Type, is UUID.Type, is URL.Type, is Decimal.Type:
            return .text
        case is Data.Type:
            return .blob
        default:
            if let rawRepresentable = type as? any RawRepresentable.Type {
                return nonOptional(rawValueType(of: rawRepresentable))
            }
            return .untyped
        }
    }

    /// The default a `NOT NULL` column gets, used only for columns a newer version of the model no
    /// longer writes.
    var zeroDefault: String {
        switch self {
        case .integer: "0"
        case .real: "0.0"
        case .text, .untyped: "''"
        case .blob: "x''"
        }
    }
}

private func rawValueType<R: RawRepresentable>(of type: R.Type) -> Any.Type { R.RawValue.self }

protocol OptionalType {
    static var wrappedType: Any.Type { get }
}

extension Optional: OptionalType {
    static var wrappedType: Any.Type { Wrapped.self }
}

/// A value behind a lock, for caches shared by every thread.
final class Locked<Value>: @unchecked Sendable {  // every access goes through `lock`
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
