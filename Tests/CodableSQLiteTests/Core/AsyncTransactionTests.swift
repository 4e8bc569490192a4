import Foundation
import Testing
@testable import CodableSQLite

/// Written once against the public protocol: the function an app writes for both engines.
private func renameAll(in db: some ModelStore, to name: String) async throws -> Int {
    try await db.inTransaction { tx in
        let people = try await tx.get(Person.self)
        try await tx.save(people.map { person in var renamed = person; renamed.name = name; return renamed })
        return people.count
    }
}

private struct Refused: Error {}

@Suite("Core: async transactions (inTransaction { tx in … })", .timeLimit(.minutes(TestDatabases.isSanitized ? 5 : 1)))
struct AsyncTransactionTests {
    @Test func aBodyThatReturnsCommitsEverythingOnce() async throws {
        for db in try TestDatabases.both() {
            let observed = Batches(db.changes(to: Person.self))
            let ann = Person("Ann", age: 30)
            let count = try await db.inTransaction { tx in
                try await tx.save(ann)
                try await tx.save(Person("Bob", age: 40))
                return try await tx.count(Person.self)   // reads see the transaction's own writes
            }
            #expect(count == 2)
            #expect(try await db.count(Person.self) == 2)
            #expect(try await renameAll(in: db, to: "Same") == 2)
            #expect(try await db.get(Person.self).map(\.name) == ["Same", "Same"])
            await eventually { observed.values.count == 2 }
            #expect(observed.values.map(\.inserted.count) == [2, 0])   // one batch per commit
            #expect(observed.values.map(\.updated.count) == [0, 2])
        }
    }

    @Test func aBodyThatThrowsLeavesNothing() async throws {
        for db in try TestDatabases.both() {
            try await db.save(Person("Kept", age: 1))
            await #expect(throws: Refused.self) {
                try await db.inTransaction { tx in
                    try await tx.save(Person("Lost", age: 2))
                    try await tx.delete(with: Filter(\Person.name, is: .equal(to: "Kept")))
                    throw Refused()
                }
            }
            #expect(try await db.get(Person.self).map(\.name) == ["Kept"])
            // The writer is free again.
            try await db.save(Person("After", age: 3))
            #expect(try await db.count(Person.self) == 2)
        }
    }

    @Test func aNestedBodyIsASavepoint() async throws {
        let db = try TestDatabases.file("async-nested")
        try await db.inTransaction { tx in
            try await tx.save(Person("Outer", age: 1))
            await #expect(throws: Refused.self) {
                try await tx.inTransaction { inner in
                    try await inner.save(Person("Inner, rolled back", age: 2))
                    throw Refused()
                }
            }
            try await tx.inTransaction { inner in try await inner.save(Person("Inner, kept", age: 3)) }
            // The synchronous form nests too.
            try await tx.write { _ in try db.write("INSERT INTO \"Person\" (id, name, age, eyeColor) VALUES ('\(UUID().uuidString)', 'Sync', 4, 'blue')") }
        }
        #expect(try await db.get(with: Filter<Person>().sort(by: \.age)).map(\.name) == ["Outer", "Inner, kept", "Sync"])
    }

    @Test func callsOnTheDatabaseFromTheBodyAndItsChildTasksJoinTheTransaction() async throws {
        let db = try TestDatabases.file("async-join")
        await #expect(throws: Refused.self) {
            try await db.inTransaction { _ in
                try await db.save(Person("Direct", age: 1))   // not tx: still inside, no deadlock
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for age in 2...5 { group.addTask { try await db.save(Person("Child", age: age)) } }
                    try await group.waitForAll()
                }
                #expect(try await db.count(Person.self) == 5)
                throw Refused()
            }
        }
        #expect(try await db.count(Person.self) == 0)
    }

    /// A helper written with the synchronous API, called from an async transaction's body.
    private static func legacyWrite(_ db: SQLite.Database) throws {
        try db.write("INSERT INTO \"Person\" (id, name, age, eyeColor) VALUES ('\(UUID().uuidString)', 'Sync', 1, 'blue')")
    }

    @Test func aSynchronousWriteInsideTheBodyFailsInsteadOfWaitingForEver() async throws {
        let db = try TestDatabases.file("async-sync-write")
        try await db.save(Person("Before", age: 0))
        let error = await #expect(throws: SQLite.Error.self) {
            try await db.inTransaction { tx in
                try await tx.save(Person("Inside", age: 1))
                try Self.legacyWrite(db)
            }
        }
        #expect(error?.code == .misuse)
        #expect(error?.message.contains("async form") == true)
        #expect(try await db.get(Person.self).map(\.name) == ["Before"])   // the transaction rolled back
        try await db.save(Person("After", age: 2))                           // and the writer is free
        #expect(try await db.count(Person.self) == 2)
    }

    @Test func otherWritersWaitAndReadersSeeTheLastCommit() async throws {
        let db = try TestDatabases.file("async-wait")
        try await db.save(Person("Before", age: 0))
        let (entered, enteredContinuation) = AsyncStream<Void>.makeStream()
        let (release, releaseContinuation) = AsyncStream<Void>.makeStream()
        let transaction = Task {
            try await db.inTransaction { tx in
                try await tx.save(Person("Inside", age: 1))
                enteredContinuation.yield()
                for await _ in release { break }
            }
        }
        for await _ in entered { break }
        let outsider = Task { try await db.save(Person("Outsider", age: 2)) }
        #expect(try await db.count(Person.self) == 1)   // a reader: the last commit only
        releaseContinuation.yield()
        try await transaction.value
        _ = try await outsider.value
        #expect(try await db.get(with: Filter<Person>().sort(by: \.age)).map(\.name) == ["Before", "Inside", "Outsider"])
    }

    @Test func aCancelledTaskRollsBack() async throws {
        let db = try TestDatabases.file("async-cancel")
        let (entered, enteredContinuation) = AsyncStream<Void>.makeStream()
        let transaction = Task {
            try await db.inTransaction { tx in
                try await tx.save(Person("Cancelled", age: 1))
                enteredContinuation.yield()
                while true {
                    try await tx.save(Person("More", age: 2))
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
        }
        for await _ in entered { break }
        transaction.cancel()
        await #expect(throws: CancellationError.self) { try await transaction.value }
        #expect(try await db.count(Person.self) == 0)
        try await db.save(Person("Usable", age: 3))
        #expect(try await db.count(Person.self) == 1)
    }
}
