#if canImport(Observation)
import Observation

/// An observation's current value as an `@Observable` object, for SwiftUI and for any code that
/// uses the Observation framework (on Linux too): ``value`` follows the database, on either engine.
///
/// ```swift
/// @MainActor struct AdultsView: View {
///     let adults: LiveValue<[Person]>   // LiveValue(initial: [], observation: db.observe(Filter(\Person.age, is: .greater(than: 17))))
///     var body: some View { List(adults.value) { Text($0.name) } }
/// }
/// ```
///
/// Any observation becomes one (``init(initial:observation:)``): a filter's values, a value by
/// id, a count, a search's hits, and on SQLite the rows of SQL of your own. It reads the database
/// until it is released. Its properties change on the main actor.
///
/// Sendable: main-actor isolated.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, macCatalyst 17, *)
@MainActor @Observable
public final class LiveValue<Value: Sendable> {
    /// The newest value; the initial value until the first read completes.
    public private(set) var value: Value
    /// The error that ended the observation, if any (the table was dropped).
    public private(set) var error: (any Error)?
    /// Whether the first read has completed.
    public private(set) var isLoaded = false

    /// The task that reads the database; cancelled when this object goes away.
    @ObservationIgnored private let reader = Locked<Task<Void, Never>?>(nil)

    /// Follows `observation`, starting from `initial`.
    ///
    /// ```swift
    /// let open = LiveValue(initial: [], observation: db.observe(Filter(\Task.isCompleted, is: .equal(to: false))))
    /// ```
    public init(initial: Value, observation: ObservedValues<Value>) {
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

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, macCatalyst 17, *)
extension ObservableModelStore {
    /// The values a filter matches, as an `@Observable` object whose `value` follows the database.
    ///
    /// ```swift
    /// let live = db.live(Filter(\Person.age, is: .greater(than: 17)))   // live.value: [Person]
    /// ```
    @MainActor
    public func live<T: Model & Sendable>(_ filter: Filter<T>) -> LiveValue<[T]> {
        LiveValue(initial: [], observation: observe(filter))
    }

    /// The value with this id (`nil` while there is none), as an `@Observable` object.
    ///
    /// ```swift
    /// let billy = db.live(Person.self, id: billyID)   // billy.value: Person?
    /// ```
    @MainActor
    public func live<T: Model & Sendable>(_ type: T.Type, id: T.ID) -> LiveValue<T?> where T.ID: Sendable {
        LiveValue(initial: nil, observation: observe(type, id: id))
    }

    /// How many values a filter matches, as an `@Observable` object.
    ///
    /// ```swift
    /// let minors = db.live(count: Filter(\Person.age, is: .less(than: 18)))   // minors.value: Int
    /// ```
    @MainActor
    public func live<T: Model & Sendable>(count filter: Filter<T>) -> LiveValue<Int> {
        LiveValue(initial: 0, observation: observe(count: filter))
    }
}

#endif
