/// The failure of ``identityCast(_:to:)`` when `U` is not `T`: a bug in the library, reported
/// as an error rather than a trap.
@usableFromInline package struct IdentityCastMismatch: Error, CustomStringConvertible {
    @usableFromInline package let from: Any.Type
    @usableFromInline package let to: Any.Type

    @usableFromInline
    package init(from: Any.Type, to: Any.Type) {
        self.from = from
        self.to = to
    }
    @usableFromInline package var description: String { "CodableModels internal error: \(from) is not \(to)" }
}

/// `value` as `T`, when `U` and `T` are the same type.
///
/// Generic coding code checks `T.self == Date.self` and then needs the value as a `Date`: a
/// dynamic cast (`as? Date`) would look up `Optional<T>` metadata at run time in unspecialized
/// code, which the hot decoding paths cannot afford. This helper checks the types itself (a
/// pointer comparison) and reinterprets the value only when they are identical, so a wrong
/// call throws instead of corrupting memory.
@inlinable @inline(__always)
package func identityCast<U, T>(_ value: U, to type: T.Type) throws -> T {
    guard U.self == T.self else { throw IdentityCastMismatch(from: U.self, to: T.self) }
    return unsafeBitCast(value, to: T.self)
}

/// `[String].self`, looked up once. The standard library prespecializes `Array<String>`, and code
/// naming `[String].self` looks its metadata up in a global table on every use; the fast paths for
/// string arrays compare against this instead.
@usableFromInline package let stringArrayType: Any.Type = [String].self

/// ``identityCast(_:to:)`` for a `[String]` going out as a `T` that is `[String]`.
@inlinable @inline(__always)
package func identityCast<T>(_ strings: [String], to type: T.Type) throws -> T {
    guard T.self == stringArrayType else { throw IdentityCastMismatch(from: stringArrayType, to: T.self) }
    return unsafeBitCast(strings, to: T.self)
}

/// ``identityCast(_:to:)`` for a `U` that is `[String]`, taken as one.
@inlinable @inline(__always)
package func stringArray<U>(_ value: U) throws -> [String] {
    guard U.self == stringArrayType else { throw IdentityCastMismatch(from: U.self, to: stringArrayType) }
    return unsafeBitCast(value, to: [String].self)
}
