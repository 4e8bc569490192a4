import Foundation

/// A `Codable` type stored one value per row, in a table derived from the type itself.
///
/// Conform a plain struct with an `id`; there is nothing else to declare:
///
/// ```swift
/// enum EyeColor: String, Codable { case blue, brown }
/// struct Person: Codable, UUIDModel {
///     let id: UUID
///     var name: String
///     var age: Int
///     var nickname: String?
///     var eyeColor: EyeColor
/// }
///
/// try db.save(Person(id: UUID(), name: "Billy", age: 20, nickname: nil, eyeColor: .brown))
/// let adults = try db.get(with: Filter(\Person.age, is: .greater(than: 17)))
/// ```
///
/// The table (named ``tableName``) has a column per stored property, named after the property
/// and typed after it (see the article "Working with models" in CodableSQLite's documentation): `NOT NULL` for non-optional properties, the primary key
/// on `id`. An `id` of type `Int?` or `Int64?` is assigned by SQLite when you save a value whose id
/// is `nil`. Properties added later become new columns automatically.
///
/// Sendable: not required. The synchronous calls take any model; the `async` forms need
/// `Sendable` models, which plain structs of `Sendable` properties are automatically.
public protocol Model: Codable, Identifiable where ID: Codable {
    /// The table's name. Default: the type's name, such as `Person`.
    static var tableName: String { get }

    /// Indexes and uniqueness constraints on properties, created with the table.
    ///
    /// ```swift
    /// static var indexes: [ModelIndex<Person>] { [.index(\.name), .unique(\.email)] }
    /// ```
    static var indexes: [ModelIndex<Self>] { get }

    /// What deleting a value does to the values its relationships link; relationships not
    /// listed use ``DeleteRule/nullify``. See the article "Relationships" in CodableSQLite's documentation.
    ///
    /// ```swift
    /// static var deleteRules: [PartialKeyPath<Movie>: DeleteRule] { [\Movie.cast: .cascade] }
    /// ```
    static var deleteRules: [PartialKeyPath<Self>: DeleteRule] { get }

    /// The text properties full-text search reads, each with its weight; none unless given. A
    /// model that lists some gets a full-text index kept by the database (see ``SearchableModel``).
    ///
    /// ```swift
    /// static var searchable: [SearchField<Note>] { [.field(\.title, weight: 3), .field(\.body)] }
    /// ```
    static var searchable: [SearchField<Self>] { get }

    /// The language whose word forms a search matches: ``SearchLanguage/simple`` unless given.
    static var searchLanguage: SearchLanguage { get }
}

extension Model {
    /// The type's name, such as `Person` (for a generic type, with its arguments: `Box<Int>`).
    public static var tableName: String { String(describing: Self.self) }

    /// No indexes beyond the primary key.
    public static var indexes: [ModelIndex<Self>] { [] }

    /// Every relationship uses ``DeleteRule/nullify``.
    public static var deleteRules: [PartialKeyPath<Self>: DeleteRule] { [:] }

    /// Nothing is searched: no full-text index.
    public static var searchable: [SearchField<Self>] { [] }

    /// Words as written: ``SearchLanguage/simple``.
    public static var searchLanguage: SearchLanguage { .simple }
}

/// A ``Model`` identified by a `UUID`.
///
/// ```swift
/// struct Person: Codable, UUIDModel { let id: UUID; var name: String }
/// ```
///
/// Sendable: as ``Model``.
public protocol UUIDModel: Model where ID == UUID {}

/// An index on one or more properties of a model, declared in ``Model/indexes``.
///
/// ```swift
/// extension Person {
///     static var indexes: [ModelIndex<Person>] {
///         [.index(\.age), .unique(\.email), .index(\.lastName, \.firstName), .index(\.address.city)]
///     }
/// }
/// ```
///
/// Filters on an indexed property use the index. A property inside a nested value (stored as
/// JSON) gets an index on its `json_extract` expression, which filters on that path use too.
public struct ModelIndex<Root: Model>: Sendable {
    package let columns: [Result<ColumnReference, ModelError>]
    package let isUnique: Bool

    /// An index speeding up filters and sorts on these properties, in this order.
    ///
    /// ```swift
    /// .index(\Person.lastName, \Person.firstName)
    /// ```
    public static func index(_ keyPaths: PartialKeyPath<Root>...) -> ModelIndex {
        ModelIndex(columns: keyPaths.map { ColumnReference.resolve($0) }, isUnique: false)
    }

    /// A uniqueness constraint: saving a second value with the same values throws
    /// `SQLite.Error` with code `SQLite.ResultCode.constraint`.
    ///
    /// ```swift
    /// .unique(\Person.email)
    /// ```
    public static func unique(_ keyPaths: PartialKeyPath<Root>...) -> ModelIndex {
        ModelIndex(columns: keyPaths.map { ColumnReference.resolve($0) }, isUnique: true)
    }
}

/// A failure of the model layer that SQLite did not report: an unsupported model shape, a schema
/// change that cannot be applied automatically, a filter on something that is not stored.
///
/// Match its ``code`` rather than its message, which may be reworded:
///
/// ```swift
/// do {
///     try db.save(person)
/// } catch ModelError.Code.schemaMismatch {
///     // the table cannot take this version of the model: migrate
/// } catch let error as ModelError {
///     print(error.code, error.model, error.message)
/// }
/// ```
public struct ModelError: Error, Hashable, Sendable, CustomStringConvertible, LocalizedError {
    /// What kind of failure this is.
    public let code: Code
    /// The model type's name.
    public let model: String
    /// What went wrong and the way out.
    public let message: String

    package init(_ code: Code, _ model: Any.Type, _ message: String) {
        self.init(code, modelNamed: String(describing: model), message)
    }

    package init(_ code: Code, modelNamed model: String, _ message: String) {
        self.code = code
        self.model = model
        self.message = message
    }

    /// `Person: <message>`
    public var description: String { "\(model): \(message)" }

    /// The same text as ``description``.
    public var errorDescription: String? { description }

    /// The kind of a ``ModelError``: a struct with static members, so codes can be added without
    /// breaking `switch` statements, and matchable in `catch` clauses.
    ///
    /// ```swift
    /// catch let error as ModelError where error.code == .invalidFilter { … }
    /// ```
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// A short stable name, such as `schemaMismatch`: the ``description``.
        package let name: String

        package init(_ name: String) { self.name = name }

        /// The type cannot be a model: a class, no `id`, an unsupported `id` type, `CodingKeys`
        /// that rename properties, a value that does not encode a keyed container.
        public static let unsupportedModel = Code("unsupportedModel")
        /// The existing table cannot hold this version of the model without a migration: a new
        /// non-optional property on a table with rows, a changed type, a property made optional,
        /// a column the model no longer writes that is `NOT NULL` without a default.
        public static let schemaMismatch = Code("schemaMismatch")
        /// A key path that is not stored, or that the stored JSON does not hold by that name, used
        /// in a filter, a sort or an index.
        public static let invalidKeyPath = Code("invalidKeyPath")
        /// A filter whose value cannot be stored (a NaN, an integer too large) or whose limit or
        /// page is out of range.
        public static let invalidFilter = Code("invalidFilter")
        /// The database answered in a way the model layer cannot use, such as an insert that
        /// returned no row (a trigger that removed it).
        public static let unexpectedResult = Code("unexpectedResult")
        /// A delete that a relationship forbids: a ``DeleteRule/deny`` rule while related values
        /// exist, or a value that others still refer to through a non-optional to-one relationship.
        public static let deleteDenied = Code("deleteDenied")
        /// A `#Predicate` or `SortDescriptor` that SQL cannot run with Swift's exact meaning (a
        /// `String`'s `count`, a localized comparator, a method without a translation); the
        /// message names it.
        public static let unsupportedPredicate = Code("unsupportedPredicate")
        /// An argument out of range, such as `copy(_:from:batchSize: 0)`.
        public static let invalidArgument = Code("invalidArgument")
        /// A save that a unique index refuses (``ModelIndex/unique(_:)``): another value already
        /// has the same indexed properties. The engine throws its own error (`SQLite.Error` with
        /// `constraintUnique`, `Postgres.Error` with SQLSTATE `23505`, both naming the index), which
        /// this code matches on either engine:
        ///
        /// ```swift
        /// do {
        ///     try await db.save(account)
        /// } catch ModelError.Code.uniqueViolation {
        ///     // the email is taken
        /// }
        /// ```
        public static let uniqueViolation = Code("uniqueViolation")

        /// A short stable name, such as `schemaMismatch`.
        public var description: String { name }

        /// The code of any error a model call throws: a ``ModelError``'s own, or the one an
        /// engine's error amounts to (a `UNIQUE` failure on SQLite, SQLSTATE `23505` on PostgreSQL:
        /// ``uniqueViolation``); `nil` for other errors.
        ///
        /// ```swift
        /// if ModelError.Code(of: error) == .uniqueViolation { … }
        /// ```
        public init?(of error: any Error) {
            if let error = error as? ModelError {
                self = error.code
            } else if let code = (error as? any EngineError)?.modelErrorCode {
                self = code
            } else {
                return nil
            }
        }

        /// Whether `error` has this code (see ``init(of:)``), for `catch ModelError.Code.x` clauses.
        public static func ~= (code: Code, error: any Error) -> Bool {
            Code(of: error) == code
        }
    }
}

/// An engine's own error (`SQLite.Error`, `Postgres.Error`) that can say which ``ModelError/Code``
/// it amounts to, so that code written against ``ModelStore`` matches failures the same way on
/// both engines while each engine keeps its precise error (result codes, SQLSTATE, the SQL).
///
/// ```swift
/// catch ModelError.Code.uniqueViolation { … }   // SQLite's UNIQUE constraint or PostgreSQL's 23505
/// ```
package protocol EngineError: Error {
    /// The model-layer code this error amounts to, such as ``ModelError/Code/uniqueViolation``;
    /// `nil` when it has none.
    var modelErrorCode: ModelError.Code? { get }
}
