#if Postgres
import Foundation
import PostgresNIO

/// The PostgreSQL type a stored property gets, and how its value crosses between the JSON form
/// (``JSONForm``, the storage contract's JSON) and the column.
///
/// Saves send each column's members of the models' JSON forms as one `text[]` parameter
/// (``ColumnArrays``) and cast them with the expression ``fromText(_:)`` gives; reads select each
/// column as ``toResult(_:)`` gives it and decode the cells as members of the JSON form
/// (``RowReading``), and related values come as JSON built with ``toJSON(_:)``. So the column
/// types are PostgreSQL's own, while the Codable work is the same code as on SQLite.
enum ColumnKind: String, Sendable {
    case uuid = "uuid"
    case timestamp = "timestamp with time zone"
    case bytea = "bytea"
    case numeric = "numeric"
    case boolean = "boolean"
    case bigint = "bigint"
    case double = "double precision"
    case text = "text"
    case jsonb = "jsonb"

    /// The kind for a property's Swift type (optionals unwrapped).
    static func of(_ type: Any.Type) -> ColumnKind {
        switch unwrappedOptionalType(type).type {
        case is Bool.Type: return .boolean
        case is UUID.Type: return .uuid
        case is Date.Type: return .timestamp
        case is Decimal.Type: return .numeric
        default: break
        }
        switch StorageType.of(type).0 {
        case .integer: return .bigint
        case .real: return .double
        case .text: return .text
        case .blob: return .bytea
        case .untyped: return .jsonb
        }
    }

    /// The type's name (the same spelling `information_schema.columns.data_type` uses).
    var sqlType: String { rawValue }

    /// The type in `CREATE TABLE`: text compares by bytes (`COLLATE "C"`, as filters and sorts
    /// compare it), so that its indexes serve them.
    var declaredType: String { self == .text ? "text COLLATE \"C\"" : rawValue }

    /// The default of a `NOT NULL` column, used only for rows saved by a later version of the model
    /// that no longer writes it.
    var zeroDefault: String {
        switch self {
        case .uuid: "'00000000-0000-0000-0000-000000000000'"
        case .timestamp: "'1970-01-01 00:00:00+00'"
        case .bytea: "'\\x'"
        case .numeric, .bigint: "0"
        case .boolean: "false"
        case .double: "0"
        case .text: "''"
        case .jsonb: "'null'"
        }
    }

    /// The column's value from `text`, an expression of type `text` holding a member of the JSON
    /// form (``ColumnArrays``): dates are the storage contract's UTC text
    /// (`YYYY-MM-DD HH:MM:SS.SSS…`), `Data` is Base64, nested values are JSON text.
    func fromText(_ text: String) -> String {
        switch self {
        case .text: return text
        case .timestamp: return "(\(text)::timestamp AT TIME ZONE 'UTC')"
        case .bytea: return "decode(\(text), 'base64')"
        // JSON null in a nested value's member is SQL NULL, as an absent optional.
        case .jsonb: return "NULLIF(\(text)::jsonb, 'null'::jsonb)"
        default: return "\(text)::\(sqlType)"
        }
    }

    /// The column's value in the JSON form (`column` is a quoted column name).
    func toJSON(_ column: String) -> String {
        switch self {
        case .timestamp: "to_char(\(column) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')"
        // encode() breaks Base64 into lines of 76 characters.
        case .bytea: "translate(encode(\(column), 'base64'), E'\\n', '')"
        default: column
        }
    }

    /// A bound value (given as a filter's stored form) as an expression of this type.
    ///
    /// Text, integers and reals are bound as text and cast, so one rule serves every type; `Data`
    /// is bound as binary. A date is rounded to microseconds as a saved one is
    /// (`DateText.microsecondText`, the rule saves use too), so that a filter or an id given the
    /// original `Date` finds the value saved with it.
    func parameter(_ value: StoredValue, _ binds: inout PostgresBindings) -> String {
        switch value {
        case .null: binds.appendNull()
        case .integer(let integer): binds.append(String(integer))
        case .double(let real): binds.append(String(real))
        case .text(let text): binds.append(self == .timestamp ? DateText.microsecondText(text) : text)
        case .data(let data): binds.append(ByteBuffer(bytes: data))
        }
        let placeholder = "$\(binds.count)"
        switch self {
        case .text: return "\(placeholder)::text"
        case .timestamp: return "(\(placeholder)::timestamp AT TIME ZONE 'UTC')"
        case .bytea: return "\(placeholder)::bytea"
        default: return "\(placeholder)::\(sqlType)"
        }
    }
}
#endif
