import CSQLite
import Foundation

/// A Swift function that SQL on one connection can call (see ``RawConnection/defineFunction(_:argumentCount:_:)``).
final class SQLFunction {
    let body: ([SQLite.Value]) -> SQLite.Value

    init(body: @escaping ([SQLite.Value]) -> SQLite.Value) {
        self.body = body
    }
}

extension RawConnection {
    /// Registers `body` as the SQL function `name` of `argumentCount` arguments on this
    /// connection, once per name (a second registration of a name is ignored). SQL's arguments
    /// arrive as ``SQLite/Value``s and the returned value is the function's result. It runs on
    /// the thread of the statement that calls it, with this connection held.
    ///
    /// Core knows nothing of what the functions do: layers above register their own (the change
    /// feed's triggers report changed keys through one).
    func defineFunction(_ name: String, argumentCount: Int32, _ body: @escaping ([SQLite.Value]) -> SQLite.Value) throws {
        guard !definedFunctions.contains(name) else { return }
        let function = Unmanaged.passRetained(SQLFunction(body: body)).toOpaque()
        let resultCode = sqlite3_create_function_v2(
            handle, name, argumentCount, SQLITE_UTF8, function,
            { context, count, arguments in
                guard let context, let user = sqlite3_user_data(context) else { return }
                let function = Unmanaged<SQLFunction>.fromOpaque(user).takeUnretainedValue()
                var values: [SQLite.Value] = []
                values.reserveCapacity(Int(count))
                for index in 0..<Int(count) { values.append(RawConnection.value(of: arguments?[index])) }
                RawConnection.setResult(function.body(values), of: context)
            },
            nil, nil,
            { pointer in pointer.map { Unmanaged<SQLFunction>.fromOpaque($0).release() } })
        // On failure SQLite has already called the destructor, which released the function.
        guard resultCode == SQLITE_OK else { throw SQLite.Error(connection: handle, resultCode: resultCode, sql: nil) }
        definedFunctions.insert(name)
    }

    private static func value(of argument: OpaquePointer?) -> SQLite.Value {
        guard let argument else { return .null }
        switch sqlite3_value_type(argument) {
        case SQLITE_INTEGER: return .integer(sqlite3_value_int64(argument))
        case SQLITE_FLOAT: return .double(sqlite3_value_double(argument))
        case SQLITE_TEXT: return .text(sqlite3_value_text(argument).map { String(cString: $0) } ?? "")
        case SQLITE_BLOB:
            let count = Int(sqlite3_value_bytes(argument))
            return .data(sqlite3_value_blob(argument).map { Data(bytes: $0, count: count) } ?? Data())
        default: return .null
        }
    }

    private static func setResult(_ value: SQLite.Value, of context: OpaquePointer) {
        switch value {
        case .null: sqlite3_result_null(context)
        case .integer(let integer): sqlite3_result_int64(context, integer)
        case .double(let double): sqlite3_result_double(context, double)
        case .text(let text): sqlite3_result_text(context, text, -1, csqlite_transient())
        case .data(let data):
            data.withUnsafeBytes { bytes in
                sqlite3_result_blob64(context, bytes.baseAddress, UInt64(bytes.count), csqlite_transient())
            }
        }
    }
}
