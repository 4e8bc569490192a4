#if canImport(Observation)
import Observation

/// A query's current value as an `@Observable` object (spelled ``SQLite/LiveValue``), for SwiftUI and for any code that uses
/// the Observation framework (on Linux too): ``value`` follows the database.
///
/// ```swift
/// @MainActor struct AdultsView: View {
///     let adults: SQLite.LiveValue<[Person]>   // db.live(Filter(\Person.age, is: .greater(than: 17)))
///     var body: some View { List(adults.value) { Text($0.name) } }
/// }
/// ```
///
/// It reads the database until it is released. Its properties change on the main actor.
///
/// Sendable: main-actor isolated.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, macCatalyst 17, *)
@MainActor @Observable
public final class SQLiteLiveValue<Value: Sendable> {
    /// The newest value; the initial value until the first read completes.
    public private(set) var value: Value
    /// The error that ended the observation, if any (the table was dropped).
    public private(set) var error: (any Error)?
    /// Whether the first read has completed.
    public private(set) var isLoaded = false

    /// The task that reads the database; cancelled when this object goes away.
    @ObservationIgnored private let reader = Locked<Task<Void, Never>?>(nil)

    init(initial: Value, observation: SQLite.ObservedValues<Value>) {
        value = initial
        let task = Task { [weak self] in
            do {
                for try await value in observation {
                    guard let self else { return }
                    self.value = value
                    isLoaded = true
                }
            } catch {
                self?.error = error
            }
        }
        reader.withLock { $0 = task }
    }

    deinit {
        reader.withLock { $0?.cancel() }
    }
}

extension SQLite {
    /// A query's current value as an `@Observable` object: see ``SQLiteLiveValue``.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, macCatalyst 17, *)
    public typealias LiveValue = SQLiteLiveValue
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, macCatalyst 17, *)
extension SQLite.Database {
    /// The values a filter matches, as an `@Observable` object whose `value` follows the database.
    ///
    /// ```swift
    /// let live = db.live(Filter(\Person.age, is: .greater(than: 17)))   // live.value: [Person]
    /// ```
    @MainActor
    public func live<T: Model & Sendable>(_ filter: Filter<T>) -> SQLite.LiveValue<[T]> {
        SQLite.LiveValue(initial: [], observation: observe(filter))
    }

    /// The value with this id (`nil` while there is none), as an `@Observable` object.
    ///
    /// ```swift
    /// let billy = db.live(Person.self, id: billyID)   // billy.value: Person?
    /// ```
    @MainActor
    public func live<T: Model & Sendable>(_ type: T.Type, id: T.ID) -> SQLite.LiveValue<T?> where T.ID: Sendable {
        SQLite.LiveValue(initial: nil, observation: observe(type, id: id))
    }

    /// The rows of `sql` decoded as `T`, as an `@Observable` object.
    ///
    /// ```swift
    /// let open = db.live([Task].self, using: "SELECT * FROM tasks WHERE isCompleted = 0")
    /// ```
    @MainActor
    public func live<T: Decodable & Sendable>(_ type: [T].Type, using sql: SQL, arguments: SQLiteArguments = [:]) -> SQLite.LiveValue<[T]> {
        SQLite.LiveValue(initial: [], observation: observe(type, using: sql, arguments: arguments))
    }
}
#endif
