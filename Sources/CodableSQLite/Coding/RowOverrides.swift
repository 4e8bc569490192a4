/// Top-level properties of a row that a layer above stores its own way (the model layer's
/// relationships), without the coders knowing what they are.
///
/// - Encoding: for a key in ``keys``, the row encoder binds what ``encode`` returns instead of the
///   property's value (a related value's id), or binds nothing (a list kept in another table).
/// - Decoding: for a key in ``keys``, the row decoder returns what ``decode`` gives instead of
///   decoding the key's column. ``decode`` can read the row's columns by name (a foreign key, the
///   row's id).
struct RowOverrides: @unchecked Sendable {  // immutable; the closures run on the thread that encodes or decodes
    enum Encoding {
        /// Bind nothing for this key: no column holds it.
        case skip
        /// Bind this value instead of the property's.
        case value(any Encodable)
    }

    /// The overridden keys.
    let keys: Set<String>
    /// What to bind for a key and the property's value.
    var encode: ((String, Any) throws -> Encoding)?
    /// The value of a key, reading the row's columns by name; `nil` for none.
    var decode: ((String, RowColumns) throws -> Any?)?

    init(keys: Set<String>, encode: ((String, Any) throws -> Encoding)? = nil, decode: ((String, RowColumns) throws -> Any?)? = nil) {
        self.keys = keys
        self.encode = encode
        self.decode = decode
    }
}

/// The current row's columns, by name, for ``RowOverrides/decode``.
struct RowColumns {
    let decoder: RowDecoder

    /// The stored value of the column named `name`; `nil` when the row has no such column.
    func value(named name: String) -> SQLite.Value? {
        guard let column = decoder.column(for: AnyCodingKey(stringValue: name)) else { return nil }
        return decoder.statement.value(at: column)
    }
}

extension RowDecoder {
    /// The overridden value of `key` as a `T`, or `nil` when the override gives none.
    func overriddenValue<T>(_ type: T.Type, key: some CodingKey) throws -> T? {
        guard let decode = options.overrides?.decode, let value = try decode(key.stringValue, RowColumns(decoder: self)) else {
            return nil
        }
        guard let typed = value as? T else {
            throw DecodingError.typeMismatch(T.self, DecodingError.Context(
                codingPath: basePath.keys(appending: AnyCodingKey(key)),
                debugDescription: "Expected \(T.self) for \(key.stringValue) but the related value is \(Swift.type(of: value)). SQL: \(statement.sql)"))
        }
        return typed
    }

    /// Whether the layer above decodes `key` itself.
    @inline(__always)
    func isOverridden(_ key: some CodingKey) -> Bool {
        guard let overrides = options.overrides else { return false }
        return overrides.keys.contains(key.stringValue)
    }
}
