import Foundation
import Testing
import CodableSQLite
#if Postgres
@testable import CodablePostgres
#endif

/// One set of live-query and change-batch tests, run against SQLite and (with the Postgres
/// trait) a real PostgreSQL server, through the public ``ObservableModelStore`` protocol.
@Suite("Live queries on SQLite and PostgreSQL", .hangLimit(minutes: 1))
struct LiveQueriesOnBothBackendsTests {
    struct Chore: UUIDModel, Equatable, Sendable {
        let id: UUID
        var title: String
        var done = false
    }

    struct Counter: Model, Equatable, Sendable {
        var id: Int?
        var value: Int
    }

    static let open = Filter(\Chore.done, is: .equal(to: false)).sort(by: \.title)

    @Test("the current value first, then one per commit; a rolled-back transaction is never seen", arguments: await Backend.available)
    func currentValueThenCommits(_ backend: Backend) async throws {
        let db = try await backend.open()
        let dishes = Chore(id: UUID(), title: "Dishes")
        try await db.save(dishes)
        let values = Collected(db.observe(Self.open))
        try await values.wait { $0.last?.map(\.title) == ["Dishes"] }

        try await db.save(Chore(id: UUID(), title: "Bins"))
        try await values.wait { $0.last?.map(\.title) == ["Bins", "Dishes"] }
        await #expect(throws: Rollback.self) {
            try await db.inTransaction { tx in
                try await tx.save(Chore(id: UUID(), title: "Never"))
                throw Rollback()
            }
        }
        var finished = dishes
        finished.done = true
        try await db.save(finished)
        try await values.wait { $0.last?.map(\.title) == ["Bins"] }
        #expect(!values.values.contains { $0.contains { $0.title == "Never" } }, "\(values.values)")
        #expect(values.values.count == 3, "one value per commit that changed the result: \(values.values.map { $0.map(\.title) })")
    }

    @Test("observing one id reads again only for that row", arguments: await Backend.available)
    func oneID(_ backend: Backend) async throws {
        let db = try await backend.open()
        let mine = Chore(id: UUID(), title: "Mine")
        try await db.save([mine, Chore(id: UUID(), title: "Other")])
        let query = db.observe(Chore.self, id: mine.id).makeQuery()
        query.start()
        #expect(try await query.next()??.title == "Mine")
        let before = query.readCount
        // Other rows, updated and deleted. (An insert reads again on SQLite, where a UUID is not
        // the rowid: the update hook names rowids only, and an `INSERT OR REPLACE` could bring
        // this id back.)
        let other = try #require(try await db.get(with: Filter(\Chore.title, is: .equal(to: "Other"))).first)
        var changedOther = other
        changedOther.done = true
        try await db.save(changedOther)
        try await db.delete(other)
        var renamed = mine
        renamed.title = "Renamed"
        try await db.save(renamed)                                       // this row
        #expect(try await query.next()??.title == "Renamed")
        #expect(query.readCount == before + 1, "read \(query.readCount - before) times")
        try await db.delete(renamed)
        #expect(try await query.next() == .some(nil))
        query.cancel()
    }

    @Test("a count follows inserts and deletes", arguments: await Backend.available)
    func count(_ backend: Backend) async throws {
        let db = try await backend.open()
        let counts = Collected(db.observe(count: Self.open))
        try await counts.wait { $0.last == 0 }
        let chores = (0..<5).map { Chore(id: UUID(), title: "c\($0)") }
        try await db.save(chores)
        try await counts.wait { $0.last == 5 }
        try await db.delete(Array(chores.prefix(2)))
        try await counts.wait { $0.last == 3 }
        // Newest value only: a burst of commits ends on the final count.
        for chore in chores.suffix(3) { try await db.delete(chore) }
        try await counts.wait { $0.last == 0 }
        #expect(counts.values.count <= 6)
    }

    @Test("change batches name the ids each transaction inserted, updated and deleted", arguments: await Backend.available)
    func changeBatches(_ backend: Backend) async throws {
        let db = try await backend.open()
        var first = Counter(id: nil, value: 1)
        first = try await db.save(first)
        let batches = Batches(try await db.changes(to: Counter.self))
        let (second, third) = try await db.inTransaction { tx in
            var changed = first
            changed.value = 10
            try await tx.save(changed)
            let second = try await tx.save(Counter(id: nil, value: 2))
            let third = try await tx.save(Counter(id: nil, value: 3))
            try await tx.delete(third)
            return (second, third)
        }
        try await batches.wait { $0.count == 1 }
        let batch = try #require(batches.values.first)
        #expect(batch.isComplete)
        #expect(batch.updated == [first.id])
        #expect(batch.inserted == [second.id, third.id])
        #expect(batch.deleted == [third.id])
        // Rolled back: no batch.
        await #expect(throws: Rollback.self) {
            try await db.inTransaction { tx in
                try await tx.save(Counter(id: nil, value: 4))
                throw Rollback()
            }
        }
        try await db.delete(Counter.self, id: second.id)
        try await batches.wait { $0.count == 2 }
        #expect(batches.values.last == ChangeBatch(inserted: [], updated: [], deleted: [second.id], isComplete: true))
    }

    @Test("leaving the loop stops the observation", arguments: await Backend.available)
    func stopping(_ backend: Backend) async throws {
        let db = try await backend.open()
        for _ in 0..<20 {
            var iterator = db.observe(Chore.self).makeAsyncIterator()
            #expect(try await iterator.next() == [])
        }
        // Still usable; a new observation still sees commits.
        let values = Collected(db.observe(Chore.self))
        try await values.wait { $0.last == [] }
        try await db.save(Chore(id: UUID(), title: "After"))
        try await values.wait { $0.last?.count == 1 }
    }
}

struct Rollback: Error {}

/// What an observation produced, collected by a task of its own.
final class Collected<Value: Sendable>: @unchecked Sendable {  // state is guarded by `lock`
    private let lock = NSLock()
    private var stored: [Value] = []
    private var isEnded = false
    private var failure: (any Error)?
    private var task: Task<Void, Never>?

    init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Value {
        task = Task { [self] in
            do {
                for try await value in sequence { lock.withLock { stored.append(value) } }
            } catch {
                lock.withLock { failure = error }
            }
            lock.withLock { isEnded = true }
        }
    }

    var values: [Value] { lock.withLock { stored } }

    /// Waits until the sequence ended; throws after `seconds`.
    func waitForEnd(seconds: Double = 30, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await poll(seconds: seconds, sourceLocation: sourceLocation) { lock.withLock { isEnded } }
    }

    /// Waits until `condition` holds for what arrived so far; throws after `seconds`.
    func wait(seconds: Double = 30, sourceLocation: SourceLocation = #_sourceLocation, until condition: ([Value]) -> Bool) async throws {
        try await poll(seconds: seconds, sourceLocation: sourceLocation) { condition(values) }
    }

    /// Polls `condition` every 2 ms; records what arrived and throws after `seconds` (six times
    /// as long under a sanitizer).
    private func poll(seconds: Double, sourceLocation: SourceLocation, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(Backend.isSanitized ? seconds * 6 : seconds)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                let (ended, error) = lock.withLock { (isEnded, failure) }
                Issue.record("timed out; received \(values)\(ended ? ", then the sequence ended" : "")\(error.map { " with \($0)" } ?? "")", sourceLocation: sourceLocation)
                throw TimedOut()
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    deinit { task?.cancel() }
}

typealias Batches<ID: Hashable & Sendable> = Collected<ChangeBatch<ID>>

struct TimedOut: Error {}
