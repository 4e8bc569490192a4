import Foundation

extension SQLite {
    /// A value as SQLite stores it: one of its five storage classes.
    ///
    /// ```swift
    /// let values: [SQLite.Value] = [.null, .integer(42), .double(1.5), .text("hi"), .data(Data([1, 2]))]
    /// values[1].intValue      // 42
    /// values[2].stringValue   // nil: the case does not match
    /// ```
    ///
    /// The accessors return `nil` when the case does not match; they never convert between
    /// storage classes. Literals work too: `["id": 1, "name": "a", "note": nil]`.
    public enum Value: Hashable, Sendable {
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
        /// SQLite.Value.integer(2).boolValue   // true
        /// ```
        public var boolValue: Bool? {
            if case .integer(let value) = self { return value != 0 }
            return nil
        }

        /// The integer as `Int`, or `nil` for another case or a value `Int` cannot hold.
        ///
        /// ```swift
        /// SQLite.Value.integer(7).intValue   // 7
        /// ```
        public var intValue: Int? {
            if case .integer(let value) = self { return Int(exactly: value) }
            return nil
        }

        /// The integer, or `nil` for any other case.
        ///
        /// ```swift
        /// SQLite.Value.integer(.max).int64Value   // 9223372036854775807
        /// ```
        public var int64Value: Int64? {
            if case .integer(let value) = self { return value }
            return nil
        }

        /// The double, or `nil` for any other case (an integer is not converted).
        ///
        /// ```swift
        /// SQLite.Value.double(0.5).doubleValue   // 0.5
        /// ```
        public var doubleValue: Double? {
            if case .double(let value) = self { return value }
            return nil
        }

        /// The text, or `nil` for any other case.
        ///
        /// ```swift
        /// SQLite.Value.text("a").stringValue   // "a"
        /// ```
        public var stringValue: String? {
            if case .text(let value) = self { return value }
            return nil
        }

        /// The bytes, or `nil` for any other case.
        ///
        /// ```swift
        /// SQLite.Value.data(Data()).dataValue   // 0 bytes
        /// ```
        public var dataValue: Data? {
            if case .data(let value) = self { return value }
            return nil
        }

        /// Whether this is ``null``.
        ///
        /// ```swift
        /// SQLite.Value.null.isNull   // true
        /// ```
        public var isNull: Bool {
            if case .null = self { return true }
            return false
        }

        /// The SQLite name of the storage class: `NULL`, `INTEGER`, `REAL`, `TEXT` or `BLOB`.
        ///
        /// ```swift
        /// SQLite.Value.double(1).storageClass   // "REAL"
        /// ```
        public var storageClass: String {
            switch self {
            case .null: "NULL"
            case .integer: "INTEGER"
            case .double: "REAL"
            case .text: "TEXT"
            case .data: "BLOB"
            }
        }
    }
}

extension SQLite.Value: CustomStringConvertible {
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

extension SQLite.Value: ExpressibleByNilLiteral {
    /// `nil` is ``null``.
    public init(nilLiteral: ()) { self = .null }
}

extension SQLite.Value: ExpressibleByIntegerLiteral {
    /// An integer literal is ``integer(_:)``.
    public init(integerLiteral value: Int64) { self = .integer(value) }
}

extension SQLite.Value: ExpressibleByFloatLiteral {
    /// A floating-point literal is ``double(_:)``.
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension SQLite.Value: ExpressibleByStringLiteral {
    /// A string literal is ``text(_:)``.
    public init(stringLiteral value: String) { self = .text(value) }
}

extension SQLite.Value: ExpressibleByBooleanLiteral {
    /// `true` is `.integer(1)` and `false` is `.integer(0)`, as SQLite stores booleans.
    public init(booleanLiteral value: Bool) { self = .integer(value ? 1 : 0) }
}
