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

extension SQLName {
    /// `name`, or when it is longer than `limit` bytes (PostgreSQL cuts names at 63, which could
    /// make two names one), its ASCII start and a stable hash of the whole (the same in every process).
    package static func fitted(_ name: String, toBytes limit: Int?) -> String {
        guard let limit, name.utf8.count > limit else { return name }
        let hex = String(stableHash(name), radix: 16)
        let start = String(name.utf8.prefix(max(0, limit - 17)).map { Character(Unicode.Scalar($0)) }.filter(\.isASCII))
        return start + "~" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// A 64-bit FNV-1a hash of `text`: the same in every process and on every machine.
    package static func stableHash(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }
}
