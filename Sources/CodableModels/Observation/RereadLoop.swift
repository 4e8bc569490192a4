import Foundation

/// The heart of a live query, the same on both engines: it reads the value again whenever it is
/// told something changed, and hands the newest value to its consumer.
///
/// - Reads are coalesced: changes that arrive while a read runs cause one more read after it, so
///   10,000 commits in a burst cost a few reads, and the last read always follows the last change.
/// - The consumer gets the newest value only (a slow consumer never sees a backlog of stale ones);
///   a value equal to the last one delivered (when the values are `Equatable`) is not delivered.
/// - A failing read ends the observation with that error; a read that throws ``Ended`` ends it
///   without one (the database went away).
///
/// The engine supplies `read` (which may also register the observation first) and `onEnd`
/// (which unregisters it); both may capture the engine's objects weakly.
package final class RereadLoop<Value: Sendable>: ObservationSource, @unchecked Sendable {  // mutable state is guarded by `lock`
    /// Thrown by a read when there is nothing left to read (the database was released).
    package struct Ended: Error {
        package init() {}
    }

    private let lock = NSLock()
    private let read: @Sendable () async throws -> Value
    private let onEnd: @Sendable () -> Void
    private var isReading = false
    private var readAgain = false
    private var reader: Task<Void, Never>?
    private var lastDelivered: Value?
    private let mailbox = Mailbox<Value>(.newestOnly)
    private var reads = 0

    package init(read: @escaping @Sendable () async throws -> Value, onEnd: @escaping @Sendable () -> Void) {
        self.read = read
        self.onEnd = onEnd
    }

    deinit {
        reader?.cancel()
    }

    package var readCount: Int { lock.withLock { reads } }
    package var isFinished: Bool { mailbox.isClosed }

    /// Reads the first value.
    package func start() {
        changed()
    }

    /// Something the value depends on changed: read it again (once more after the read that
    /// runs, if one does). Only schedules work: callable from any thread.
    package func changed() {
        lock.withLock {
            guard !mailbox.isClosed else { return }
            if isReading {
                readAgain = true
                return
            }
            isReading = true
            // Made under the lock, so that `finish` always sees the running reader.
            reader = Task { [weak self] in
                guard let self else { return }
                await readUntilCurrent()
            }
        }
    }

    private func readUntilCurrent() async {
        while true {
            lock.withLock { readAgain = false }
            do {
                lock.withLock { reads += 1 }
                deliver(try await read())
            } catch is Ended {
                return finish(with: nil)
            } catch {
                if Task.isCancelled { return }
                return finish(with: error)
            }
            let done = lock.withLock { () -> Bool in
                if readAgain && !mailbox.isClosed { return false }
                isReading = false
                return true
            }
            if done { return }
        }
    }

    private func deliver(_ value: Value) {
        let isNew = lock.withLock { () -> Bool in
            if let last = lastDelivered, areEqual(last, value) { return false }
            lastDelivered = value
            return true
        }
        if isNew { mailbox.put(value) }
    }

    /// Ends the observation: the consumer's next call returns `nil` (or throws `error`), and
    /// `onEnd` runs once.
    package func finish(with error: (any Error)?) {
        guard mailbox.close(with: error) else { return }
        lock.withLock { reader }?.cancel()
        onEnd()
    }

    /// Stops observing.
    package func cancel() {
        finish(with: nil)
    }

    /// The newest value not yet consumed, waiting for it if needed; `nil` once the observation
    /// ended or the calling task was cancelled.
    package func next() async throws -> Value? {
        try await mailbox.take { [weak self] in self?.cancel() }
    }
}

/// Whether two values are equal, when their type is `Equatable` (checked at run time, so that
/// observations of any value type skip repeated equal values without asking for a constraint).
package func areEqual<Value>(_ first: Value, _ second: Value) -> Bool {
    guard let first = first as? any Equatable else { return false }
    func isEqual<E: Equatable>(_ value: E) -> Bool { (second as? E) == value }
    return isEqual(first)
}

/// A weak reference, for closures handed to an object before the object that owns them exists.
package final class WeakBox<Object: AnyObject & Sendable>: @unchecked Sendable {  // `reference` is guarded by `lock`
    private let lock = NSLock()
    private weak var reference: Object?
    package init() {}
    package var object: Object? {
        get { lock.withLock { reference } }
        set { lock.withLock { reference = newValue } }
    }
}
