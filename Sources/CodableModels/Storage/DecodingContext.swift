import Foundation

/// What every decoder of one statement shares: the options, and what error messages name
/// (the SQL and its columns).
@usableFromInline package final class DecodingContext {
    @usableFromInline package let options: DecodingOptions
    @usableFromInline package let sql: String
    @usableFromInline package let columnNames: [String]

    @usableFromInline package init(options: DecodingOptions, sql: String, columnNames: [String]) {
        self.options = options
        self.sql = sql
        self.columnNames = columnNames
    }

    @usableFromInline package func columnName(_ column: Int32) -> String {
        Int(column) < columnNames.count ? columnNames[Int(column)] : "#\(column)"
    }

    /// ` (column "age"; SQL: SELECT …)`
    @usableFromInline package func location(column: Int32) -> String {
        " (column \"\(columnName(column))\"; SQL: \(sql))"
    }

    /// ` (JSON in column "tags"; SQL: SELECT …)`
    @usableFromInline package func jsonLocation(column: Int32) -> String {
        " (JSON in column \"\(columnName(column))\"; SQL: \(sql))"
    }
}

/// Decoding errors worded like Foundation's JSONDecoder, plus where the value came from.
@usableFromInline package enum DecodingFailure {
    @usableFromInline package static func typeMismatch(_ type: Any.Type, found: String, path: [any CodingKey], location: String) -> DecodingError {
        .typeMismatch(type, DecodingError.Context(
            codingPath: path, debugDescription: "Expected to decode \(type) but found \(found) instead\(location)."))
    }

    @usableFromInline package static func valueNotFound(_ type: Any.Type, found: String, path: [any CodingKey], location: String) -> DecodingError {
        .valueNotFound(type, DecodingError.Context(
            codingPath: path, debugDescription: "Expected \(type) but found \(found) instead\(location)."))
    }

    @usableFromInline package static func dataCorrupted(_ description: String, path: [any CodingKey], location: String) -> DecodingError {
        .dataCorrupted(DecodingError.Context(codingPath: path, debugDescription: description + location + "."))
    }

    @usableFromInline package static func numberDoesNotFit(_ number: String, _ type: Any.Type, path: [any CodingKey], location: String) -> DecodingError {
        dataCorrupted("Parsed number <\(number)> does not fit in \(type)", path: path, location: location)
    }

    @usableFromInline package static func invalidDate(_ text: String, path: [any CodingKey], location: String) -> DecodingError {
        dataCorrupted(
            "Text \"\(preview(text))\" is not a date: expected YYYY-MM-DD[ HH:MM[:SS[.SSS]]], optionally with T for the "
                + "space and Z or ±HH:MM, or a number of seconds since 1970",
            path: path, location: location)
    }

    /// A value shown in an error, shortened.
    @usableFromInline package static func preview(_ text: String) -> String {
        text.count <= 64 ? text : String(text.prefix(61)) + "…"
    }
}
