#if Postgres
import Foundation
import PostgresNIO

extension Postgres.Queryable {
    /// The rows of SQL of your own, each a dictionary from column name to value: the same shape as
    /// SQLite's `read(_:arguments:)` (`StoredValue` is `SQLite.Value`), so that code reading raw
    /// rows reads them alike on both engines.
    ///
    /// ```swift
    /// let rows = try await db.read("SELECT name, age FROM \"Person\" WHERE age > $1 ORDER BY name", arguments: [.integer(17)])
    /// let names = rows.compactMap { $0["name"]?.stringValue }
    /// ```
    ///
    /// Arguments bind to `$1`, `$2`… in their own types (`integer` as `bigint`, `double` as
    /// `double precision`, `text`, `data` as `bytea`, `null`); cast them in the SQL where the
    /// server cannot tell (`$1::uuid`). Values come back as SQLite would give them: integers
    /// (`smallint`, `integer`, `bigint`, `oid`) as `integer`, `real` and `double precision` as
    /// `double`, `boolean` as `integer` 0 or 1, `bytea` as `data`, `NULL` as `null`, and as `text`
    /// the text types, `numeric` (exactly), `uuid`, `json`, `jsonb`, timestamps in ISO 8601 (UTC,
    /// with fractional seconds: `2026-11-27T09:30:00.250Z`) and dates as `2026-11-27`. A column of another type throws
    /// `Postgres.Error.Code.invalidArgument` naming it: cast it in the SQL (`::text`).
    ///
    /// The statement runs alone on a ``Postgres/Database`` (autocommit) and in the transaction on
    /// a ``Postgres/Transaction``: use it for reads, and ``execute(_:_:)`` for changes made
    /// outside a transaction, which it reports only once committed.
    public func read(_ sql: String, arguments: [StoredValue] = []) async throws -> [[String: StoredValue]] {
        var binds = PostgresBindings()
        for argument in arguments {
            switch argument {
            case .null: binds.appendNull()
            case .integer(let value): binds.append(value)
            case .double(let value): binds.append(value)
            case .text(let value): binds.append(value)
            case .data(let value): binds.append(ByteBuffer(bytes: value))
            }
        }
        return try await handle.session.rows(sql, binds).map { row in
            var values: [String: StoredValue] = [:]
            for cell in row {
                values[cell.columnName] = try Self.storedValue(of: cell, sql: sql)
            }
            return values
        }
    }

    /// A cell as the value SQLite would give for it.
    private static func storedValue(of cell: PostgresCell, sql: String) throws -> StoredValue {
        guard let bytes = cell.bytes else { return .null }
        switch cell.dataType {
        case .int2, .int4, .int8, .oid:
            return .integer(try cell.decode(Int64.self))
        case .float4, .float8:
            return .double(try cell.decode(Double.self))
        case .bool:
            return .integer(try cell.decode(Bool.self) ? 1 : 0)
        case .bytea:
            return .data(Data(bytes.readableBytesView))
        case .numeric:
            return .text("\(try cell.decode(Decimal.self))")
        case .text, .varchar, .bpchar, .name, .uuid, .json, .jsonb:
            return .text(try cell.decode(String.self))
        case .timestamptz, .timestamp:
            return .text(Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(try cell.decode(Date.self)))
        case .date:
            return .text(Date.ISO8601FormatStyle().year().month().day().format(try cell.decode(Date.self)))
        default:
            throw Postgres.Error(.invalidArgument, message: """
                column "\(cell.columnName)" is of type \(cell.dataType), which read(_:arguments:) does not convert; \
                cast it in the SQL (\(cell.columnName)::text)
                """, sql: sql)
        }
    }
}
#endif
