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
    /// the text types, `numeric` (exactly, `NaN` and `Infinity` by name), `uuid`, `json`, `jsonb`,
    /// timestamps in ISO 8601 (UTC, to the microsecond: `2026-11-27T09:30:00.250000Z`) and dates as
    /// `2026-11-27`. A column of another type throws
    /// `Postgres.Error.Code.invalidArgument` naming it: cast it in the SQL (`::text`).
    ///
    /// The statement runs alone on a ``Postgres/Database`` (autocommit) and in the transaction on
    /// a ``Postgres/Transaction``: use it for reads, and ``execute(_:arguments:)`` for changes made
    /// outside a transaction, which it reports only once committed.
    public func read(_ sql: String, arguments: [StoredValue] = []) async throws -> [[String: StoredValue]] {
        try await handle.session.rows(sql, Self.bindings(arguments)).map { row in
            var values: [String: StoredValue] = [:]
            for cell in row {
                values[cell.columnName] = try Self.storedValue(of: cell, sql: sql)
            }
            return values
        }
    }

    /// `arguments` bound to `$1`, `$2`… in their own types.
    static func bindings(_ arguments: [StoredValue]) -> PostgresBindings {
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
        return binds
    }

    /// A cell as the value SQLite would give for it.
    private static func storedValue(of cell: PostgresCell, sql: String) throws -> StoredValue {
        guard var bytes = cell.bytes else { return .null }
        if cell.format == .text, cell.dataType != .bytea {
            // Not asked for by postgres-nio, which reads binary; as text, the value as the server wrote it.
            return .text(bytes.readString(length: bytes.readableBytes) ?? "")
        }
        switch cell.dataType {
        case .int2, .int4, .int8:
            return .integer(try cell.decode(Int64.self))
        case .oid:
            guard let oid = bytes.readInteger(as: UInt32.self) else { break }
            return .integer(Int64(oid))
        case .float4, .float8:
            return .double(try cell.decode(Double.self))
        case .bool:
            return .integer(try cell.decode(Bool.self) ? 1 : 0)
        case .bytea:
            return .data(Data(bytes.readableBytesView))
        case .numeric:
            guard let text = numericText(&bytes) else { break }
            return .text(text)
        case .text, .varchar, .bpchar, .name, .uuid, .json, .jsonb:
            return .text(try cell.decode(String.self))
        case .timestamptz, .timestamp:
            guard let microseconds = bytes.readInteger(as: Int64.self) else { break }
            return .text(timestampText(microsecondsSince2000: microseconds))
        case .date:
            return .text(Date.ISO8601FormatStyle().year().month().day().format(try cell.decode(Date.self)))
        default:
            break
        }
        throw Postgres.Error(.invalidArgument, message: """
            column "\(cell.columnName)" is of type \(cell.dataType), which read(_:arguments:) does not convert; \
            cast it in the SQL (\(cell.columnName)::text)
            """, sql: sql)
    }

    /// A binary `numeric` as its exact decimal text (`NaN`, `Infinity` and `-Infinity` by name):
    /// base-10000 digits, the first one's weight, the sign and the digits after the point.
    private static func numericText(_ bytes: inout ByteBuffer) -> String? {
        guard let count = bytes.readInteger(as: Int16.self), let weight = bytes.readInteger(as: Int16.self),
              let sign = bytes.readInteger(as: UInt16.self), let scale = bytes.readInteger(as: UInt16.self), count >= 0
        else { return nil }
        switch sign {
        case 0xC000: return "NaN"
        case 0xD000: return "Infinity"
        case 0xF000: return "-Infinity"
        case 0x0000, 0x4000: break
        default: return nil
        }
        var digits: [Int] = []
        for _ in 0..<count {
            guard let digit = bytes.readInteger(as: UInt16.self), digit < 10_000 else { return nil }
            digits.append(Int(digit))
        }
        func digit(at index: Int) -> Int { index >= 0 && index < digits.count ? digits[index] : 0 }
        func padded(_ group: Int) -> String { String(repeating: "0", count: 4 - String(group).count) + String(group) }
        var integer = ""
        if weight >= 0 {
            for index in 0...Int(weight) { integer += index == 0 ? String(digit(at: 0)) : padded(digit(at: index)) }
        } else {
            integer = "0"
        }
        var fraction = ""
        let groups = (Int(scale) + 3) / 4
        if groups > 0 {
            for group in 1...groups { fraction += padded(digit(at: Int(weight) + group)) }
        }
        let text = integer + (scale > 0 ? "." + fraction.prefix(Int(scale)) : "")
        return (sign == 0x4000 ? "-" : "") + text
    }

    /// A timestamp's microseconds since 2000-01-01 as ISO 8601 in UTC, every microsecond kept
    /// (`2026-11-27T09:30:00.250000Z`); PostgreSQL's `infinity` and `-infinity` by name.
    private static func timestampText(microsecondsSince2000 microseconds: Int64) -> String {
        if microseconds == .max { return "infinity" }
        if microseconds == .min { return "-infinity" }
        let (seconds, remainder) = microseconds.quotientAndRemainder(dividingBy: 1_000_000)
        let wholeSeconds = remainder < 0 ? seconds - 1 : seconds
        let fraction = remainder < 0 ? remainder + 1_000_000 : remainder
        let date = Date(timeIntervalSince1970: Double(wholeSeconds) + 946_684_800)
        let text = Date.ISO8601FormatStyle().format(date)   // …T09:30:00Z
        let digits = String(fraction)
        return String(text.dropLast()) + "." + String(repeating: "0", count: 6 - digits.count) + digits + "Z"
    }
}
#endif
