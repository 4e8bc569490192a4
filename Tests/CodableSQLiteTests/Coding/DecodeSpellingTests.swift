import Foundation
import Testing
@testable import CodableSQLite

/// `decode([X].self, …)` means one `X` per row whichever overload the context picks; the JSON
/// array in one row keeps its own spellings, `[X]?.self` and `Array<[X]>.self`.
@Suite("Coding: one meaning per spelling of decode")
struct DecodeSpellingTests {
    let db: SQLite.Database
    let decoder: SQLite.Decoder
    static let titles = "SELECT title FROM posts ORDER BY id"
    static let allTitles = ["a", "b", "c"]

    init() throws {
        db = try TestDatabases.memory()
        try db.execute(raw: """
            CREATE TABLE posts (id INTEGER PRIMARY KEY, title TEXT NOT NULL, tags TEXT);
            INSERT INTO posts VALUES (1, 'a', '["x","y"]'), (2, 'b', '[]'), (3, 'c', NULL);
            """)
        decoder = SQLite.Decoder(db)
    }

    @Test func anArrayIsOneElementPerRowInEveryContext() throws {
        let plain = try decoder.decode([String].self, using: Self.titles)
        let typed: [String]? = try decoder.decode([String].self, using: Self.titles)
        let tried = try? decoder.decode([String].self, using: Self.titles)
        #expect(plain == Self.allTitles)
        #expect(typed == Self.allTitles)
        #expect(tried == Self.allTitles)
    }

    @Test func anArrayIsOneElementPerRowWithPositionalArguments() throws {
        let sql = "SELECT title FROM posts WHERE id > ? ORDER BY id"
        let plain = try decoder.decode([String].self, using: sql, arguments: [.integer(0)])
        let typed: [String]? = try decoder.decode([String].self, using: sql, arguments: [.integer(0)])
        let tried = try? decoder.decode([String].self, using: sql, arguments: [.integer(0)])
        #expect(plain == Self.allTitles)
        #expect(typed == Self.allTitles)
        #expect(tried == Self.allTitles)
    }

    @Test func anArrayIsOneElementPerRowInAsyncContexts() async throws {
        let plain = try await decoder.decode([String].self, using: Self.titles)
        let typed: [String]? = try await decoder.decode([String].self, using: Self.titles)
        let tried = try? await decoder.decode([String].self, using: Self.titles)
        let positional: [String]? = try await decoder.decode(
            [String].self, using: "SELECT title FROM posts WHERE id > ? ORDER BY id", arguments: [.integer(0)])
        #expect(plain == Self.allTitles)
        #expect(typed == Self.allTitles)
        #expect(tried == Self.allTitles)
        #expect(positional == Self.allTitles)
    }

    @Test func anArrayThroughAGenericTypeIsOneElementPerRow() throws {
        func decodeSome<T: Decodable>(_ type: T.Type) throws -> T? {
            try decoder.decode(type, using: Self.titles)
        }
        #expect(try decodeSome([String].self) == Self.allTitles)
    }

    @Test func anArrayOfNoRowsIsEmptyNotNil() throws {
        let typed: [String]? = try decoder.decode([String].self, using: "SELECT title FROM posts WHERE id > 9")
        #expect(typed == [])
    }

    @Test func anOptionalArrayReadsOneRowsJSONArray() throws {
        let tags = try decoder.decode([String]?.self, using: "SELECT tags FROM posts WHERE id = 1")
        #expect(tags == .some(["x", "y"]))
        let null = try decoder.decode([String]?.self, using: "SELECT tags FROM posts WHERE id = 3")
        #expect(null == .some(nil))
        let noRow = try decoder.decode([String]?.self, using: "SELECT tags FROM posts WHERE id = 9")
        #expect(noRow == nil)
    }

    @Test func anOptionalArrayOverSeveralRowsIsAnError() throws {
        #expect(throws: DecodingError.self) { try decoder.decode([String]?.self, using: "SELECT tags FROM posts") }
    }

    @Test func anArrayOfArraysReadsOneJSONArrayPerRowInEveryContext() throws {
        let sql = "SELECT tags FROM posts WHERE tags IS NOT NULL ORDER BY id"
        let plain = try decoder.decode(Array<[String]>.self, using: sql)
        let typed: [[String]]? = try decoder.decode(Array<[String]>.self, using: sql)
        let tried = try? decoder.decode(Array<[String]>.self, using: sql)
        #expect(plain == [["x", "y"], []])
        #expect(typed == [["x", "y"], []])
        #expect(tried == [["x", "y"], []])
    }

    @Test func anErrorInAnyRowNamesItsIndexInEveryContext() throws {
        let sql = "SELECT tags FROM posts ORDER BY id"   // the third row is NULL
        let plain = #expect(throws: DecodingError.self) { try decoder.decode(Array<[String]>.self, using: sql) }
        let typed = #expect(throws: DecodingError.self) {
            let rows: [[String]]? = try decoder.decode(Array<[String]>.self, using: sql)
            _ = rows
        }
        for error in [plain, typed] {
            guard case .valueNotFound(_, let context)? = error else {
                Issue.record("expected valueNotFound, got \(String(describing: error))")
                continue
            }
            #expect(context.codingPath.first?.intValue == 2)
        }
    }
}
