import Foundation

extension SQLite {
    /// Binds `Encodable` values to the parameters of SQL you write, like `JSONEncoder` for SQLite.
    ///
    /// Each coding key binds the parameter of the same name (`:title`, `@title` or `$title`):
    ///
    /// ```swift
    /// struct Task: Codable { var id: String; var title: String; var dueDate: Date?; var isCompleted: Bool }
    ///
    /// let encoder = SQLite.Encoder(db)
    /// try encoder.encode(task, using: "INSERT INTO tasks VALUES (:id, :title, :dueDate, :isCompleted)")
    /// try encoder.encode([task1, task2], using: upsert)   // one transaction: all rows or none
    /// ```
    ///
    /// Storage: `Bool` → INTEGER 0/1, integers → INTEGER, `Float`/`Double` → REAL, `String` → TEXT,
    /// `Data` → BLOB, `Date` → TEXT (see ``CodingStrategy/DateEncoding``), `UUID` → TEXT, `URL` → TEXT,
    /// `Decimal` → TEXT; values that encode a single value (enums with raw values, wrappers) store
    /// that value; nested structs, arrays and dictionaries → JSON TEXT. `nil` binds NULL, and so
    /// does a parameter the value does not provide. A property the SQL has no parameter for
    /// throws `EncodingError` unless ``ignoresUnusedProperties`` is set.
    ///
    /// An encoder is safe to share between threads and tasks.
    public final class Encoder: @unchecked Sendable {  // options are read and written under `lock`
        /// The database the encoder writes to.
        let database: Database
        private let lock = NSLock()
        private var storedOptions = EncodingOptions()

        /// An encoder writing to `database`.
        ///
        /// ```swift
        /// let encoder = SQLite.Encoder(db)
        /// ```
        public init(_ database: Database) {
            self.database = database
        }

        /// How coding keys become parameter names. Default: `.useDefaultKeys`.
        ///
        /// ```swift
        /// encoder.keyEncodingStrategy = .convertToSnakeCase   // dueDate binds :due_date
        /// ```
        public var keyEncodingStrategy: CodingStrategy.KeyEncoding {
            get { lock.withLock { storedOptions.keyStrategy } }
            set { lock.withLock { storedOptions.keyStrategy = newValue } }
        }

        /// How dates are stored. Default: `.iso8601` (exact, sortable UTC text).
        ///
        /// ```swift
        /// encoder.dateEncodingStrategy = .secondsSince1970
        /// ```
        public var dateEncodingStrategy: CodingStrategy.DateEncoding {
            get { lock.withLock { storedOptions.dateStrategy } }
            set { lock.withLock { storedOptions.dateStrategy = newValue } }
        }

        /// When `true`, a property the SQL has no parameter for is skipped; when `false` (the
        /// default) it throws `EncodingError.invalidValue`, so nothing is dropped silently.
        ///
        /// ```swift
        /// encoder.ignoresUnusedProperties = true
        /// try encoder.encode(task, using: "UPDATE tasks SET title = :title WHERE id = :id")
        /// ```
        public var ignoresUnusedProperties: Bool {
            get { lock.withLock { storedOptions.ignoresUnusedProperties } }
            set { lock.withLock { storedOptions.ignoresUnusedProperties = newValue } }
        }

        /// Values handed to `encode(to:)` implementations through `encoder.userInfo`.
        ///
        /// ```swift
        /// encoder.userInfo[.init(rawValue: "version")!] = 2
        /// ```
        public var userInfo: [CodingUserInfoKey: any Sendable] {
            get { lock.withLock { storedOptions.userInfo } }
            set { lock.withLock { storedOptions.userInfo = newValue } }
        }

        var options: EncodingOptions { lock.withLock { storedOptions } }

        /// Binds `value` to the parameters of `sql` and runs it once.
        ///
        /// ```swift
        /// try encoder.encode(task, using: "INSERT INTO tasks VALUES (:id, :title, :dueDate, :isCompleted)")
        /// try encoder.encode(42, using: "INSERT INTO numbers VALUES (?)")   // a single value binds ?1
        /// ```
        ///
        /// An array, even one typed as a generic `T`, is written one row per element, in one
        /// transaction, like the overload that takes an array.
        ///
        /// - Throws: `EncodingError` when the value cannot be stored (with its coding path), or
        ///   ``SQLite/Error`` when SQLite rejects the statement.
        @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
        public func encode<T: Encodable>(_ value: T, using sql: String) throws {
            let options = self.options
            if let array = value as? any EncodableArray {
                try array.encodeRows(into: database, using: sql, options: options)
                return
            }
            try database.withWriter { connection in
                try connection.withStatement(sql) { statement in
                    try statement.bindRow(value, options: options)
                    try statement.run()
                }
            }
        }

        /// Runs `sql` once per element, in one transaction: all rows are written or none.
        ///
        /// ```swift
        /// try encoder.encode([task1, task2, task3], using: Task.upsert)
        /// ```
        ///
        /// - Throws: the first failure, after rolling back the whole array: `EncodingError` whose
        ///   coding path starts with the element's index, or ``SQLite/Error`` whose
        ///   ``SQLite/Error/elementIndex`` names the element.
        @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
        public func encode<T: Encodable>(_ values: [T], using sql: String) throws {
            try values.encodeRows(into: database, using: sql, options: options)
        }

        /// Asynchronous ``encode(_:using:)-(T,_)``, run off the cooperative thread pool.
        ///
        /// ```swift
        /// try await encoder.encode(task, using: Task.upsert)
        /// ```
        public func encode<T: Encodable & Sendable>(_ value: T, using sql: String) async throws {
            try await database.performWrite { _ in try self.encode(value, using: sql) }
        }

        /// Asynchronous `encode(_:using:)` of an array, run off the cooperative thread pool.
        ///
        /// ```swift
        /// try await encoder.encode(tasks, using: Task.upsert)
        /// ```
        public func encode<T: Encodable & Sendable>(_ values: [T], using sql: String) async throws {
            try await database.performWrite { _ in try self.encode(values, using: sql) }
        }
    }
}

/// Arrays written one row per element, whatever the static type they were passed as.
protocol EncodableArray {
    func encodeRows(into database: SQLite.Database, using sql: String, options: EncodingOptions) throws
}

extension Array: EncodableArray where Element: Encodable {
    func encodeRows(into database: SQLite.Database, using sql: String, options: EncodingOptions) throws {
        try database.withWriter { connection in
            try connection.withStatement(sql) { statement in
                let encoder = RowEncoder(statement: statement, options: options)   // one for every row
                _ = try connection.forEachElement(self) { index, element in
                    encoder.elementIndex = index
                    try encoder.encodeRow(element)
                    try statement.run()
                    statement.reset()
                }
            }
        }
    }
}

