import Foundation

extension SQLite {
    /// Decodes `Decodable` values from the rows of SQL you write, like `JSONDecoder` for SQLite.
    ///
    /// Each coding key reads the result column of the same name:
    ///
    /// ```swift
    /// let decoder = SQLite.Decoder(db)
    /// let all = try decoder.decode(Array<Task>.self, using: "SELECT * FROM tasks ORDER BY id")
    /// let one = try decoder.decode(Task.self, using: "SELECT * FROM tasks WHERE id = :id", arguments: ["id": .text(id)])
    /// let n = try decoder.decode(Int.self, using: "SELECT count(*) FROM tasks")   // Int?
    /// ```
    ///
    /// Rows are decoded straight from the prepared statement: no dictionaries, each coding key
    /// resolved to a column index once per statement. A row with a single column decodes into
    /// scalars and single values (`Int`, `String`, `Date?`, `UUID`, an enum, or `[String]` from a
    /// JSON column). An array type always asks for every row, so `decode([String].self, …)` is one
    /// `String` per row; for the JSON array in one row's column ask for `[String]?.self` (or
    /// `Array<[String]>.self` for one array per row). A missing column decodes `nil` into an `Optional` and throws `keyNotFound` for
    /// anything else. Failures are `DecodingError`s with the exact coding path; their descriptions
    /// name the column, the SQLite type found and the SQL.
    ///
    /// A decoder is safe to share between threads and tasks.
    public final class Decoder: @unchecked Sendable {  // options are read and written under `lock`
        /// The database the decoder reads from.
        let database: Database
        private let lock = NSLock()
        private var storedOptions = DecodingOptions()

        /// A decoder reading from `database`.
        ///
        /// ```swift
        /// let decoder = SQLite.Decoder(db)
        /// ```
        public init(_ database: Database) {
            self.database = database
        }

        /// How column names become coding keys. Default: `.useDefaultKeys`.
        ///
        /// ```swift
        /// decoder.keyDecodingStrategy = .convertFromSnakeCase   // column due_date fills dueDate
        /// ```
        public var keyDecodingStrategy: CodingStrategy.KeyDecoding {
            get { lock.withLock { storedOptions.keyStrategy } }
            set { lock.withLock { storedOptions.keyStrategy = newValue } }
        }

        /// How dates are read. Default: `.iso8601`, which reads every text
        /// format SQLite's date functions accept and numbers as Unix timestamps.
        ///
        /// ```swift
        /// decoder.dateDecodingStrategy = .secondsSince1970
        /// ```
        public var dateDecodingStrategy: CodingStrategy.DateDecoding {
            get { lock.withLock { storedOptions.dateStrategy } }
            set { lock.withLock { storedOptions.dateStrategy = newValue } }
        }

        /// Values handed to `init(from:)` implementations through `decoder.userInfo`.
        ///
        /// ```swift
        /// decoder.userInfo[.init(rawValue: "version")!] = 2
        /// ```
        public var userInfo: [CodingUserInfoKey: any Sendable] {
            get { lock.withLock { storedOptions.userInfo } }
            set { lock.withLock { storedOptions.userInfo = newValue } }
        }

        var options: DecodingOptions { lock.withLock { storedOptions } }

        /// Decodes the single row of `sql`: `nil` when there is no row, an error when there are several.
        ///
        /// ```swift
        /// let task = try decoder.decode(Task.self, using: "SELECT * FROM tasks WHERE id = :id", arguments: ["id": .text(id)])
        /// ```
        ///
        /// An array type, even one picked through this overload (`let names: [String]? = try
        /// decoder.decode([String].self, …)`, `try? decoder.decode([String].self, …)`, or a generic
        /// `T`), decodes every row, like the overload for arrays: never `nil`, one element per row.
        /// For the JSON array held in one row's column, ask for an optional array, or for an array
        /// of arrays to get one per row:
        ///
        /// ```swift
        /// let tags = try decoder.decode([String]?.self, using: "SELECT tags FROM posts WHERE id = 1")   // [String]??: nil when no row
        /// let all = try decoder.decode(Array<[String]>.self, using: "SELECT tags FROM posts")       // [[String]]
        /// ```
        ///
        /// - Throws: `DecodingError` (`typeMismatch` for more than one row), or ``SQLite/Error``.
        @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
        public func decode<T: Decodable>(_ type: T.Type, using sql: String, arguments: SQLiteArguments = [:]) throws -> T? {
            try decodeOne(type, using: sql) { try $0.bind(arguments) }
        }

        /// Decodes the single row of `sql`, with positional (`?`) arguments.
        ///
        /// ```swift
        /// let task = try decoder.decode(Task.self, using: "SELECT * FROM tasks WHERE id = ?", arguments: [.text(id)])
        /// ```
        ///
        /// As with named arguments, an array type decodes every row, one element per row, and
        /// `[String]?.self` reads the JSON array in one row.
        @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
        package func decode<T: Decodable>(_ type: T.Type, using sql: String, arguments: [SQLite.Value]) throws -> T? {
            try decodeOne(type, using: sql) { try $0.bind(arguments) }
        }

        /// Decodes every row of `sql`, in order.
        ///
        /// ```swift
        /// let tasks = try decoder.decode(Array<Task>.self, using: "SELECT * FROM tasks ORDER BY id")
        /// ```
        ///
        /// `decode([X].self, …)` always means one `X` per row, whichever overload the context picks.
        /// `decode(Array<[String]>.self, …)` reads a JSON array from each row.
        ///
        /// - Throws: `DecodingError` whose coding path starts with the row's index, or ``SQLite/Error``.
        @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
        public func decode<T: Decodable>(_ type: [T].Type, using sql: String, arguments: SQLiteArguments = [:]) throws -> [T] {
            try decodeAll(T.self, using: sql) { try $0.bind(arguments) }
        }

        /// Decodes every row of `sql`, with positional (`?`) arguments.
        ///
        /// ```swift
        /// let names = try decoder.decode([String].self, using: "SELECT name FROM people WHERE age > ?", arguments: [.integer(17)])
        /// ```
        @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
        package func decode<T: Decodable>(_ type: [T].Type, using sql: String, arguments: [SQLite.Value]) throws -> [T] {
            try decodeAll(T.self, using: sql) { try $0.bind(arguments) }
        }

        private func decodeOne<T: Decodable>(_ type: T.Type, using sql: String, bind: (Statement) throws -> Void) throws -> T? {
            // Only a type of an array's size can be an array: other types skip the conformance
            // check, a runtime lookup on every call.
            if MemoryLayout<T>.size == MemoryLayout<[Int]>.size, let arrayType = T.self as? any DecodableArray.Type {
                return try decodeArray(T.self, arrayType, using: sql, bind: bind)
            }
            let options = self.options
            do {
                // Spelled `T`: returned directly, the closure would be inferred to return `T?`.
                let value: T = try run(sql, bind: bind) { try $0.decodeOnlyRow(T.self, options: options) }
                return value
            } catch is NoRow {
                return nil   // no `T?` in the closure: see `NoRow`
            }
        }

        /// An array is every row, whatever overload the call resolved to. (A function of its own:
        /// its `as? T` would cost `decodeOne` a metadata lookup of `T?` on every call.)
        @inline(never)
        private func decodeArray<T: Decodable>(_ type: T.Type, _ arrayType: any DecodableArray.Type, using sql: String, bind: (Statement) throws -> Void) throws -> T {
            let rows = try arrayType.decodeRows(with: self, using: sql, bind: bind)
            guard let rows = rows as? T else {
                throw DecodingError.typeMismatch(T.self, DecodingError.Context(
                    codingPath: [], debugDescription: "Expected to decode \(T.self) but decoded \(Swift.type(of: rows)). SQL: \(sql)"))
            }
            return rows
        }

        fileprivate func decodeAll<T: Decodable>(_ type: T.Type, using sql: String, bind: (Statement) throws -> Void) throws -> [T] {
            let options = self.options
            return try run(sql, bind: bind) { try $0.decodeRows(T.self, options: options) }
        }

        /// Runs a read-only statement on a reader (or the caller's transaction), and one that
        /// writes (`INSERT … RETURNING`) on the writer. (No `R?` here: in code not specialized for
        /// the decoded type, each optional of it costs a runtime metadata lookup per call.)
        private func run<R>(_ sql: String, bind: (Statement) throws -> Void, body: (Statement) throws -> R) throws -> R {
            do {
                return try database.withReader { connection in
                    try connection.withStatement(sql) { statement in
                        guard statement.isReadOnly else { throw StatementWrites() }
                        try bind(statement)
                        return try body(statement)
                    }
                }
            } catch is StatementWrites {
                return try database.withWriter { connection in
                    try connection.withStatement(sql) { statement in
                        try bind(statement)
                        return try body(statement)
                    }
                }
            }
        }

        /// Asynchronous `decode(_:using:arguments:)`.
        ///
        /// ```swift
        /// let task = try await decoder.decode(Task.self, using: Task.fetchByID, arguments: ["id": .text(id)])
        /// ```
        ///
        /// An array type decodes every row; `[String]?.self` reads one row's JSON array.
        public func decode<T: Decodable & Sendable>(_ type: T.Type, using sql: String, arguments: SQLiteArguments = [:]) async throws -> T? {
            try await database.performRead { _ in try self.decode(type, using: sql, arguments: arguments) }
        }

        /// Asynchronous `decode(_:using:arguments:)` with positional arguments.
        ///
        /// ```swift
        /// let task = try await decoder.decode(Task.self, using: "SELECT * FROM tasks WHERE id = ?", arguments: [.text(id)])
        /// ```
        ///
        /// An array type decodes every row; `[String]?.self` reads one row's JSON array.
        package func decode<T: Decodable & Sendable>(_ type: T.Type, using sql: String, arguments: [SQLite.Value]) async throws -> T? {
            try await database.performRead { _ in try self.decode(type, using: sql, arguments: arguments) }
        }

        /// Asynchronous `decode(_:using:arguments:)`.
        ///
        /// ```swift
        /// let tasks = try await decoder.decode([Task].self, using: Task.fetchAll)
        /// ```
        public func decode<T: Decodable & Sendable>(_ type: [T].Type, using sql: String, arguments: SQLiteArguments = [:]) async throws -> [T] {
            try await database.performRead { _ in try self.decode(type, using: sql, arguments: arguments) }
        }

        /// Asynchronous `decode(_:using:arguments:)`.
        ///
        /// ```swift
        /// let names = try await decoder.decode([String].self, using: "SELECT name FROM people WHERE age > ?", arguments: [.integer(17)])
        /// ```
        package func decode<T: Decodable & Sendable>(_ type: [T].Type, using sql: String, arguments: [SQLite.Value]) async throws -> [T] {
            try await database.performRead { _ in try self.decode(type, using: sql, arguments: arguments) }
        }
    }
}

/// Array types, recognised at run time so that decoding one always reads every row, whichever
/// `decode` overload the call's context picked (`EncodableArray` does the same for the encoder).
private protocol DecodableArray {
    static func decodeRows(with decoder: SQLite.Decoder, using sql: String, bind: (Statement) throws -> Void) throws -> Self
}

extension Array: DecodableArray where Element: Decodable {
    fileprivate static func decodeRows(
        with decoder: SQLite.Decoder, using sql: String, bind: (Statement) throws -> Void
    ) throws -> [Element] {
        try decoder.decodeAll(Element.self, using: sql, bind: bind)
    }
}


/// Thrown by the Decoder when a statement turns out to write, to run it on the writer instead; it
/// never reaches the caller.
private struct StatementWrites: Error {}
