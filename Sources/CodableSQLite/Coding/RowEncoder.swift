import Foundation

/// Where one encoded value goes: a parameter index, plus the indexes of the same name written
/// with another prefix (`:id` and `@id` in one statement).
struct ParameterTarget {
    let index: Int32
    let extraIndexes: [Int32]?
}

/// Parameter lookups for one statement, kept on the statement between calls.
final class ParameterPlan {
    let strategy: Int
    let ignoresUnusedProperties: Bool
    /// Keys in the order values encode them, with their parameters (`nil`: none, ignored).
    /// Unchecked: a plan is used by its statement's connection only, one thread at a time.
    @exclusivity(unchecked) var lookups: [(key: String, target: ParameterTarget?)] = []
    /// The parameters of the last `RowEncodable` type encoded, and the last type found to encode
    /// through plain Codable (see ``RowEncoder/generatedParameters(for:)``).
    var generated: GeneratedParameters?
    var plainEncodedType: ObjectIdentifier?

    init(strategy: Int, ignoresUnusedProperties: Bool) {
        self.strategy = strategy
        self.ignoresUnusedProperties = ignoresUnusedProperties
    }

    /// The plan cached on `statement` for these options, made when missing.
    static func plan(for statement: Statement, options: EncodingOptions) -> ParameterPlan {
        let strategy = options.keyStrategy.planIdentifier
        if let strategy, let plan = statement.plans.parameters, plan.strategy == strategy,
           plan.ignoresUnusedProperties == options.ignoresUnusedProperties {
            return plan
        }
        let plan = ParameterPlan(strategy: strategy ?? -1, ignoresUnusedProperties: options.ignoresUnusedProperties)
        if strategy != nil { statement.plans.parameters = plan }
        return plan
    }
}

/// The `Swift.Encoder` that binds one value's properties straight to a prepared statement.
///
/// Parameter indexes are resolved once per statement (see ``ParameterPlan``): lookups are
/// remembered in the order values encode their keys, so a row costs about one string comparison
/// per key, even when nil optionals skip some. Nested containers become JSON text, bound once
/// `encode(to:)` returns.
final class RowEncoder: Swift.Encoder {
    let statement: Statement
    let options: EncodingOptions
    let plan: ParameterPlan
    /// Unchecked: an encoder is used by one thread, and the check cost one runtime call per key.
    @exclusivity(unchecked) private var lookupCursor = 0
    /// The index of the array element being encoded, first in every coding path.
    var elementIndex: Int?

    private var nextPositionalIndex: Int32 = 1
    /// Values built by nested containers and super encoders, bound once the row is encoded.
    private var pendingValues: [(target: ParameterTarget, value: () throws -> SQLite.Value)] = []
    /// An error found where Codable does not let us throw (nested container requests).
    var deferredError: (any Error)?

    init(statement: Statement, options: EncodingOptions) {
        self.statement = statement
        self.options = options
        plan = ParameterPlan.plan(for: statement, options: options)
    }

    var codingPath: [any CodingKey] { basePath.keys }
    var userInfo: [CodingUserInfoKey: Any] { options.codingUserInfo }

    var basePath: CodingPath {
        elementIndex.map { CodingPath.root.appending(index: $0) } ?? .root
    }

    /// Binds every parameter for `value` (the others stay NULL); the caller then steps.
    func encodeRow<T: Encodable>(_ value: T) throws {
        statement.clearBindings()
        lookupCursor = 0
        nextPositionalIndex = 1
        if !pendingValues.isEmpty { pendingValues.removeAll(keepingCapacity: true) }
        deferredError = nil
        try encodeTopLevel(value)
        if let deferredError { throw deferredError }
        for pending in pendingValues {
            try bind(try pending.value(), to: pending.target)
        }
    }

    func encodeTopLevel<T: Encodable>(_ value: T) throws {
        if StoredForm.isSpecial(T.self) {
            try encodeValue(value, to: try positionalTarget(for: value), path: basePath)
        } else if let generated = generatedParameters(for: T.self) {
            try encodeGenerated(value, generated)
        } else {
            try value.encode(to: self)
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(RowKeyedEncodingContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        RowUnkeyedEncodingContainer(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        RowSingleValueEncodingContainer(encoder: self)
    }

    // MARK: Parameters

    /// The parameter for `key`, or `nil` when it has none and unused properties are ignored.
    @inline(__always)
    func target(for key: some CodingKey, value: @autoclosure () -> Any) throws -> ParameterTarget? {
        let name = key.stringValue
        if lookupCursor < plan.lookups.count, plan.lookups[lookupCursor].key == name {
            lookupCursor += 1
            return plan.lookups[lookupCursor - 1].target
        }
        return try slowTarget(name: name, key: key, value: value)
    }

    /// A key met out of the usual order (a nil optional was skipped) or for the first time.
    private func slowTarget(name: String, key: any CodingKey, value: () -> Any) throws -> ParameterTarget? {
        if let index = plan.lookups.firstIndex(where: { $0.key == name }) {
            lookupCursor = index + 1
            return plan.lookups[index].target
        }
        let target = parameterTarget(for: key)
        if target == nil && !options.ignoresUnusedProperties {
            let parameterName = options.name(for: key, at: basePath)
            let parameters = statement.parameters
            let known = parameters.writtenNames.isEmpty ? "it has no named parameters" :
                "its parameters are " + parameters.writtenNames.joined(separator: ", ")
            throw EncodingError.invalidValue(value(), EncodingError.Context(
                codingPath: basePath.keys(appending: key),
                debugDescription: "The SQL has no parameter :\(parameterName) for key \"\(name)\" (\(known)); "
                    + "add :\(parameterName) to the SQL, or set ignoresUnusedProperties to skip it. SQL: \(statement.sql)"))
        }
        plan.lookups.append((name, target))
        lookupCursor = plan.lookups.count
        return target
    }

    /// The parameter the key strategy names for `key`, or `nil` when the SQL has none.
    func parameterTarget(for key: some CodingKey) -> ParameterTarget? {
        let parameterName = options.name(for: key, at: basePath)
        let parameters = statement.parameters
        guard let index = parameters.indexes[parameterName] else { return nil }
        return ParameterTarget(index: index, extraIndexes: parameters.extraIndexes[parameterName])
    }

    /// A property of any type under `key` (`target` finds its parameter, given the value to bind
    /// for its error): what the layer above binds instead when it overrides the key, else the
    /// value's stored form.
    func encodeProperty<T: Encodable>(_ value: T, forKey key: some CodingKey, target: (Any) throws -> ParameterTarget?) throws {
        if let overrides = options.overrides, overrides.keys.contains(key.stringValue), let encode = overrides.encode {
            switch try encode(key.stringValue, value) {
            case .skip:
                return
            case .value(let replacement):
                guard let parameter = try target(replacement) else { return }
                try encodeValue(replacement, to: parameter, path: basePath.appending(key))
                return
            }
        }
        guard let parameter = try target(value) else { return }
        try encodeValue(value, to: parameter, path: basePath.appending(key))
    }

    /// The next positional parameter (`?1`, `?2`…), for unkeyed and single values.
    /// `elementIndex` is the value's position in an unkeyed container, for the error's coding path.
    func positionalTarget(for value: @autoclosure () -> Any, elementIndex: Int? = nil) throws -> ParameterTarget {
        let count = statement.parameters.count
        guard nextPositionalIndex <= count else {
            throw EncodingError.invalidValue(value(), EncodingError.Context(
                codingPath: elementIndex.map { basePath.appending(index: $0).keys } ?? codingPath,
                debugDescription: "The SQL has \(count) parameter(s), too few for the values encoded in order. SQL: \(statement.sql)"))
        }
        nextPositionalIndex += 1
        return ParameterTarget(index: nextPositionalIndex - 1, extraIndexes: nil)
    }

    /// Remembers JSON to bind once the whole value is encoded.
    func bindLater(_ node: JSONNode, to target: ParameterTarget) {
        pendingValues.append((target, { .text(node.text) }))
    }

    /// An encoder for one parameter, bound once the whole value is encoded: what `superEncoder()`
    /// returns, so a super value is stored like any other value (single values as they are).
    func encoderBoundLater(to target: ParameterTarget, path: CodingPath) -> any Swift.Encoder {
        let encoder = ValueEncoder(path: path, options: options)
        pendingValues.append((target, { encoder.result }))
        return encoder
    }

    // MARK: Binding

    func bindNull(to target: ParameterTarget) throws {
        try statement.bindNull(at: target.index)
        try bindExtras(.null, to: target)
    }

    func bind(_ value: Int64, to target: ParameterTarget) throws {
        try statement.bind(value, at: target.index)
        try bindExtras(.integer(value), to: target)
    }

    func bind(_ value: Double, to target: ParameterTarget) throws {
        try statement.bind(value, at: target.index)
        try bindExtras(.double(value), to: target)
    }

    func bind(_ value: String, to target: ParameterTarget) throws {
        try statement.bind(value, at: target.index)
        try bindExtras(.text(value), to: target)
    }

    func bind(_ value: Data, to target: ParameterTarget) throws {
        try statement.bind(value, at: target.index)
        try bindExtras(.data(value), to: target)
    }

    @inline(__always)
    private func bindExtras(_ value: @autoclosure () -> SQLite.Value, to target: ParameterTarget) throws {
        guard let extraIndexes = target.extraIndexes else { return }
        let value = value()
        for index in extraIndexes { try statement.bind(value, at: index) }
    }

    func bind(_ value: SQLite.Value, to target: ParameterTarget) throws {
        try statement.bind(value, at: target.index)
        try bindExtras(value, to: target)
    }

    /// Binds any `Encodable` value in its stored form (see ``ValueEncoder``).
    func encodeValue<T: Encodable>(_ value: T, to target: ParameterTarget, path: @autoclosure () -> CodingPath) throws {
        try bind(try ValueEncoder.value(for: value, at: path(), options: options), to: target)
    }
}
