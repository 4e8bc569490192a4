import Foundation

extension SQLite.Encoder {
    /// How coding keys become parameter names and JSON member names.
    ///
    /// ```swift
    /// encoder.keyEncodingStrategy = .convertToSnakeCase
    /// try encoder.encode(task, using: "INSERT INTO tasks (due_date) VALUES (:due_date)")
    /// ```
    public enum KeyEncodingStrategy: Sendable {
        /// The key as written: `dueDate` binds `:dueDate`.
        case useDefaultKeys
        /// Camel case to snake case: `dueDate` binds `:due_date`, `imageURL` binds `:image_url`.
        case convertToSnakeCase
        /// Your conversion, given the full coding path ending with the key to convert.
        case custom(@Sendable (_ codingPath: [any CodingKey]) -> any CodingKey)
    }

    /// How `Date` values are stored, in columns and inside JSON alike.
    ///
    /// ```swift
    /// encoder.dateEncodingStrategy = .millisecondsSince1970
    /// ```
    public enum DateEncodingStrategy: Sendable {
        /// The default: UTC text `YYYY-MM-DD HH:MM:SS.SSS…`, the ISO 8601 layout SQLite's own
        /// `datetime()` writes. It sorts chronologically, compares with `datetime('now')`, works
        /// with every SQLite date function, and keeps exactly the digits needed for the decoded
        /// `Date` to equal the original. Years 0–9999 (`Date.distantPast` included); other dates throw `EncodingError`.
        case iso8601
        /// Seconds since 1970-01-01 00:00:00 UTC, as REAL.
        case secondsSince1970
        /// Milliseconds since 1970-01-01 00:00:00 UTC, as REAL.
        case millisecondsSince1970
        /// `Date`'s own `Codable` form: seconds since 2001-01-01 00:00:00 UTC, as REAL.
        case deferredToDate
        /// Text from a `DateFormatter`.
        case formatted(DateFormatter)
        /// Your encoding, writing one value to the given encoder.
        case custom(@Sendable (_ date: Date, _ encoder: any Swift.Encoder) throws -> Void)
    }
}

extension SQLite.Encoder.KeyEncodingStrategy {
    /// Identifies the strategy in a statement's cached ``ParameterPlan``; `nil` for closures, which
    /// cannot be compared, so their plans are never shared.
    var planIdentifier: Int? {
        switch self {
        case .useDefaultKeys: 0
        case .convertToSnakeCase: 1
        case .custom: nil
        }
    }
}
