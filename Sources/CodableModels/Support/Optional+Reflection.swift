/// Run-time questions about `Optional` that generic code cannot ask with `is`/`as`.
package protocol OptionalType {
    /// `Wrapped.self` of an `Optional<Wrapped>` type.
    static var wrappedType: Any.Type { get }
    /// Whether this value is `nil`.
    var isNone: Bool { get }
}

extension Optional: OptionalType {
    package static var wrappedType: Any.Type { Wrapped.self }
    package var isNone: Bool { self == nil }
}

/// Whether `value` is an `Optional` holding `nil` (`false` for every non-optional value).
///
/// The ids databases assign (`Int?`, `Int64?`) are answered by comparing types and reading the
/// value as itself; other types by an existential cast, which costs about 1,500 instructions in
/// unspecialized code (saving 10,000 models asks this for every one).
package func isNilOptional<V>(_ value: V) -> Bool {
    if V.self == Int?.self { return unsafeBitCast(value, to: Int?.self) == nil }
    if V.self == Int64?.self { return unsafeBitCast(value, to: Int64?.self) == nil }
    return (value as? any OptionalType)?.isNone ?? false
}

/// The type an `Optional` wraps and `true`, or `type` itself and `false`.
package func unwrappedOptionalType(_ type: Any.Type) -> (type: Any.Type, isOptional: Bool) {
    if let optional = type as? any OptionalType.Type { return (optional.wrappedType, true) }
    return (type, false)
}
