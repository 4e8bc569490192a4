/// Top-level properties of a row that a layer above stores its own way (the model layer's
/// relationships), without the coders knowing what they are.
///
/// - Encoding: for a key in ``keys``, the row encoder binds what ``encode`` returns instead of the
///   property's value (a related value's id), or binds nothing (a list kept in another table).
/// - Decoding: for a key in ``keys``, the row decoder returns what ``decode`` gives instead of
///   decoding the key's column. ``decode`` can read the row's columns by name (a foreign key, the
///   row's id).
@usableFromInline package struct RowOverrides: @unchecked Sendable {  // immutable; the closures run on the thread that encodes or decodes
    package enum Encoding {
        /// Bind nothing for this key: no column holds it.
        case skip
        /// Bind this value instead of the property's.
        case value(any Encodable)
    }

    /// The overridden keys.
    package let keys: Set<String>
    /// What to bind for a key and the property's value.
    package var encode: ((String, Any) throws -> Encoding)?
    /// The value of a key, reading the row's columns by name; `nil` for none.
    package var decode: ((String, RowColumns) throws -> Any?)?

    package init(keys: Set<String>, encode: ((String, Any) throws -> Encoding)? = nil, decode: ((String, RowColumns) throws -> Any?)? = nil) {
        self.keys = keys
        self.encode = encode
        self.decode = decode
    }
}

/// The current row's columns, by name, for ``RowOverrides/decode``.
package struct RowColumns {
    private let lookup: (String) -> StoredValue?

    package init(lookup: @escaping (String) -> StoredValue?) {
        self.lookup = lookup
    }

    /// The stored value of the column named `name`; `nil` when the row has no such column.
    package func value(named name: String) -> StoredValue? { lookup(name) }
}
