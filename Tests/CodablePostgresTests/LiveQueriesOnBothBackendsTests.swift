import Dispatch
import Foundation
import Testing
import CodableSQLite
#if Postgres
@testable import CodablePostgres
#endif

/// One set of live-query and change-batch tests, run against SQLite and (with the Postgres
/// trait) a real PostgreSQL server, through the public ``ObservableModelStore`` protocol.
@Suite("Live queries on SQLite and PostgreSQL", .serverShare, .hangLimit(minutes: 3))
struct LiveQueriesOnBothBackendsTests {
    #if Macros
    @RowCodable
    #endif
    struct Chore: UUIDModel, Equatable, Sendable {
        let id: UUID
        var title: String
        var done = false
    }

    #if Macros
    @RowCodable
    #endif
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

    @Test("a callback token delivers on its queue until cancelled, on both engines", arguments: await Backend.available)
    func callbackToken(_ backend: Backend) async throws {
        let db = try await backend.open()
        try await db.save(Chore(id: UUID(), title: "Dishes"))
        let queue = DispatchQueue(label: "test.token")
        let (deliveries, delivered) = AsyncStream.makeStream(of: [String].self)
        let token = db.observe(Self.open).sink(queue: queue) { chores in
            dispatchPrecondition(condition: .onQueue(queue))
            delivered.yield(chores.map(\.title))
        }
        var next = deliveries.makeAsyncIterator()
        #expect(await next.next() == ["Dishes"])
        try await db.save(Chore(id: UUID(), title: "Bins"))
        #expect(await next.next() == ["Bins", "Dishes"])
        let (counts, counted) = AsyncStream.makeStream(of: Int.self)
        let counting = db.observe(count: Filter<Chore>()).sink(queue: queue) { counted.yield($0) }
        var nextCount = counts.makeAsyncIterator()
        #expect(await nextCount.next() == 2)
        token.cancel()
        try await db.save(Chore(id: UUID(), title: "After"))
        #expect(await nextCount.next() == 3, "the other token still delivers")
        // The cancelled token delivered nothing more: the queue ran the count's callback after
        // any it could still have had.
        queue.sync {}
        delivered.finish()
        var rest: [[String]] = []
        while let more = await next.next() { rest.append(more) }
        #expect(rest.isEmpty, "\(rest)")
        counting.cancel()
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, macCatalyst 17, *)
    @MainActor
    @Test("an @Observable live value follows the database, on both engines", arguments: await Backend.available)
    func liveValue(_ backend: Backend) async throws {
        let db = try await backend.open()
        try await db.save(Chore(id: UUID(), title: "Dishes"))
        let live = LiveValue(initial: [], observation: db.observe(Self.open))
        let count = LiveValue(initial: 0, observation: db.observe(count: Filter<Chore>()))
        func until(_ condition: () -> Bool) async throws {
            let deadline = ContinuousClock.now + .seconds(TestWait.scaled(TestWait.seconds))
            while !condition() {
                guard ContinuousClock.now < deadline else { Issue.record("not in time"); return }
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        try await until { live.isLoaded && count.isLoaded }
        #expect(live.value.map(\.title) == ["Dishes"])
        #expect(count.value == 1)
        try await db.save(Chore(id: UUID(), title: "Bins"))
        try await until { live.value.count == 2 && count.value == 2 }
        #expect(live.value.map(\.title) == ["Bins", "Dishes"])
        #expect(live.error == nil)
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

/// What an observation produced, collected by a task of its own. Waits are woken by arrivals
/// (no polling), and give up after a deadline.
final class Collected<Value: Sendable>: @unchecked Sendable {  // state is guarded by `lock`
    private let lock = NSLock()
    private var stored: [Value] = []
    private var isEnded = false
    private var failure: (any Error)?
    private var task: Task<Void, Never>?
    /// How many times the state changed: a wait that read the state before a change is woken at once.
    private var arrivals = 0
    /// Waits to wake at the next arrival (or the end), by id.
    private var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]

    init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Value {
        task = Task { [self] in
            do {
                for try await value in sequence { update { $0.stored.append(value) } }
            } catch {
                update { $0.failure = error }
            }
            update { $0.isEnded = true }
        }
    }

    var values: [Value] { lock.withLock { stored } }

    /// Waits until the sequence ended; fails the test and throws after `seconds`.
    func waitForEnd(seconds: Double = TestWait.seconds, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await wait(seconds: seconds, sourceLocation: sourceLocation) { [self] _ in lock.withLock { isEnded } }
    }

    /// Waits until `condition` holds for what arrived so far; fails the test and throws after
    /// `seconds` (longer under a sanitizer: ``TestWait/scaled(_:)``).
    func wait(seconds: Double = TestWait.seconds, sourceLocation: SourceLocation = #_sourceLocation, until condition: ([Value]) -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(TestWait.scaled(seconds))
        let begun = ContinuousClock.now
        defer { TestWait.report(since: begun, at: sourceLocation) }
        while true {
            let (snapshot, seen) = lock.withLock { (stored, arrivals) }
            if condition(snapshot) { return }
            guard await nextArrival(after: seen, before: deadline) else {
                if condition(values) { return }
                let (ended, error) = lock.withLock { (isEnded, failure) }
                Issue.record("nothing satisfied the wait in \(TestWait.scaled(seconds)) s; received \(values)\(ended ? ", then the sequence ended" : "")\(error.map { " with \($0)" } ?? "")", sourceLocation: sourceLocation)
                throw TimedOut()
            }
        }
    }

    /// Suspends until the state changes after the `seen`th change (`true`), or `deadline` passes
    /// (`false`). A timer that fires before the wait is registered finds the deadline passed.
    private func nextArrival(after seen: Int, before deadline: ContinuousClock.Instant) async -> Bool {
        let id = UUID()
        let timer = Task { [self] in
            try? await Task.sleep(until: deadline)
            lock.withLock { waiters.removeValue(forKey: id) }?.resume()
        }
        defer { timer.cancel() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = lock.withLock { () -> Bool in
                if arrivals != seen || ContinuousClock.now >= deadline { return true }
                waiters[id] = continuation
                return false
            }
            if now { continuation.resume() }
        }
        return lock.withLock { arrivals != seen }
    }

    /// Changes the state under the lock and wakes every wait.
    private func update(_ change: (Collected) -> Void) {
        let woken = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            change(self)
            arrivals += 1
            defer { waiters = [:] }
            return Array(waiters.values)
        }
        for waiter in woken { waiter.resume() }
    }

    deinit { task?.cancel() }
}

typealias Batches<ID: Hashable & Sendable> = Collected<ChangeBatch<ID>>

struct TimedOut: Error {}
