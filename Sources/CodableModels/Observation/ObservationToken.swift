import Dispatch
import Foundation

/// Keeps a callback observation running: ``cancel()`` stops it, and so does releasing the token.
/// Any observation gives one, with ``ObservedValues/sink(queue:onError:_:)``:
///
/// ```swift
/// let token = db.observe(Filter(\Person.age, is: .greater(than: 17))).sink(queue: .main) { adults in
///     print(adults.count, "adults")
/// }
/// token.cancel()
/// ```
///
/// Sendable: cancelling from any thread is safe.
public final class ObservationToken: Sendable {
    private let isCancelled = Locked(false)
    private let task = Locked<Task<Void, Never>?>(nil)

    /// Calls `onChange` on `queue` with each value of `observation` until cancelled; `onError`
    /// with the error that ends it, if any.
    package init<Value: Sendable>(
        _ observation: ObservedValues<Value>, queue: DispatchQueue,
        onError: (@Sendable (any Error) -> Void)?, onChange: @escaping @Sendable (Value) -> Void
    ) {
        let isCancelled = self.isCancelled
        let task = Task {
            do {
                for try await value in observation {
                    queue.async { if !isCancelled.withLock({ $0 }) { onChange(value) } }
                }
            } catch {
                if let onError { queue.async { if !isCancelled.withLock({ $0 }) { onError(error) } } }
            }
        }
        self.task.withLock { $0 = task }
    }

    /// Stops the observation; the callback is not called again, even for a value already
    /// on its way to the queue.
    public func cancel() {
        isCancelled.withLock { $0 = true }
        task.withLock { $0?.cancel() }
    }

    deinit {
        cancel()
    }
}

extension ObservedValues {
    /// Calls `onChange` on `queue` with each value (the current one first), until the token is
    /// cancelled or released: the callback form of `for try await`.
    ///
    /// ```swift
    /// let token = db.observe(count: Filter<Person>()).sink(queue: .main) { count in label.text = "\(count)" }
    /// ```
    ///
    /// - Parameters:
    ///   - queue: where `onChange` and `onError` are called.
    ///   - onError: called on `queue` if a read fails (the table was dropped); the observation then ends.
    ///   - onChange: called on `queue` with each value.
    public func sink(
        queue: DispatchQueue = .main, onError: (@Sendable (any Error) -> Void)? = nil, _ onChange: @escaping @Sendable (Value) -> Void
    ) -> ObservationToken {
        ObservationToken(self, queue: queue, onError: onError, onChange: onChange)
    }
}

extension ObservableModelStore {
    /// Calls `onChange` on `queue` with the values a filter matches: first the current ones, then
    /// after each commit that changes them. The observation runs until the token is cancelled or
    /// released.
    ///
    /// ```swift
    /// let token = db.observe(Filter(\Task.isCompleted, is: .equal(to: false)), queue: .main) { open in
    ///     render(open)
    /// }
    /// ```
    public func observe<T: Model & Sendable>(
        _ filter: Filter<T>, queue: DispatchQueue = .main, onError: (@Sendable (any Error) -> Void)? = nil,
        _ onChange: @escaping @Sendable ([T]) -> Void
    ) -> ObservationToken {
        observe(filter).sink(queue: queue, onError: onError, onChange)
    }

    /// Calls `onChange` on `queue` with the value with this id (`nil` while there is none), now
    /// and after each commit that changes it, until the token is cancelled or released.
    ///
    /// ```swift
    /// let token = db.observe(Person.self, id: billyID, queue: .main) { billy in print(billy?.name ?? "gone") }
    /// ```
    public func observe<T: Model & Sendable>(
        _ type: T.Type, id: T.ID, queue: DispatchQueue = .main, onError: (@Sendable (any Error) -> Void)? = nil,
        _ onChange: @escaping @Sendable (T?) -> Void
    ) -> ObservationToken where T.ID: Sendable {
        observe(type, id: id).sink(queue: queue, onError: onError, onChange)
    }
}
