import Foundation

/// The strategies of the public coders (`SQLite.Encoder`, `SQLite.Decoder`): how keys become
/// names and how dates are stored. The storage contract implements them, in columns and inside
/// JSON alike; models always use the defaults. Spelled `CodingStrategy.DateEncoding` and
/// so on, where they are set:
///
/// ```swift
/// let encoder = SQLite.Encoder(database: db)
/// encoder.dateEncodingStrategy = .millisecondsSince1970
/// ```
///
/// Sendable: a namespace without cases; the strategies are Sendable enums.
public enum CodingStrategy: Sendable {
    /// How coding keys become parameter names and JSON member names.
    ///
    /// ```swift
    /// encoder.keyEncodingStrategy = .convertToSnakeCase
    /// try encoder.encode(task, using: "INSERT INTO tasks (due_date) VALUES (:due_date)")
    /// ```
    public enum KeyEncoding: Sendable {
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
    public enum DateEncoding: Sendable {
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

    /// How column names and JSON member names become coding keys.
    ///
    /// ```swift
    /// decoder.keyDecodingStrategy = .convertFromSnakeCase
    /// let tasks = try decoder.decode([Task].self, using: "SELECT id, title, due_date FROM tasks")
    /// ```
    public enum KeyDecoding: Sendable {
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
    public enum DateDecoding: Sendable {
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

/// A snapshot of an encoder's settings, taken once per call.
@usableFromInline package struct EncodingOptions: Sendable {
    /// The defaults (the model layer's options).
    @inlinable package init() {}

    @usableFromInline package var keyStrategy: CodingStrategy.KeyEncoding = .useDefaultKeys
    @usableFromInline package var dateStrategy: CodingStrategy.DateEncoding = .iso8601
    @usableFromInline package var ignoresUnusedProperties = false
    @usableFromInline package var userInfo: [CodingUserInfoKey: any Sendable] = [:]
    /// Top-level keys the layer above encodes itself (see ``RowOverrides``).
    @usableFromInline package var overrides: RowOverrides?

    @usableFromInline package var codingUserInfo: [CodingUserInfoKey: Any] { userInfo }

    /// The name a key has after the key strategy, for parameters and JSON members.
    @usableFromInline package func name(for key: some CodingKey, at path: CodingPath) -> String {
        switch keyStrategy {
        case .useDefaultKeys: key.stringValue
        case .convertToSnakeCase: KeyConversion.toSnakeCase(key.stringValue)
        case .custom(let convert): convert(path.keys(appending: key)).stringValue
        }
    }
}

/// A snapshot of a decoder's settings, taken once per call.
@usableFromInline package struct DecodingOptions: Sendable {
    /// The defaults (the model layer's options).
    @inlinable package init() {}

    @usableFromInline package var keyStrategy: CodingStrategy.KeyDecoding = .useDefaultKeys
    @usableFromInline package var dateStrategy: CodingStrategy.DateDecoding = .iso8601
    @usableFromInline package var userInfo: [CodingUserInfoKey: any Sendable] = [:]
    /// Top-level keys the layer above decodes itself (see ``RowOverrides``).
    @usableFromInline package var overrides: RowOverrides?

    @usableFromInline package var codingUserInfo: [CodingUserInfoKey: Any] { userInfo }

    /// Whether these are the options `DecodingOptions()` makes (the model layer's), for which a
    /// statement keeps its decoder between calls.
    @inlinable package var isDefault: Bool {
        guard case .useDefaultKeys = keyStrategy, case .iso8601 = dateStrategy else { return false }
        return userInfo.isEmpty && overrides == nil
    }

    @usableFromInline package var convertsKeys: Bool {
        if case .useDefaultKeys = keyStrategy { return false }
        return true
    }

    /// The coding key string a column name or JSON member name stands for.
    @usableFromInline package func keyName(for name: String, at path: CodingPath) -> String {
        switch keyStrategy {
        case .useDefaultKeys: name
        case .convertFromSnakeCase: KeyConversion.fromSnakeCase(name)
        case .custom(let convert): convert(path.keys(appending: AnyCodingKey(stringValue: name))).stringValue
        }
    }
}
