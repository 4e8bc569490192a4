import Foundation
import Testing
@testable import CodableSQLite

@Suite("Core: statement cache and memory")
struct StatementCacheTests {
    private var capacity: Int { StatementCache.protectedCapacity + StatementCache.probationCapacity }

    @Test func oneOffStatementsDoNotEvictHotOnes() throws {
        let db = try TestDatabases.memory()
        try db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
        let hot = (0..<20).map { "SELECT name FROM t WHERE id = \($0) + ?" }
        for sql in hot {
            _ = try db.read(sql, arguments: [.integer(1)])
            _ = try db.read(sql, arguments: [.integer(1)])   // a second use makes it hot
        }
        let hotStatements = try db.withWriter { connection in hot.map { connection.statements.peek($0) } }
        // A filter with IN lists of every length: 1,000 different statements, each used once.
        for count in 1...1_000 {
            let list = Array(repeating: "?", count: count).joined(separator: ", ")
            _ = try db.read("SELECT name FROM t WHERE id IN (\(list))", arguments: Array(repeating: .integer(1), count: count))
        }
        try db.withWriter { connection in
            #expect(connection.statements.count <= capacity)
            for (sql, statement) in zip(hot, hotStatements) {
                #expect(statement != nil)
                #expect(connection.statements.peek(sql) === statement, "hot statement evicted: \(sql)")
            }
        }
    }

    @Test func leastRecentlyUsedHotStatementsGoFirst() throws {
        let db = try TestDatabases.memory()
        let count = StatementCache.protectedCapacity + 10
        for round in 0..<2 {
            for index in 0..<count { _ = try db.read("SELECT \(index) AS n") }
            _ = round
        }
        try db.withWriter { connection in
            #expect(connection.statements.count <= capacity)
            // The last ones used twice are kept; the first ones were evicted to make room.
            #expect(connection.statements.peek("SELECT \(count - 1) AS n") != nil)
            #expect(connection.statements.peek("SELECT 0 AS n") == nil)
        }
    }

    /// The statement used last is found without hashing its SQL; an equal string in other storage
    /// finds the same statement, and evicting it leaves no stale shortcut.
    @Test func theStatementUsedLastIsFoundAgainAfterEviction() throws {
        let db = try TestDatabases.memory()
        let sql = "SELECT 41 + 1 AS n"
        for _ in 0..<3 { #expect(try db.read(sql).first?["n"]?.intValue == 42) }
        let rebuilt = String("SELECT 41 + 1".reversed().reversed()) + " AS n"   // equal text, new storage
        let statement = try db.withWriter { connection in connection.statements.peek(sql) }
        _ = try db.read(rebuilt)
        try db.withWriter { connection in #expect(connection.statements.peek(rebuilt) === statement) }
        // Push it out with enough other hot statements, then use it again: prepared anew, right answer.
        for index in 0..<(StatementCache.protectedCapacity + 5) {
            for _ in 0..<2 { _ = try db.read("SELECT \(index) AS n") }   // a second use makes it hot
        }
        try db.withWriter { connection in #expect(connection.statements.peek(sql) == nil) }
        #expect(try db.read(sql).first?["n"]?.intValue == 42)
        #expect(try db.read("SELECT \(StatementCache.protectedCapacity + 4) AS n").first?["n"]?.intValue == StatementCache.protectedCapacity + 4)
    }

    @Test func cachedStatementsKeepNoArguments() throws {
        let db = try TestDatabases.memory()
        try db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY, payload BLOB)")
        let sql = "INSERT INTO t VALUES (?, ?)"
        try db.write(sql, arguments: [.integer(1), .data(Data(repeating: 7, count: 1 << 20))])
        try db.withWriter { connection in
            let statement = try #require(connection.statements.peek(sql))
            #expect(statement.expandedSQL == "INSERT INTO t VALUES (NULL, NULL)")
        }
    }

    /// `async`, so that the work runs on the database's own queues and leaves the cooperative
    /// thread pool to the tests that run beside it.
    @Test func memoryStaysFlatOver100000DistinctStatements() async throws {
        let db = try TestDatabases.file()
        try await db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
        let encoder = SQLite.Encoder(db)
        let decoder = SQLite.Decoder(db)
        struct Row: Codable { var id: Int; var name: String }
        /// 25,000 statements never seen before: reads on a reader, and, one in fifty, the
        /// coders' plans on the writer and a reader.
        @Sendable func round(_ base: Int) async throws {
            try await db.write { _ in
                for index in stride(from: base, to: base + 25_000, by: 50) {
                    try encoder.encode(Row(id: index, name: "n"), using: "INSERT OR REPLACE INTO t (id, name) VALUES (:id, :name) -- \(index)")
                }
            }
            try await db.read { conn in
                for index in base..<(base + 25_000) {
                    if index % 50 == 0 {
                        _ = try decoder.decode([Row].self, using: "SELECT id, name FROM t WHERE id = \(index)")
                    } else {
                        _ = try conn.read("SELECT \(index) AS n")
                    }
                }
            }
        }
        try await round(0)
        let before = TestDatabases.residentBytes()
        try await round(25_000)
        try await round(50_000)
        try await round(75_000)
        let after = TestDatabases.residentBytes()
        let (writerCount, readerCount) = try await db.read { _ in
            (try db.withWriter { $0.statements.count }, try db.withReader { $0.statements.count })
        }
        #expect(writerCount <= capacity)
        #expect(readerCount <= capacity)
        // 75,000 more distinct statements, if they were kept, would take well over 100 MB.
        try TestDatabases.expectResidentGrowth(since: before, below: 16 << 20, measuredAt: after)
    }
}
