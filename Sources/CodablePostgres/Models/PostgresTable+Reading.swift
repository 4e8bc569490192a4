#if Postgres
import Foundation
import PostgresNIO

/// How a read selects a model's rows and decodes them: one result column per member of the
/// model's JSON form (a stored property's column, or a relationship's related values as JSON),
/// decoded from the cells postgres-nio returns by ``ColumnForm/Reader``, without building a JSON
/// text or tree per row on either side.
struct RowReading: Sendable {
    /// A member of the JSON form, as its result column gives it.
    enum Member: Sendable {
        /// A stored property's column, read in its binary form (``ColumnKind``).
        case column(ColumnKind)
        /// A relationship's related values: JSON text, built on the server.
        case related
    }

    /// The members' names (the coding keys), in result-column order.
    let names: [String]
    let members: [Member]
    /// The select list: one expression per member.
    let selectList: String

    /// The members of `schema`'s JSON form on a table of `columns` whose relationships read
    /// `targets`: every stored property (a to-one relationship's id column excepted) and every
    /// relationship with a target table (a to-many one without its link table reads as `[]`).
    init(schema: ModelReflection, columns: [PostgresTable.Column], targets: [String: PostgresTable]) {
        let table = SQLName.quoted(schema.table)
        var names: [String] = [], members: [Member] = [], expressions: [String] = []
        for column in columns where column.references == nil {
            names.append(column.name)
            members.append(.column(column.kind))
            expressions.append(column.kind.toResult(table + "." + column.quoted))
        }
        for relationship in schema.relationships {
            guard let target = targets[relationship.name] else {
                guard relationship.isToMany else { continue }
                names.append(relationship.name)
                members.append(.related)
                expressions.append("'[]'::text")
                continue
            }
            names.append(relationship.name)
            members.append(.related)
            expressions.append(PostgresTable.relatedJSON(relationship, owner: table, ownerID: schema.id.name, target: target) + "::text")
        }
        self.names = names
        self.members = members
        selectList = expressions.joined(separator: ", ")
    }

    /// Decodes `rows` read with this reading's select list. `sql` names the read in errors.
    func decode<T: Model>(_ type: T.Type, _ rows: [PostgresRow], sql: String) throws -> [T] {
        try decode(T.self, rows, sql: sql) { value, _ in value }
    }

    /// Decodes `rows`, whose first columns are this reading's, into what `make` gives for each
    /// value and its row (whose later columns, such as a search's score, are the caller's).
    func decode<T: Model, Result>(_ type: T.Type, _ rows: [PostgresRow], sql: String,
                                  as make: (T, PostgresRow) throws -> Result) throws -> [Result] {
        let reader = ColumnForm.Reader(columns: names, source: sql)
        var results: [Result] = []
        results.reserveCapacity(rows.count)
        var row: [ColumnForm.Member] = []
        row.reserveCapacity(members.count)
        for cells in rows {
            row.removeAll(keepingCapacity: true)
            var index = 0
            for cell in cells {
                guard index < members.count else { break }
                row.append(try Self.member(of: cell, as: members[index], name: names[index], model: T.self, sql: sql))
                index += 1
            }
            guard index == members.count else {
                throw ModelError(.unexpectedResult, T.self, "a row came back with \(index) of its \(members.count) columns (SQL: \(sql))")
            }
            results.append(try make(try reader.decode(T.self, row: row), cells))
        }
        return results
    }

    /// A cell as the member of the JSON form the server's `json_build_object` would have written:
    /// numbers, UUIDs and dates as the values their binary cells hold, the rest as text. `name` is
    /// the member's, for errors.
    private static func member<T>(of cell: PostgresCell, as member: Member, name: String, model: T.Type, sql: String) throws -> ColumnForm.Member {
        guard var bytes = cell.bytes else { return .null }
        if cell.format == .binary {
            switch cell.dataType {
            case .bool:
                guard let byte = bytes.readInteger(as: UInt8.self) else { break }
                return .bool(byte != 0)
            case .int8:
                guard let integer = bytes.readInteger(as: Int64.self) else { break }
                return .integer(integer)
            case .int2, .int4:
                return .integer(try cell.decode(Int64.self))
            case .float4, .float8:
                // Not-a-number and the infinities are JSON strings, as PostgreSQL writes them.
                let real = try cell.decode(Double.self)
                return real.isFinite ? .real(real) : .string(real.isNaN ? "NaN" : real > 0 ? "Infinity" : "-Infinity")
            case .uuid:
                return .uuid(try cell.decode(UUID.self))
            case .timestamptz, .timestamp:
                // Microseconds from 2000-01-01 (a column without a zone read as UTC).
                guard let microseconds = bytes.readInteger(as: Int64.self) else { break }
                return .date(try date(microseconds, name: name, sql: sql))
            case .date:
                guard let days = bytes.readInteger(as: Int32.self) else { break }
                return .date(try date(Int64(days) * 86_400_000_000, name: name, sql: sql))
            case .text, .varchar, .json, .jsonb:
                break
            default:
                throw ModelError(.unexpectedResult, T.self, "column \"\(cell.columnName)\" came back as \(cell.dataType), which a read does not expect (SQL: \(sql))")
            }
        }
        let text = try cell.decode(String.self)
        switch member {
        case .related, .column(.jsonb): return .json(text)
        case .column(.numeric):
            return text == "NaN" || text.hasSuffix("Infinity") ? .string(text) : .number(text)
        case .column: return .string(text)
        }
    }

    /// The date of a binary timestamp, or an error naming the property when it is outside the
    /// years a `Date` is stored in (0–9999; PostgreSQL's `infinity` too).
    private static func date(_ microseconds: Int64, name: String, sql: String) throws -> Date {
        if let date = DateText.date(microsecondsSince2000: microseconds) { return date }
        let value = microseconds == .max ? "infinity" : microseconds == .min ? "-infinity"
            : "\(microseconds) microseconds from 2000-01-01"
        throw DecodingError.dataCorrupted(DecodingError.Context(
            codingPath: [AnyCodingKey(stringValue: name)],
            debugDescription: "The timestamp \(value) is outside the years 0–9999 a Date is stored in (SQL: \(sql))."))
    }
}

extension ColumnKind {
    /// The column's value as a read selects it (`column` is a qualified, quoted column name):
    /// `Data` as Base64 and `numeric` as its exact text, the others as they are (read in their
    /// binary form).
    func toResult(_ column: String) -> String {
        switch self {
        case .bytea: toJSON(column)
        case .numeric: "\(column)::text"
        default: column
        }
    }
}
#endif
