import Foundation

/// A type-safe query on a model: conditions on key paths, sort orders and paging.
///
/// ```swift
/// let adults = try db.get(with: Filter(\Person.age, is: .greater(than: 17)))
/// let page = try db.get(with: Filter(\Person.eyeColor, is: .equal(to: .blue))
///     .and(\Person.name, is: .hasPrefix("B"))
///     .sort(by: \.age, ascending: false)
///     .sort(by: \.name)
///     .limit(10, page: 2))
/// let everyone = Filter<Person>()   // matches every row
/// ```
///
/// Values are always bound as statement arguments, never spliced into SQL, and are stored the
/// way columns are: a `Date` compares with stored dates, an enum with its raw value. A rule's
/// value must have the property's type, so `Filter(\Person.age, is: .greater(than: "foobar"))`
/// does not compile. A key path into a nested value (`\Customer.address.city`) filters on
/// `json_extract` of the JSON column.
public struct Filter<Root: Model>: Sendable {
    package var tree: FilterTree?
    package var sorts: [(column: ColumnReference, ascending: Bool)] = []
    package var paging: (count: Int, offset: Int)?
    /// Whether values the sorts find equal keep the order they were stored in (as Foundation's
    /// stable `sorted(using:)` keeps its input's order), for sort descriptors.
    package var keepsStoredOrder = false
    /// The first problem found while building the filter, thrown when it is used.
    package var error: ModelError?

    /// A filter matching every value; add conditions with ``and(_:)``, order with ``sort(by:ascending:)``.
    ///
    /// ```swift
    /// let all = try db.get(with: Filter<Person>().sort(by: \.name))
    /// ```
    public init() {}

    /// A filter on one property.
    ///
    /// ```swift
    /// Filter(\Person.age, is: .between(15, and: 35))
    /// Filter(\Person.nickname, is: .equal(to: nil))   // IS NULL
    /// ```
    public init<Value>(_ keyPath: KeyPath<Root, Value>, is rule: Rule<Value>) {
        switch ColumnReference.resolve(keyPath as PartialKeyPath<Root>) {
        case .success(let column):
            switch rule.condition {
            case .success(let condition): tree = .condition(column, condition)
            case .failure(let failure): error = ModelError(.invalidFilter, Root.self, "the filter value for \(column.name) cannot be stored: \(failure.message)")
            }
        case .failure(let failure):
            // A key path through a to-one relationship (`\Movie.studio?.name`) filters the related table.
            if let (relationship, column) = RelatedColumn.resolve(keyPath, in: Root.self) {
                switch rule.condition {
                case .success(let condition):
                    tree = .related(column: relationship.name, table: relationship.target.tableName, .condition(column, condition))
                case .failure(let problem):
                    error = ModelError(.invalidFilter, Root.self, "the filter value for \(relationship.name).\(column.name) cannot be stored: \(problem.message)")
                }
            } else {
                error = failure
            }
        }
    }

    /// Values whose to-many relationship links the value with this id.
    ///
    /// ```swift
    /// let withKeanu = try db.get(with: Filter(\Movie.cast, contains: keanu.id))
    /// ```
    public init<Target: Model>(_ keyPath: KeyPath<Root, [Target]>, contains id: Target.ID) {
        do {
            let schema = try ModelReflection.of(Root.self)
            guard let relationship = schema.relationships.first(where: { $0.keyPath == keyPath && $0.isToMany }) else {
                throw ModelError(.invalidKeyPath, Root.self, "cannot filter on \(keyPath) with contains: it is not a to-many relationship")
            }
            let key = try ValueEncoder.value(for: id, at: .root, options: EncodingOptions())
            tree = .linked(link: relationship.linkTable, owner: schema.table, target: key)
        } catch let failure as ModelError {
            error = failure
        } catch {
            self.error = ModelError(.invalidFilter, Root.self, "the id given to contains cannot be stored: \(error)")
        }
    }

    /// Values whose to-many relationship links `value` (found by its id).
    ///
    /// ```swift
    /// let withKeanu = try db.get(with: Filter(\Movie.cast, contains: keanu))
    /// ```
    public init<Target: Model>(_ keyPath: KeyPath<Root, [Target]>, contains value: Target) {
        self.init(keyPath, contains: value.id)
    }

    /// Values matching both this filter and `other`.
    ///
    /// ```swift
    /// Filter(\Person.age, is: .greater(than: 17)).and(Filter(\Person.eyeColor, is: .equal(to: .blue)))
    /// ```
    public func and(_ other: Filter<Root>) -> Filter<Root> {
        combined(with: other) { .and($0, $1) }
    }

    /// Values matching either this filter or `other`.
    ///
    /// ```swift
    /// Filter(\Person.age, is: .less(than: 13)).or(Filter(\Person.age, is: .greater(than: 64)))
    /// ```
    public func or(_ other: Filter<Root>) -> Filter<Root> {
        combined(with: other) { .or($0, $1) }
    }

    /// This filter and a condition on another property.
    ///
    /// ```swift
    /// Filter(\Person.age, is: .greater(than: 17)).and(\Person.name, is: .hasPrefix("B"))
    /// ```
    public func and<Value>(_ keyPath: KeyPath<Root, Value>, is rule: Rule<Value>) -> Filter<Root> {
        and(Filter(keyPath, is: rule))
    }

    /// This filter or a condition on another property.
    ///
    /// ```swift
    /// Filter(\Person.age, is: .less(than: 13)).or(\Person.age, is: .greater(than: 64))
    /// ```
    public func or<Value>(_ keyPath: KeyPath<Root, Value>, is rule: Rule<Value>) -> Filter<Root> {
        or(Filter(keyPath, is: rule))
    }

    private func combined(with other: Filter<Root>, _ combine: (FilterTree, FilterTree) -> FilterTree) -> Filter<Root> {
        var result = self
        result.error = error ?? other.error
        switch (tree, other.tree) {
        case (let left?, let right?): result.tree = combine(left, right)
        case (nil, let right): result.tree = right
        case (let left, nil): result.tree = left
        }
        result.sorts += other.sorts
        result.paging = paging ?? other.paging
        result.keepsStoredOrder = keepsStoredOrder || other.keepsStoredOrder
        return result
    }

    /// Orders the results by a property; a later `sort(by:)` orders values the earlier ones tie on.
    ///
    /// ```swift
    /// Filter<Person>().sort(by: \.age, ascending: false).sort(by: \.name)
    /// ```
    public func sort<Value>(by keyPath: KeyPath<Root, Value>, ascending: Bool = true) -> Filter<Root> {
        var result = self
        switch ColumnReference.resolve(keyPath as PartialKeyPath<Root>) {
        case .success(let column): result.sorts.append((column, ascending))
        case .failure(let failure): result.error = result.error ?? failure
        }
        return result
    }

    /// At most `count` results: page 1 is the first `count`, page 2 the next `count`, and so on.
    ///
    /// ```swift
    /// Filter<Person>().sort(by: \.name).limit(10, page: 2)   // results 11 to 20
    /// ```
    public func limit(_ count: Int, page: Int = 1) -> Filter<Root> {
        var result = self
        guard count >= 0, page >= 1 else {
            result.error = result.error ?? ModelError(.invalidFilter, Root.self, "limit(\(count), page: \(page)) needs a count of 0 or more and a page of 1 or more")
            return result
        }
        let (offset, overflow) = count.multipliedReportingOverflow(by: page - 1)
        result.paging = (count, overflow ? Int.max : offset)
        return result
    }
}

/// A condition tree compiled to SQL with positional arguments.
package indirect enum FilterTree: Sendable {
    case condition(ColumnReference, Condition)
    case and(FilterTree, FilterTree)
    case or(FilterTree, FilterTree)
    /// The to-one `column` holds the id of a row of `table` that matches the predicate.
    case related(column: String, table: String, FilterTree)
    /// The owner's to-many link table holds `target`.
    case linked(link: String, owner: String, target: StoredValue)
    /// A translated `#Predicate` on the model stored in `table`.
    case expression(QueryNode, table: String)

    /// The columns the conditions test.
    package var columns: [ColumnReference] {
        switch self {
        case .condition(let column, _): [column]
        case .and(let left, let right), .or(let left, let right): left.columns + right.columns
        case .related, .linked, .expression: []  // checked when they were resolved
        }
    }
}
