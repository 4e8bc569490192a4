import CSQLite
import Foundation

extension Statement {
    /// Binds named arguments after clearing every parameter to `NULL`.
    ///
    /// A name the SQL does not contain is an error; a parameter without an argument stays `NULL`.
    /// Keys may be written with or without their prefix (`"id"` or `":id"`).
    func bind(_ arguments: SQLiteArguments) throws {
        sqlite3_clear_bindings(handle)
        let map = parameters
        if map.positionalCount > 0 {
            throw misuse("""
                The statement has \(map.positionalCount) positional parameter(s) (?), which named \
                arguments cannot bind; pass the arguments as an array: arguments: [.integer(1), …]
                """, code: .range)
        }
        for (key, value) in arguments {
            // The key itself when it has no prefix (the common spelling): no new string per call.
            let name: String
            if let first = key.utf8.first, first == UInt8(ascii: ":") || first == UInt8(ascii: "@") || first == UInt8(ascii: "$") {
                name = String(key.dropFirst())
            } else {
                name = key
            }
            guard let index = map.indexes[name] else {
                let known = map.writtenNames.isEmpty ? "it has no named parameters" :
                    "its parameters are " + map.writtenNames.joined(separator: ", ")
                throw misuse("Unknown argument \"\(key)\": the SQL has no parameter :\(name) (\(known))", code: .range)
            }
            try bind(value, at: index)
            if !map.extraIndexes.isEmpty, let more = map.extraIndexes[name] {
                for index in more { try bind(value, at: index) }
            }
        }
    }

    /// Binds positional arguments: exactly one per parameter, in order.
    func bind(_ arguments: [SQLite.Value]) throws {
        sqlite3_clear_bindings(handle)
        let count = Int(parameters.count)
        guard arguments.count == count else {
            throw misuse("Wrong number of arguments: \(arguments.count) given, the SQL has \(count) parameter(s)", code: .range)
        }
        for (offset, value) in arguments.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    func clearBindings() {
        sqlite3_clear_bindings(handle)
    }

    func bind(_ value: SQLite.Value, at index: Int32) throws {
        switch value {
        case .null: try bindNull(at: index)
        case .integer(let integer): try bind(integer, at: index)
        case .double(let double): try bind(double, at: index)
        case .text(let text): try bind(text, at: index)
        case .data(let data): try bind(data, at: index)
        }
    }

    @inline(__always)
    func bindNull(at index: Int32) throws {
        try check(sqlite3_bind_null(handle, index))
    }

    @inline(__always)
    func bind(_ value: Int64, at index: Int32) throws {
        try check(sqlite3_bind_int64(handle, index, value))
    }

    @inline(__always)
    func bind(_ value: Double, at index: Int32) throws {
        try check(sqlite3_bind_double(handle, index, value))
    }

    @inline(__always)
    func bind(_ value: String, at index: Int32) throws {
        var value = value
        let resultCode = value.withUTF8 { bytes -> Int32 in
            // A nil base address would bind NULL; an empty string must stay TEXT.
            let start = bytes.baseAddress.map { UnsafeRawPointer($0) } ?? UnsafeRawPointer(emptyBytes)
            return sqlite3_bind_text64(
                handle, index, start.assumingMemoryBound(to: CChar.self), UInt64(bytes.count),
                csqlite_transient(), UInt8(SQLITE_UTF8))
        }
        try check(resultCode)
    }

    @inline(__always)
    func bind(_ value: Data, at index: Int32) throws {
        if value.isEmpty {
            // sqlite3_bind_blob with no bytes binds NULL; a zero-length blob stays a BLOB.
            try check(sqlite3_bind_zeroblob(handle, index, 0))
            return
        }
        let resultCode = value.withUnsafeBytes { bytes in
            sqlite3_bind_blob64(handle, index, bytes.baseAddress, UInt64(bytes.count), csqlite_transient())
        }
        try check(resultCode)
    }

    @inline(__always)
    private func check(_ resultCode: Int32) throws {
        if resultCode != SQLITE_OK { throw error(resultCode) }
    }
}

/// A valid address for zero-length text: SQLite binds NULL when given a null pointer.
nonisolated(unsafe) private let emptyBytes: UnsafeMutableRawPointer = .allocate(byteCount: 1, alignment: 1)
