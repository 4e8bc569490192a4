import Foundation
import Testing
@testable import CodableSQLite

/// Iterates an observation in a task of its own and keeps what it delivers, so that tests can
/// wait for values with a deadline instead of sleeping.
final class Collected<Value: Sendable>: @unchecked Sendable {  // state is guarded by `lock`
    private let lock = NSLock()
    private var storedValues: [Value] = []
    private var storedError: (any Error)?
    private var storedEnded = false
    private var task: Task<Void, Never>?

    init(_ observation: SQLite.Observation<Value>) {
        task = Task { [self] in
            do {
                for try await value in observation { lock.withLock { storedValues.append(value) } }
            } catch {
                lock.withLock { storedError = error }
            }
            lock.withLock { storedEnded = true }
        }
    }

    var values: [Value] { lock.withLock { storedValues } }
    var error: (any Error)? { lock.withLock { storedError } }
    var ended: Bool { lock.withLock { storedEnded } }

    /// Waits until `condition` holds for the values received so far; fails the test after `seconds`.
    @discardableResult
    func wait(seconds: Double = 10, sourceLocation: SourceLocation = #_sourceLocation, until condition: ([Value]) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition(values) {
            if Date() > deadline {
                Issue.record("timed out; received \(values)", sourceLocation: sourceLocation)
                return false
            }
            try? await Task.sleep(nanoseconds: 2_000_000)
        }
        return true
    }

    /// Waits until the observation ended (error or cancellation).
    func waitForEnd(seconds: Double = 10, sourceLocation: SourceLocation = #_sourceLocation) async {
        let deadline = Date().addingTimeInterval(seconds)
        while !ended {
            if Date() > deadline {
                Issue.record("the observation did not end", sourceLocation: sourceLocation)
                return
            }
            try? await Task.sleep(nanoseconds: 2_000_000)
        }
    }

    func stop() {
        task?.cancel()
    }

    deinit {
        task?.cancel()
    }
}

/// Waits until `condition` holds, polling; fails the test after `seconds`.
func eventually(seconds: Double = 10, sourceLocation: SourceLocation = #_sourceLocation, _ condition: () -> Bool) async {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline {
            Issue.record("condition not met in \(seconds) s", sourceLocation: sourceLocation)
            return
        }
        try? await Task.sleep(nanoseconds: 2_000_000)
    }
}

/// ``eventually(seconds:sourceLocation:_:)`` for conditions on main-actor state.
@MainActor
func eventuallyOnMain(seconds: Double = 10, sourceLocation: SourceLocation = #_sourceLocation, _ condition: () -> Bool) async {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline {
            Issue.record("condition not met in \(seconds) s", sourceLocation: sourceLocation)
            return
        }
        try? await Task.sleep(nanoseconds: 2_000_000)
    }
}
