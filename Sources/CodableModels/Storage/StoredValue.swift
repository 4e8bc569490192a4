import Foundation

/// A stored value, one of the five forms of the storage contract, which are SQLite's storage
/// classes; PostgreSQL stores each in the column type the model declares. Spelled
/// `StoredValue` too.
///
/// ```swift
/// let values: [StoredValue] = [.null, .integer(42), .double(1.5), .text("hi"), .data(Data([1, 2]))]
/// values[1].intValue      // 42
/// values[2].stringValue   // nil: the case does not match
/// ```
///
/// The accessors return `nil` when the case does not match; they never convert between
/// storage classes. Literals work too: `["id": 1, "name": "a", "note": nil]`.
public enum StoredValue: Hashable, Sendable {
    /// SQL `NULL`.
    case null
    /// A 64-bit signed integer (`INTEGER`).
    case integer(Int64)
    /// An IEEE 754 double (`REAL`).
    case double(Double)
    /// UTF-8 text (`TEXT`).
    case text(String)
    /// Bytes (`BLOB`). A zero-length blob is `.data(Data())`, never `.null`.
    case data(Data)

    /// `true` for a non-zero integer, `false` for zero, `nil` for any other case.
    ///
    /// ```swift
    /// StoredValue.integer(2).boolValue   // true
    /// ```
    public var boolValue: Bool? {
        if case .integer(let value) = self { return value != 0 }
        return nil
    }

    /// The integer as `Int`, or `nil` for another case or a value `Int` cannot hold.
    ///
    /// ```swift
    /// StoredValue.integer(7).intValue   // 7
    /// ```
    public var intValue: Int? {
        if case .integer(let value) = self { return Int(exactly: value) }
        return nil
    }

    /// The integer, or `nil` for any other case.
    ///
    /// ```swift
    /// StoredValue.integer(.max).int64Value   // 9223372036854775807
    /// ```
    public var int64Value: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The double, or `nil` for any other case (an integer is not converted).
    ///
    /// ```swift
    /// StoredValue.double(0.5).doubleValue   // 0.5
    /// ```
    public var doubleValue: Double? {
        if case .double(let value) = self { return value }
        return nil
    }

    /// The text, or `nil` for any other case.
    ///
    /// ```swift
    /// StoredValue.text("a").stringValue   // "a"
    /// ```
    public var stringValue: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    /// The bytes, or `nil` for any other case.
    ///
    /// ```swift
    /// StoredValue.data(Data()).dataValue   // 0 bytes
    /// ```
    public var dataValue: Data? {
        if case .data(let value) = self { return value }
        return nil
    }

    /// Whether this is ``null``.
    ///
    /// ```swift
    /// StoredValue.null.isNull   // true
    /// ```
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The SQLite name of the storage class: `NULL`, `INTEGER`, `REAL`, `TEXT` or `BLOB`.
    ///
    /// ```swift
    /// StoredValue.double(1).storageClass   // "REAL"
    /// ```
    package var storageClass: String {
        switch self {
        case .null: "NULL"
        case .integer: "INTEGER"
        case .double: "REAL"
        case .text: "TEXT"
        case .data: "BLOB"
        }
    }
}

extension StoredValue {
    // Equality and hashing written out and inlinable: the synthesized ones are calls from the
    // engines' modules, where ids and stored values are dictionary keys in every graph save.
    // Same meaning as synthesized: equal cases with equal payloads (so `.double(.nan)` is not
    // equal to itself and `.double(0)` equals `.double(-0.0)`, as `Double` says).

    /// Whether both are the same case with equal payloads.
    @inlinable
    public static func == (left: StoredValue, right: StoredValue) -> Bool {
        switch (left, right) {
        case (.null, .null): true
        case (.integer(let a), .integer(let b)): a == b
        case (.double(let a), .double(let b)): a == b
        case (.text(let a), .text(let b)): a == b
        case (.data(let a), .data(let b)): a == b
        default: false
        }
    }

    /// Hashes the case and its payload.
    @inlinable
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0 as UInt8)
        case .integer(let value): hasher.combine(1 as UInt8); hasher.combine(value)
        case .double(let value): hasher.combine(2 as UInt8); hasher.combine(value)
        case .text(let value): hasher.combine(3 as UInt8); hasher.combine(value)
        case .data(let value): hasher.combine(4 as UInt8); hasher.combine(value)
        }
    }
}

extension StoredValue: CustomStringConvertible {
    /// The value written as an SQL literal: `NULL`, `42`, `1.5`, `'it''s'`, `x'0102'`.
    public var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let value): return String(value)
        case .double(let value): return String(value)
        case .text(let value): return "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
        case .data(let value): return "x'" + value.map { String(format: "%02x", $0) }.joined() + "'"
        }
    }
}

extension StoredValue: ExpressibleByNilLiteral {
    /// `nil` is ``null``.
    public init(nilLiteral: ()) { self = .null }
}

extension StoredValue: ExpressibleByIntegerLiteral {
    /// An integer literal is ``integer(_:)``.
    public init(integerLiteral value: Int64) { self = .integer(value) }
}

extension StoredValue: ExpressibleByFloatLiteral {
    /// A floating-point literal is ``double(_:)``.
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension StoredValue: ExpressibleByStringLiteral {
    /// A string literal is ``text(_:)``.
    public init(stringLiteral value: String) { self = .text(value) }
}

extension StoredValue: ExpressibleByBooleanLiteral {
    /// `true` is `.integer(1)` and `false` is `.integer(0)`, as SQLite stores booleans.
    public init(booleanLiteral value: Bool) { self = .integer(value ? 1 : 0) }
}

/// The storage class of one value in a result row, as SQLite reports it (a
/// ``StoredValue``'s case, without the value).
@usableFromInline package enum StorageClass: Sendable {
    case integer, real, text, blob, null

    /// Written out and inlinable: the synthesized `==` is a call from the engines' modules, in
    /// their hottest loop (every column read compares its storage class).
    @inlinable package static func == (left: StorageClass, right: StorageClass) -> Bool {
        switch (left, right) {
        case (.integer, .integer), (.real, .real), (.text, .text), (.blob, .blob), (.null, .null): true
        default: false
        }
    }

    /// How the storage class is named in errors: `an INTEGER value`, `NULL`.
    @usableFromInline package var description: String {
        switch self {
        case .integer: "an INTEGER value"
        case .real: "a REAL value"
        case .text: "a TEXT value"
        case .blob: "a BLOB value"
        case .null: "NULL"
        }
    }
}
