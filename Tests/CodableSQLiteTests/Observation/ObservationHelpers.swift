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

    init(_ observation: ObservedValues<Value>) {
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
        await poll(seconds: seconds, sourceLocation: sourceLocation, failure: "timed out; received \(values)") { condition(values) }
    }

    /// Waits until the observation ended (error or cancellation).
    func waitForEnd(seconds: Double = 10, sourceLocation: SourceLocation = #_sourceLocation) async {
        await poll(seconds: seconds, sourceLocation: sourceLocation, failure: "the observation did not end") { ended }
    }

    func stop() {
        task?.cancel()
    }

    deinit {
        task?.cancel()
    }
}

/// Waits until `condition` holds, polling every 2 ms; records `failure` and returns `false` after
/// `seconds`. Runs on the caller's actor, so conditions may read main-actor state.
@discardableResult
func poll(
    isolation: isolated (any Actor)? = #isolation, seconds: Double = 10, sourceLocation: SourceLocation = #_sourceLocation,
    failure: @autoclosure () -> String, _ condition: () -> Bool
) async -> Bool {
    // Sanitized builds run several times slower: the same events, more time to arrive.
    let deadline = Date().addingTimeInterval(TestDatabases.isSanitized ? seconds * 6 : seconds)
    while !condition() {
        if Date() > deadline {
            Issue.record(Comment(rawValue: failure()), sourceLocation: sourceLocation)
            return false
        }
        try? await Task.sleep(nanoseconds: 2_000_000)
    }
    return true
}

/// Waits until `condition` holds, polling; fails the test after `seconds`.
func eventually(
    isolation: isolated (any Actor)? = #isolation, seconds: Double = 10, sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () -> Bool
) async {
    await poll(seconds: seconds, sourceLocation: sourceLocation, failure: "condition not met in \(seconds) s", condition)
}

extension TestDatabases {
    /// A WAL file with a `tasks` table holding `rows` (`(id, 'title', isCompleted), …`) and an
    /// empty `other` table, for observation tests.
    static func tasksAndOther(_ name: String, rows: String) throws -> SQLite.Database {
        let db = try file(name)
        try db.execute(raw: """
            CREATE TABLE tasks (id INTEGER PRIMARY KEY, title TEXT NOT NULL, isCompleted INTEGER NOT NULL DEFAULT 0);
            CREATE TABLE other (id INTEGER PRIMARY KEY, note TEXT);
            INSERT INTO tasks VALUES \(rows);
            """)
        return db
    }
}

/// Collects change batches in a task of its own.
final class Batches<ID: Hashable & Sendable>: @unchecked Sendable {  // `stored` is guarded by `lock`
    private let lock = NSLock()
    private var stored: [ChangeBatch<ID>] = []
    private var task: Task<Void, Never>?

    init(_ sequence: ObservedValues<ChangeBatch<ID>>) {
        task = Task { [self] in
            do { for try await batch in sequence { lock.withLock { stored.append(batch) } } } catch {}
        }
    }

    var values: [ChangeBatch<ID>] { lock.withLock { stored } }
    func stop() { task?.cancel() }
    deinit { task?.cancel() }
}
