import Foundation

extension SQLite.Decoder {
    /// How column names and JSON member names become coding keys.
    ///
    /// ```swift
    /// decoder.keyDecodingStrategy = .convertFromSnakeCase
    /// let tasks = try decoder.decode([Task].self, using: "SELECT id, title, due_date FROM tasks")
    /// ```
    public enum KeyDecodingStrategy: Sendable {
        /// Names as they are: column `dueDate` fills key `dueDate`.
        case useDefaultKeys
        /// Snake case to camel case: column `due_date` fills key `dueDate`.
        case convertFromSnakeCase
        /// Your conversion, given the coding path ending with the column or member name.
        case custom(@Sendable (_ codingPath: [any CodingKey]) -> any CodingKey)
    }

    /// How `Date` values are read, from columns and inside JSON alike.
    ///
    /// ```swift
    /// decoder.dateDecodingStrategy = .millisecondsSince1970
    /// ```
    public enum DateDecodingStrategy: Sendable {
        /// The default. Text in any form SQLite's date functions accept — `YYYY-MM-DD`,
        /// `YYYY-MM-DD HH:MM`, `YYYY-MM-DD HH:MM:SS`, `YYYY-MM-DD HH:MM:SS.SSS…`, with `T` in place of
        /// the space, with `Z` or a `±HH:MM` offset, or a time `HH:MM[:SS[.SSS…]]` alone — and
        /// INTEGER or REAL values as seconds since 1970 (Unix time).
        case iso8601
        /// INTEGER or REAL seconds since 1970-01-01 00:00:00 UTC.
        case secondsSince1970
        /// INTEGER or REAL milliseconds since 1970-01-01 00:00:00 UTC.
        case millisecondsSince1970
        /// `Date`'s own `Codable` form: REAL seconds since 2001-01-01 00:00:00 UTC.
        case deferredToDate
        /// Text parsed by a `DateFormatter`.
        case formatted(DateFormatter)
        /// Your decoding, reading one value from the given decoder.
        case custom(@Sendable (_ decoder: any Swift.Decoder) throws -> Date)
    }
}

extension SQLite.Decoder.KeyDecodingStrategy {
    /// Identifies the strategy in a statement's cached ``ColumnPlan``; `nil` for closures, which
    /// cannot be compared, so their plans are never shared.
    var planIdentifier: Int? {
        switch self {
        case .useDefaultKeys: 0
        case .convertFromSnakeCase: 1
        case .custom: nil
        }
    }
}
