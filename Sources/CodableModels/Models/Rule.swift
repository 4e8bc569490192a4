import Foundation

/// A condition on one property's value, for ``Filter``. The value must have the property's type.
///
/// ```swift
/// Filter(\Person.age, is: .greater(than: 17))
/// Filter(\Person.name, is: .equal(to: "Bob"))          // exact, case-sensitive
/// Filter(\Person.nickname, is: .notEqual(to: nil))     // IS NOT NULL
/// Filter(\Person.eyeColor, is: .in([.blue, .brown]))
/// Filter(\Person.name, is: .hasPrefix("Bi"))
/// ```
public struct Rule<Value>: Sendable {
    package let condition: Result<Condition, ModelError>

    package init(_ make: () throws -> Condition) {
        do {
            condition = .success(try make())
        } catch let error as EncodingError {
            var message = "\(error)"
            if case .invalidValue(_, let context) = error { message = context.debugDescription }
            condition = .failure(ModelError(.invalidFilter, Value.self, message))
        } catch {
            condition = .failure(ModelError(.invalidFilter, Value.self, "\(error)"))
        }
    }

    package static func stored<V: Encodable>(_ value: V) throws -> StoredValue {
        try ValueEncoder.value(for: value, at: .root, options: EncodingOptions())
    }
}

extension Rule where Value: Encodable {
    /// Equal to `value`; `nil` matches NULL. Strings compare exactly.
    public static func equal(to value: Value) -> Rule { Rule { .equal(try stored(value)) } }
    /// Not equal to `value`, as in Swift: a `nil` property is not equal to a non-nil value, and
    /// `.notEqual(to: nil)` matches every non-NULL value.
    public static func notEqual(to value: Value) -> Rule { Rule { .notEqual(try stored(value)) } }
    /// Greater than `value`, in SQLite's order: numbers (and `Decimal`s) by value, text by
    /// bytes, dates chronologically.
    public static func greater(than value: Value) -> Rule { Rule { .compare(">", try stored(value)) } }
    /// Greater than or equal to `value`.
    public static func greaterOrEqual(to value: Value) -> Rule { Rule { .compare(">=", try stored(value)) } }
    /// Less than `value`.
    public static func less(than value: Value) -> Rule { Rule { .compare("<", try stored(value)) } }
    /// Less than or equal to `value`.
    public static func lessOrEqual(to value: Value) -> Rule { Rule { .compare("<=", try stored(value)) } }
    /// Between `lower` and `upper`, both included.
    public static func between(_ lower: Value, and upper: Value) -> Rule {
        Rule { .between(try stored(lower), try stored(upper)) }
    }
    /// Equal to one of `values` (`nil` in the list matches NULL). An empty list matches nothing.
    public static func `in`(_ values: [Value]) -> Rule { Rule { .member(try values.map { try stored($0) }, negated: false) } }
    /// Equal to none of `values`, as in Swift (`nil` is not in `[1, 2]`). An empty list matches everything.
    public static func notIn(_ values: [Value]) -> Rule { Rule { .member(try values.map { try stored($0) }, negated: true) } }
}

extension Rule where Value: _StringFilterValue {
    /// Text starting with `prefix`, case-sensitively.
    public static func hasPrefix(_ prefix: String) -> Rule { Rule { .text(.prefix, prefix) } }
    /// Text ending with `suffix`, case-sensitively.
    public static func hasSuffix(_ suffix: String) -> Rule { Rule { .text(.suffix, suffix) } }
    /// Text containing `text`, case-sensitively.
    public static func contains(_ text: String) -> Rule { Rule { .text(.contains, text) } }
    /// SQL `LIKE`: `%` matches any run of characters, `_` any one; ASCII letters match either case.
    public static func like(_ pattern: String) -> Rule { Rule { .like(pattern) } }
}

/// `String` and `String?`: the property types text rules (`hasPrefix`, `contains`, `like`…) apply to.
///
/// A marker with no requirements, public only because ``Rule``'s constraints name it; Sendable
/// does not apply.
public protocol _StringFilterValue {}
extension String: _StringFilterValue {}
extension Optional: _StringFilterValue where Wrapped == String {}

/// A compiled rule: what to compare and how, with the values in their stored form. Each engine
/// renders it in its SQL (``SQLDialect``).
package enum Condition: Sendable {
    case equal(StoredValue)
    case notEqual(StoredValue)
    case compare(String, StoredValue)
    case between(StoredValue, StoredValue)
    case member([StoredValue], negated: Bool)
    /// Literal text at the start, at the end or anywhere (case-sensitive).
    case text(TextMatch, String)
    case like(String)
}
