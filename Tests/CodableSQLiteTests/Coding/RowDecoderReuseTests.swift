import Foundation
import Testing
@testable import CodableSQLite

/// Records the decoders `init(from:)` was given, weakly, to show they are freed after decoding.
/// Unchecked: every access holds the lock.
private final class DecoderProbe: @unchecked Sendable {
    private let lock = NSLock()
    private var decoders: [WeakDecoder] = []
    private struct WeakDecoder { weak var decoder: AnyObject? }

    func record(_ decoder: any Swift.Decoder) {
        lock.withLock { decoders.append(WeakDecoder(decoder: decoder as AnyObject)) }
    }

    var recorded: Int { lock.withLock { decoders.count } }
    var alive: Int { lock.withLock { decoders.filter { $0.decoder != nil }.count } }
    static let key = CodingUserInfoKey(rawValue: "probe")!
}

/// Reads one row through two keyed containers of different key types.
private struct TwoViews: Decodable, Equatable {
    var id: Int
    var title: String
    var tags: [String]

    enum IDKeys: String, CodingKey { case id }
    enum ContentKeys: String, CodingKey { case title, tags }

    init(id: Int, title: String, tags: [String]) {
        (self.id, self.title, self.tags) = (id, title, tags)
    }

    init(from decoder: any Swift.Decoder) throws {
        (decoder.userInfo[DecoderProbe.key] as? DecoderProbe)?.record(decoder)
        id = try decoder.container(keyedBy: IDKeys.self).decode(Int.self, forKey: .id)
        let content = try decoder.container(keyedBy: ContentKeys.self)
        title = try content.decode(String.self, forKey: .title)
        tags = try content.decode([String].self, forKey: .tags)
        // Asking again for the first key type still reads this row.
        #expect(try decoder.container(keyedBy: IDKeys.self).decode(Int.self, forKey: .id) == id)
    }
}

#if Macros
@RowCodable
#endif
private struct Post: Codable, Equatable {
    var id: Int
    var title: String
    var tags: [String]
}

/// A statement's rows share one keyed container (making one per row cost runtime type lookups and an
/// allocation): the sharing must never show.
@Suite("Coding: one keyed container serves every row")
struct RowDecoderReuseTests {
    let db: SQLite.Database

    init() throws {
        db = try TestDatabases.memory()
        try db.execute(raw: #"""
            CREATE TABLE posts (id INTEGER PRIMARY KEY, title TEXT NOT NULL, tags TEXT NOT NULL);
            INSERT INTO posts VALUES (1, 'a', '["x","y"]'), (2, 'b', '[]'), (3, 'c', '["say \"hi\"", "back\\slash", "z"]');
            """#)
    }

    fileprivate static let expected = [
        TwoViews(id: 1, title: "a", tags: ["x", "y"]),
        TwoViews(id: 2, title: "b", tags: []),
        TwoViews(id: 3, title: "c", tags: [#"say "hi""#, #"back\slash"#, "z"]),
    ]

    @Test func rowsReadThroughSeveralKeyTypesComeBackEqual() throws {
        let decoder = SQLite.Decoder(db)
        #expect(try decoder.decode([TwoViews].self, using: "SELECT * FROM posts ORDER BY id") == Self.expected)
        // The same statement again (cached), then one row at a time, then a plain model.
        #expect(try decoder.decode([TwoViews].self, using: "SELECT * FROM posts ORDER BY id") == Self.expected)
        #expect(try decoder.decode(TwoViews.self, using: "SELECT * FROM posts WHERE id = 3") == Self.expected[2])
        let posts = try decoder.decode([Post].self, using: "SELECT * FROM posts ORDER BY id")
        #expect(posts.map(\.tags) == Self.expected.map(\.tags))
    }

    @Test func decodersAreFreedAfterDecoding() throws {
        let probe = DecoderProbe()
        let decoder = SQLite.Decoder(db)
        decoder.userInfo[DecoderProbe.key] = probe
        #expect(try decoder.decode([TwoViews].self, using: "SELECT * FROM posts ORDER BY id") == Self.expected)
        #expect(try decoder.decode(TwoViews.self, using: "SELECT * FROM posts WHERE id = 1") == Self.expected[0])
        #expect(probe.recorded == 4)
        #expect(probe.alive == 0, "a decoder outlived its decode call: the shared container keeps it alive")
    }

    @Test func aFailedRowEndsSharingAndTheNextCallDecodesAfresh() throws {
        try db.write("INSERT INTO posts VALUES (4, 'd', 'not json')")
        let probe = DecoderProbe()
        let decoder = SQLite.Decoder(db)
        decoder.userInfo[DecoderProbe.key] = probe
        let error = #expect(throws: DecodingError.self) {
            try decoder.decode([TwoViews].self, using: "SELECT * FROM posts ORDER BY id")
        }
        guard case .dataCorrupted(let context)? = error else { Issue.record("expected dataCorrupted, got \(String(describing: error))"); return }
        #expect(context.codingPath.map(\.stringValue) == ["Index 3", "tags"])
        #expect(probe.alive == 0)
        #expect(try decoder.decode([TwoViews].self, using: "SELECT * FROM posts WHERE id < 4 ORDER BY id") == Self.expected)
    }

    // With default options (the model layer's), a statement keeps its decoder and keyed container
    // for the next call: a lookup by id then asks the runtime for no type metadata.

    @Test func aKeptDecoderServesOtherTypesAndFollowsSchemaChanges() throws {
        let decoder = SQLite.Decoder(db)
        let sql = "SELECT * FROM posts WHERE id = ?"
        struct Reordered: Decodable { var tags: [String]; var id: Int; var title: String }
        struct Wider: Decodable { var id: Int; var title: String; var tags: [String]; var rating: Int }
        for _ in 0..<3 {
            #expect(try decoder.decode(Post.self, using: sql, arguments: [.integer(3)]) == Post(id: 3, title: "c", tags: Self.expected[2].tags))
            #expect(try decoder.decode(Reordered.self, using: sql, arguments: [.integer(1)])?.tags == ["x", "y"])
            #expect(try decoder.decode(TwoViews.self, using: sql, arguments: [.integer(2)]) == Self.expected[1])
        }
        // SQLite recompiles the statement for the new column: the kept decoder must not read the old plan.
        try db.execute(raw: "ALTER TABLE posts ADD COLUMN rating INTEGER NOT NULL DEFAULT 5")
        #expect(try decoder.decode(Wider.self, using: sql, arguments: [.integer(2)])?.rating == 5)
        #expect(try decoder.decode(Post.self, using: sql, arguments: [.integer(1)])?.title == "a")
        #expect(try decoder.decode(Post.self, using: sql, arguments: [.integer(99)]) == nil)
    }

    @Test func aStatementTheCacheDropsIsFinalizedWithItsKeptDecoder() throws {
        let decoder = SQLite.Decoder(db)
        let sql = "SELECT * FROM posts WHERE id = ?"
        #expect(try decoder.decode(Post.self, using: sql, arguments: [.integer(1)])?.title == "a")
        weak var statement: Statement?
        try db.withWriter { connection in
            statement = connection.statements.peek(sql)
            #expect((statement?.upperLayerCache as? StatementPlans)?.decoder != nil, "no decoder was kept")
        }
        #expect(statement != nil)
        // Enough other statements used once push it (used once as well) out of the cache.
        for index in 0..<(StatementCache.probationCapacity + 5) {
            _ = try decoder.decode(Post.self, using: "SELECT * FROM posts WHERE id = ? + \(index)", arguments: [.integer(0)])
        }
        try db.withWriter { connection in #expect(connection.statements.peek(sql) == nil) }
        #expect(statement == nil, "the kept decoder keeps a dropped statement alive")
        #expect(try decoder.decode(Post.self, using: sql, arguments: [.integer(2)])?.title == "b")
    }
}
