import Foundation

/// A ``Model`` whose text can be searched: it lists the properties to search and how much each
/// counts, and the library keeps a full-text index of them, on SQLite and on PostgreSQL.
///
/// ```swift
/// struct Note: SearchableModel {
///     var id: Int?
///     var title: String
///     var body: String
///     static var searchable: [SearchField<Note>] { [.field(\.title, weight: 3), .field(\.body)] }
/// }
///
/// let hits = try await db.search(Note.self, for: "crème brul", limit: 20)
/// for hit in hits { print(hit.value.title, hit.score, hit.snippet(\.body)) }
/// ```
///
/// The declaration is ``Model/searchable`` (and ``Model/searchLanguage``), which any model may
/// give; conforming to `SearchableModel` says the model is searched. A model that lists nothing
/// (by mistake) throws `ModelError.Code.unsupportedModel` at its first search, naming the
/// declaration to add.
///
/// The index is created with the model's table, or at the first search of a table saved before
/// the declaration (its rows are indexed then), rebuilt by itself when the declaration's
/// properties or language change, and dropped when a model no longer lists any. It is kept in
/// step by the database: saves, deletes, raw SQL and rows applied by a sync pull are all
/// indexed. It is local to each database and never synced. See the article "Searching text" in
/// CodableSQLite's documentation for how each engine stores it and how their rankings compare.
///
/// Sendable: as ``Model``.
public protocol SearchableModel: Model {
    /// The text properties searched, each with its weight (how much a match in it counts).
    static var searchable: [SearchField<Self>] { get }
}

/// A searchable text property of a model and its weight, listed in ``Model/searchable``.
///
/// ```swift
/// static var searchable: [SearchField<Note>] { [.field(\.title, weight: 3), .field(\.body)] }
/// ```
///
/// A weight is a positive number; a model uses at most four different weights (PostgreSQL's
/// `tsvector` has four weight classes, and the rule is the same on both engines).
public struct SearchField<Root: Model>: Sendable {
    package let column: Result<ColumnReference, ModelError>
    package let weight: Double

    /// A `String` property, searched with `weight` (1 unless given).
    ///
    /// ```swift
    /// .field(\Note.title, weight: 3)
    /// ```
    public static func field(_ keyPath: KeyPath<Root, String>, weight: Double = 1) -> SearchField {
        SearchField(column: ColumnReference.resolve(keyPath as PartialKeyPath<Root>), weight: weight)
    }

    /// An optional `String` property (`nil` is no text), searched with `weight` (1 unless given).
    ///
    /// ```swift
    /// .field(\Note.subtitle)
    /// ```
    public static func field(_ keyPath: KeyPath<Root, String?>, weight: Double = 1) -> SearchField {
        SearchField(column: ColumnReference.resolve(keyPath as PartialKeyPath<Root>), weight: weight)
    }
}

/// The language of a searchable model's text: which forms of a word match one another.
///
/// ```swift
/// static var searchLanguage: SearchLanguage { .english }   // "runs" finds "running"
/// ```
///
/// ``simple`` (the default) matches words as written, ignoring case and accents, and finds the
/// same rows on both engines. ``english`` also matches word forms: on SQLite with FTS5's Porter
/// stemmer, on PostgreSQL with its `english` configuration (which also leaves out stop words such
/// as "the"). Any other name is a PostgreSQL text search configuration (`SearchLanguage("german")`);
/// SQLite has no stemmer for it and matches words as written.
public struct SearchLanguage: Hashable, Sendable, CustomStringConvertible {
    /// The PostgreSQL text search configuration's name, such as `simple` or `english`.
    public let name: String

    /// A PostgreSQL text search configuration by name (letters, digits and `_`).
    ///
    /// ```swift
    /// SearchLanguage("french")
    /// ```
    public init(_ name: String) { self.name = name }

    /// Words as written (ignoring case and accents): the same rows on both engines.
    public static let simple = SearchLanguage("simple")
    /// English word forms (stemming) on both engines.
    public static let english = SearchLanguage("english")

    /// The ``name``.
    public var description: String { name }
}
