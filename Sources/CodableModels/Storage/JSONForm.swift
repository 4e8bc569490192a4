import Foundation

/// A whole value as JSON text under the storage contract (``StoredForm``): the seam through which
/// a storage engine other than SQLite columns (CodablePostgres) encodes and decodes models.
///
/// Dates are `CodingStrategy.DateEncoding.iso8601` text (`YYYY-MM-DD HH:MM:SS.SSS…`,
/// UTC), `Data` Base64, `Decimal` an exact number, UUIDs text, nested values objects and arrays:
/// the same JSON a nested value has inside an SQLite column.
package enum JSONForm {
    /// Compact JSON text for `value`, members in declaration order.
    package static func encode<T: Encodable>(_ value: T) throws -> String {
        try JSONTreeEncoder.node(for: value, at: .root, options: EncodingOptions()).text
    }

    /// The members of `value`'s JSON form in the order they were encoded, or `nil` when the form
    /// is not an object (for an engine that stores each member in a column of its own).
    package static func members<T: Encodable>(of value: T) throws -> [(key: String, value: Member)]? {
        guard case .object(let box) = try JSONTreeEncoder.node(for: value, at: .root, options: EncodingOptions()).resolved else {
            return nil
        }
        return box.members.map { ($0.key, Member(node: $0.value.resolved)) }
    }

    /// Appends `text` as a JSON string.
    package static func appendString(_ text: String, to bytes: inout [UInt8]) {
        JSONNode.writeString(text, to: &bytes)
    }

    /// One member of a value's JSON form.
    package struct Member {
        fileprivate let node: JSONNode

        /// The member as column text: a string's characters, a number's digits, `true`/`false`;
        /// `nil` for JSON null. An array or object gives its JSON text.
        package var text: String? {
            switch node {
            case .null: nil
            case .bool(let value): value ? "true" : "false"
            case .number(let text), .string(let text): text
            case .array, .object, .reference: node.text
            }
        }

        /// The member's JSON text; `nil` for JSON null.
        package var json: String? {
            if case .null = node { return nil }
            return node.text
        }
    }

    /// Decodes a `T` from JSON text; errors name `source` (such as the SQL that read it).
    ///
    /// Throws `DecodingError` with the exact coding path, as the column decoders do.
    package static func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer, source: String, label: String) throws -> T {
        let context = DecodingContext(options: DecodingOptions(), sql: source, columnNames: [label])
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes.bindMemory(to: UInt8.self))
        } catch {
            throw DecodingFailure.dataCorrupted("The stored JSON is not valid: \(error.description)", path: [], location: context.jsonLocation(column: 0))
        }
        return try JSONScalars.value(T.self, value, path: .root, context: context, column: 0)
    }

    /// The stored form of a single value (an id), as a filter holds it.
    package static func storedValue<T: Encodable>(_ value: T) throws -> StoredValue {
        try ValueEncoder.value(for: value, at: .root, options: EncodingOptions())
    }

    /// The JSON a filter value has inside stored JSON: text as a string, numbers as numbers,
    /// a blob as Base64 text; `asBoolean` turns 0 and 1 into `false` and `true`, and `asNumber`
    /// turns a `Decimal`'s exact text into a number.
    package static func scalar(_ value: StoredValue, asBoolean: Bool = false, asNumber: Bool = false) -> String {
        switch value {
        case .null: return "null"
        case .integer(let integer): return asBoolean ? (integer != 0 ? "true" : "false") : String(integer)
        case .double(let real): return String(real)
        case .text(let text):
            if asNumber { return text }
            var bytes: [UInt8] = []
            JSONNode.writeString(text, to: &bytes)
            return String(decoding: bytes, as: UTF8.self)
        case .data(let data):
            var bytes: [UInt8] = []
            JSONNode.writeString(data.base64EncodedString(), to: &bytes)
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
