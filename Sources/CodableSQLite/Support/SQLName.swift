/// Quoting for identifiers and literals in generated SQL: the one place the library quotes.
///
/// Values are always bound as arguments; only names (tables, columns, indexes) and fixed
/// literals are ever spliced into SQL, and always through these two functions.
package enum SQLName {
    /// `"name"`, with inner quotes doubled.
    package static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `'text'`, with inner quotes doubled.
    package static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
