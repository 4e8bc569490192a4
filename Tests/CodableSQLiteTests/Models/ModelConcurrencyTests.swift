import Dispatch
import Foundation
import Testing
@testable import CodableSQLite

@Suite("Models: async and concurrency")
struct ModelConcurrencyTests {
    @Test func asyncFormsOfEveryOperation() async throws {
        let db = try ModelFixtures.file()
        let billy = Person("Billy", age: 20)
        try await db.save(billy)
        try await db.save([Person("Bob", age: 15), Person("Carol", age: 40)])
        #expect(try await db.get(Person.self).count == 3)
        #expect(try await db.get(Person.self, id: billy.id) == billy)
        #expect(try await db.count(Person.self) == 3)
        #expect(try await db.get(with: Filter(\Person.age, is: .greater(than: 17))).count == 2)
        #expect(try await db.count(with: Filter(\Person.age, is: .greater(than: 17))) == 2)
        #expect(try await db.delete(billy))
        #expect(try await db.delete(with: Filter(\Person.name, is: .equal(to: "Bob"))) == 1)
        #expect(try await db.count(Person.self) == 1)
    }

    /// 20 concurrent async saves while 20 threads count and save synchronously.
    @Test func syncAndAsyncCallsMixWithoutDeadlock() async throws {
        let db = try ModelFixtures.file()
        try await db.save(Note(id: 0, text: "seed"))
        let threads = ModelTestCounter()
        let done = DispatchGroup()
        for thread in 0..<20 {
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                do {
                    _ = try db.count(Note.self)
                    try db.save(Note(id: Int64(1000 + thread), text: "thread \(thread)"))
                    _ = try db.get(with: Filter(\Note.text, is: .hasPrefix("thread")))
                    threads.increment()
                } catch {
                    threads.fail(error)
                }
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<20 {
                group.addTask {
                    try await db.save(Note(id: Int64(2000 + task), text: "task \(task)"))
                    _ = try await db.count(Note.self)
                }
            }
            try await group.waitForAll()
        }
        await withCheckedContinuation { continuation in
            done.notify(queue: .global()) { continuation.resume() }
        }
        #expect(threads.failures.isEmpty, "\(threads.failures)")
        #expect(threads.value == 20)
        #expect(try await db.count(Note.self) == 41)
    }
}

final class ModelTestCounter: @unchecked Sendable {  // guarded by `lock`
    private let lock = NSLock()
    private var count = 0
    private var errors: [String] = []

    func increment() { lock.withLock { count += 1 } }
    func fail(_ error: any Error) { lock.withLock { errors.append("\(error)") } }
    var value: Int { lock.withLock { count } }
    var failures: [String] { lock.withLock { errors } }
}
