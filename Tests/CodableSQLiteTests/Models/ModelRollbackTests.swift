import Foundation
import Testing
@testable import CodableSQLite

private struct Abort: Error {}

/// A model the test creates the table of (a type of its own, so no other test shares its table).
#if Macros
@RowCodable
#endif
private struct Gadget: Codable, Model, Equatable, Sendable {
    var id: Int64?
    var name: String
}

#if Macros
@RowCodable
#endif
private struct GadgetWithColor: Codable, Model, Equatable, Sendable {
    static var tableName: String { "Gadget" }
    var id: Int64?
    var name: String
    var color: String?
}

@Suite("Models: tables created in a transaction that rolls back")
struct ModelRollbackTests {
    @Test func aTableCreatedInARolledBackTransactionIsCreatedAgain() throws {
        for db in try TestDatabases.both() {
            #expect(throws: Abort.self) {
                try db.inTransaction { _ in
                    try db.save(Gadget(id: nil, name: "lost"))
                    throw Abort()
                }
            }
            #expect(try db.tables().contains("Gadget") == false)
            #expect(try db.get(Gadget.self) == [])
            #expect(try db.count(Gadget.self) == 0)
            let saved = try db.save(Gadget(id: nil, name: "kept"))
            #expect(try db.get(Gadget.self) == [saved])
        }
    }

    @Test func aTableCreatedInARolledBackSavepointIsCreatedAgain() throws {
        let db = try TestDatabases.file()
        try db.execute(raw: "CREATE TABLE t (x)")
        try db.inTransaction { _ in
            try db.write("INSERT INTO t VALUES (1)")
            #expect(throws: Abort.self) {
                try db.inTransaction { _ in
                    try db.save(Gadget(id: nil, name: "lost"))
                    throw Abort()
                }
            }
            try db.save(Gadget(id: nil, name: "kept"))
        }
        #expect(try db.get(Gadget.self).map(\.name) == ["kept"])
        #expect(try db.read("SELECT count(*) AS n FROM t") == [["n": .integer(1)]])
    }

    @Test func aColumnAddedInARolledBackTransactionIsAddedAgain() throws {
        let db = try TestDatabases.file()
        try db.save(Gadget(id: nil, name: "old"))
        #expect(throws: Abort.self) {
            try db.inTransaction { _ in
                try db.save(GadgetWithColor(id: nil, name: "lost", color: "red"))
                throw Abort()
            }
        }
        #expect(try db.columns(in: "Gadget").map(\.name) == ["id", "name"])
        try db.save(GadgetWithColor(id: nil, name: "new", color: "blue"))
        #expect(try db.get(GadgetWithColor.self).map(\.color) == [nil, "blue"])
    }

    @Test func keyValueStorageCreatedInARolledBackTransactionWorksAfterwards() throws {
        let db = try TestDatabases.memory()
        #expect(throws: Abort.self) {
            try db.inTransaction { _ in
                try db.store(1, forKey: "lost")
                throw Abort()
            }
        }
        #expect(try db.value(Int.self, forKey: "lost") == nil)
        try db.store(2, forKey: "kept")
        #expect(try db.value(Int.self, forKey: "kept") == 2)
    }

    @Test func otherThreadsDoNotSeeATableBeforeItsTransactionCommits() throws {
        let db = try TestDatabases.file()
        let seen = LockedBox<[String]>([])
        func lookFromAnotherThread() {
            let done = DispatchSemaphore(value: 0)
            Thread {
                do {
                    seen.update { $0.append("count \((try? db.count(Gadget.self)) ?? -1)") }
                    let names = try db.get(Gadget.self).map(\.name)
                    seen.update { $0.append("names \(names)") }
                } catch {
                    seen.update { $0.append("error \(error)") }
                }
                done.signal()
            }.start()
            done.wait()
        }
        try db.inTransaction { _ in
            try db.save(Gadget(id: nil, name: "pending"))
            #expect(try db.count(Gadget.self) == 1)
            lookFromAnotherThread()
        }
        lookFromAnotherThread()
        #expect(seen.value == ["count 0", "names []", "count 1", #"names ["pending"]"#])
    }

    @Test func threadsSavingANewModelAtOnceCreateItsTableOnce() throws {
        let db = try TestDatabases.file()
        let failures = LockedBox<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            do {
                for index in 0..<25 { try db.save(Gadget(id: nil, name: "\(thread)-\(index)")) }
            } catch {
                failures.update { $0.append("\(error)") }
            }
        }
        #expect(failures.value == [])
        #expect(try db.count(Gadget.self) == 200)
        #expect(Set(try db.get(Gadget.self).map(\.name)).count == 200)
    }
}
