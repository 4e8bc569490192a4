import Foundation

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Filter {
    /// The values a Foundation `#Predicate` accepts, found by the engine in SQL with Swift's
    /// meaning: the rows are the ones `values.filter(predicate)` would keep.
    ///
    /// ```swift
    /// let recent = try await db.get(with: Filter(#Predicate<Film> { film in
    ///     film.year >= 2020 && film.studio?.name == "A24" && film.cast.contains { $0.name == "Ann" }
    /// }))
    /// ```
    ///
    /// Translated: comparisons and `&&`, `||`, `!`; optionals (`== nil`, `??`, `?.`, `flatMap`,
    /// `!`); text `==`, `<` (in Swift's order of code points), `contains` and `starts(with:)`
    /// (literal, case- and accent-sensitive); enums by raw value (`.rawValue` of a `CaseIterable`
    /// enum); key paths of captured values, computed once; `Bool`, `Date`, `UUID`,
    /// integers and floating point with Swift's arithmetic (`/` and `%` truncate on integers);
    /// `a ? b : c`; ranges' `contains`; a captured collection's `contains`; stored arrays'
    /// `contains`, `contains(where:)`, `allSatisfy`, `count` and `isEmpty`; to-one relationships
    /// through `?.` and to-many ones through `contains(where:)`, `allSatisfy`, `count` and `isEmpty`.
    /// Anything else (a `String`'s `count`, in grapheme clusters; a method SQL has no exact
    /// equivalent of) makes every call with the filter throw `ModelError.Code.unsupportedPredicate`,
    /// naming it; nothing is evaluated in Swift over the table.
    ///
    /// Compose it with ``and(_:)``, ``or(_:)``, ``sort(by:ascending:)`` and ``limit(_:page:)``.
    public init(_ predicate: Predicate<Root>) {
        self.init()
        do {
            var translation = PredicateTranslation(root: Root.self, variable: predicate.variable.key)
            tree = .expression(try translation.node(predicate.expression), table: Root.tableName)
        } catch let failure as ModelError {
            error = failure
        } catch {
            self.error = ModelError(.unsupportedPredicate, Root.self, "cannot run this #Predicate: \(error)")
        }
    }

    /// A `#Predicate`'s values in the order of Foundation sort descriptors: the values and order
    /// `values.filter(predicate).sorted(using: sortBy)` gives, values the descriptors find equal
    /// keeping the order they were stored in (as `get(_:)` returns them; on SQLite, unless an
    /// index of several columns gives the order; on PostgreSQL, until a row is updated). For one
    /// order everywhere, end with a descriptor on a unique property, such as `SortDescriptor(\.id)`.
    ///
    /// ```swift
    /// let newest = try await db.get(with: Filter(
    ///     #Predicate<Film> { $0.rating != nil },
    ///     sortBy: [SortDescriptor(\.year, order: .reverse), SortDescriptor(\.title)]
    /// ).limit(10))
    /// ```
    ///
    /// A descriptor sorts on a stored property (or a member of a nested value) of a type whose
    /// stored form sorts as Swift sorts it: integers, floating point, `String` (Swift's order of
    /// code points: `Comparable` and the `.lexical` comparator), `Date`, `UUID`, `Decimal`, and
    /// their optionals (`nil` first in forward order, as Foundation puts it). Others, and the
    /// localized comparators, throw `ModelError.Code.unsupportedPredicate` rather than order differently.
    public init(_ predicate: Predicate<Root>, sortBy: [SortDescriptor<Root>]) {
        self.init(predicate)
        for descriptor in sortBy {
            do {
                sorts.append(try Self.sort(descriptor))
            } catch let failure as ModelError {
                error = error ?? failure
            } catch {
                self.error = self.error ?? ModelError(.unsupportedPredicate, Root.self, "cannot sort by \(descriptor): \(error)")
            }
        }
        keepsStoredOrder = true
    }

    /// The column and direction of a sort descriptor, refused where SQL cannot sort as it does.
    private static func sort(_ descriptor: SortDescriptor<Root>) throws -> (column: ColumnReference, ascending: Bool) {
        func refuse(_ why: String) -> ModelError {
            ModelError(.unsupportedPredicate, Root.self, "cannot sort as this SortDescriptor does: \(why)")
        }
        guard let keyPath = descriptor.keyPath else { throw refuse("it has no key path") }
        if let comparator = descriptor.stringComparator, comparator != String.StandardComparator.lexical {
            throw refuse("\(keyPath) uses a localized comparator, whose order SQL cannot reproduce exactly; use the .lexical comparator (or none)")
        }
        let column: ColumnReference
        switch ColumnReference.resolve(keyPath) {
        case .success(let found): column = found
        case .failure: throw refuse("\(keyPath) is not a stored property of \(Root.self) (sorting through a relationship is not supported)")
        }
        if let problem = column.nestedKeyProblem(root: Root.self) { throw problem }
        let valueType = unwrappedOptionalType(type(of: keyPath).valueType).type
        guard ValueKind.sortsAsSwift(valueType) else {
            throw refuse("\(keyPath) holds \(valueType), whose stored form does not sort as Swift sorts it")
        }
        return (column, descriptor.order == .forward)
    }
}
