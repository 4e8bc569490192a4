import Foundation

/// A searchable model's index, decided once for both engines: which columns, with which weights
/// and weight classes, in which language, and the rules a declaration must follow. SQLite builds
/// an FTS5 table from it, PostgreSQL a weighted `tsvector` column.
package struct SearchPlan: Sendable {
    package struct Field: Sendable, Equatable {
        /// The property's column.
        package let name: String
        package let weight: Double
        package let isOptional: Bool
        /// PostgreSQL's weight class: `A` for the highest weight, then `B`, `C`, `D`.
        package let weightClass: Character
    }

    package let model: String
    package let table: String
    package let fields: [Field]
    package let language: SearchLanguage

    package init(model: String, table: String, fields: [Field], language: SearchLanguage) {
        self.model = model
        self.table = table
        self.fields = fields
        self.language = language
    }

    /// SQLite's FTS5 table: `Note_search`.
    package var indexTable: String { table + "_search" }

    /// Whether the language stems words on SQLite (FTS5 has a stemmer for English only).
    package var stemsOnSQLite: Bool { language.name.lowercased() == "english" }

    /// Whether a match need only start the same way as a word of the query (stemmed languages,
    /// whose query words are stems): for highlighting.
    package var matchesWordForms: Bool { language.name.lowercased() != "simple" }

    /// What the index was built from, stored with it (PostgreSQL: the column's comment), so that
    /// a changed declaration is seen and the index rebuilt.
    package var signature: String {
        Self.signaturePrefix + "1; language " + language.name + "; "
            + fields.map { "\($0.name) \($0.weightClass)" }.joined(separator: ", ")
    }

    /// How every signature begins: an index with it is the library's own.
    package static let signaturePrefix = "CodableModels search "

    /// PostgreSQL's `ts_rank` weights, `{D,C,B,A}`: each class's weight relative to the highest.
    package var postgresWeights: String {
        let highest = fields.map(\.weight).max() ?? 1
        let classes: [Character] = ["D", "C", "B", "A"]
        let weights = classes.map { weightClass in fields.first { $0.weightClass == weightClass }.map { $0.weight / highest } ?? 0 }
        return "{" + weights.map { String($0) }.joined(separator: ",") + "}"
    }

    /// The plan of a model type, or `nil` when it lists nothing ``Model/searchable``.
    package static func ifSearchable(_ type: Any.Type) throws -> SearchPlan? {
        func plan<T: Model>(_ model: T.Type) throws -> SearchPlan? { T.searchable.isEmpty ? nil : try of(T.self) }
        guard let model = type as? any Model.Type else { return nil }
        return try plan(model)
    }

    /// The plan of a model's search declaration; throws `ModelError.Code.unsupportedModel` for a
    /// declaration that cannot be indexed (none included), naming the property and the rule.
    package static func of<T: Model>(_ type: T.Type) throws -> SearchPlan {
        let schema = try ModelReflection.of(T.self)
        func refuse(_ message: String) -> ModelError { ModelError(.unsupportedModel, T.self, "cannot be searched: " + message) }
        let declared = T.searchable
        guard !declared.isEmpty else {
            throw refuse("`searchable` lists no property; list the text properties to search: static var searchable: [SearchField<\(T.self)>] { [.field(\\.title)] }")
        }
        let language = T.searchLanguage
        guard let first = language.name.unicodeScalars.first, first == "_" || ("a"..."z").contains(first) || ("A"..."Z").contains(first),
              language.name.unicodeScalars.allSatisfy({ $0 == "_" || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) })
        else {
            throw refuse("the search language \"\(language.name)\" is not a configuration name (letters, digits and _)")
        }
        var fields: [(name: String, weight: Double, isOptional: Bool)] = []
        for field in declared {
            let column: ColumnReference
            switch field.column {
            case .success(let found): column = found
            case .failure(let error): throw refuse(error.message)
            }
            guard column.jsonPath.isEmpty else {
                throw refuse("\(column.name) is inside a nested value (stored as JSON); search a text property of the model itself")
            }
            guard let property = schema.property(named: column.column), property.references == nil else {
                throw refuse("\(column.name) is not a text property stored in the table \(schema.table)")
            }
            guard !["rank", "rowid", "oid", "_rowid_"].contains(column.column.lowercased()),
                  column.column.lowercased() != (schema.table + "_search").lowercased() else {
                throw refuse("a searchable property cannot be named `\(column.column)` (a name SQLite's full-text index reserves); rename it with CodingKeys")
            }
            guard field.weight.isFinite, field.weight > 0 else {
                throw refuse("\(column.name) has the weight \(field.weight); a weight is a positive number")
            }
            guard !fields.contains(where: { $0.name == column.column }) else {
                throw refuse("\(column.name) is listed twice in `searchable`")
            }
            fields.append((column.column, field.weight, property.isOptional))
        }
        let weights = Array(Set(fields.map(\.weight))).sorted(by: >)
        guard weights.count <= 4 else {
            throw refuse("`searchable` uses \(weights.count) different weights (\(weights.map { "\($0)" }.joined(separator: ", "))); use at most 4 (PostgreSQL has four weight classes)")
        }
        let classes: [Character] = ["A", "B", "C", "D"]
        return SearchPlan(
            model: String(describing: T.self), table: schema.table,
            fields: fields.map { field in
                Field(name: field.name, weight: field.weight, isOptional: field.isOptional, weightClass: classes[weights.firstIndex(of: field.weight) ?? 0])
            },
            language: language)
    }
}

extension Filter {
    /// The clauses of a search on this filter: the filter's condition (`nil` when it has none; the
    /// engine adds it to its match), then ` ORDER BY` best first (`best`), the filter's sorts,
    /// `id`, and the page: the filter's, at most `limit` long.
    package func searchClauses<Dialect: SQLDialect>(
        in dialect: inout Dialect, best: String, id: String, limit: Int?
    ) throws -> (condition: String?, order: String) {
        if let limit, limit < 0 {
            throw ModelError(.invalidFilter, Root.self, "a search's limit is \(limit); it must be 0 or more")
        }
        let clause = try clauses(in: &dialect, includingOrderAndLimit: false)
        let condition = clause.hasPrefix(" WHERE ") ? String(clause.dropFirst(" WHERE ".count)) : nil
        let sorts = try self.sorts.map { sort in
            dialect.order(try dialect.expression(for: sort.column, root: Root.self), ascending: sort.ascending)
        }
        var order = " ORDER BY " + ([best] + sorts + [id]).joined(separator: ", ")
        let count = [paging?.count, limit].compactMap { $0 }.min()
        if let count {
            order += " LIMIT \(dialect.bind(integer: Int64(count))) OFFSET \(dialect.bind(integer: Int64(paging?.offset ?? 0)))"
        }
        return (condition, order)
    }
}
