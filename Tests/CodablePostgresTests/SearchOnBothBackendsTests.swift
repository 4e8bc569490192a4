import Foundation
import Testing
import CodableSQLite
#if Postgres
@testable import CodablePostgres
#endif

/// Full-text search on models, one test per behaviour, run against SQLite and (with the Postgres
/// trait) a real PostgreSQL server, through ``ModelStore`` and ``ObservableModelStore``.
@Suite("Search on SQLite and PostgreSQL", .serverShare, .hangLimit(minutes: 3))
struct SearchOnBothBackendsTests {
    #if Macros
    @RowCodable
    #endif
    struct Note: SearchableModel, Equatable, Sendable {
        var id: Int?
        var title: String
        var body: String
        var isArchived = false
        static var searchable: [SearchField<Note>] { [.field(\.title, weight: 3), .field(\.body)] }
    }

    static func titles(_ hits: [SearchHit<Note>]) -> [String] { hits.map(\.value.title) }

    @Test("a match in a heavier property ranks first; scores are higher for better matches", arguments: await Backend.available)
    func rankingByWeight(_ backend: Backend) async throws {
        let db = try await backend.open()
        try await db.save([
            Note(title: "Groceries", body: "milk, eggs and bread"),
            Note(title: "Milk", body: "the good kind from the farm"),
            Note(title: "Garden", body: "water the roses"),
        ])
        let hits = try await db.search(Note.self, for: "milk", limit: 10)
        #expect(Self.titles(hits) == ["Milk", "Groceries"])
        #expect(hits[0].score > hits[1].score, "\(hits.map(\.score))")
        #expect(try await db.search(Note.self, for: "milk", limit: 1).map(\.value.title) == ["Milk"])
        #expect(try await db.search(Note.self, for: "milk").count == 2, "without a limit: every hit")
        #expect(try await db.search(Note.self, for: "milk", limit: 0).isEmpty)
    }

    #if Macros
    @RowCodable
    #endif
    struct Recipe: Model, Sendable {
        var id: String
        var name: String
        static var searchable: [SearchField<Recipe>] { [.field(\.name)] }
    }

    #if Macros
    @RowCodable
    #endif
    struct Unsearched: Model, Sendable {
        var id: String
        var name: String
    }

    @Test("any model that lists searchable properties is searchable; one that lists none says how", arguments: await Backend.available)
    func anyModelWithADeclaration(_ backend: Backend) async throws {
        let db = try await backend.open()
        try await db.save([Recipe(id: "a", name: "Apple pie"), Recipe(id: "b", name: "Pear tart")])
        #expect(try await db.search(Recipe.self, for: "pie").map(\.value.id) == ["a"])
        try await db.save(Unsearched(id: "x", name: "pie"))
        await #expect { try await db.search(Unsearched.self, for: "pie") } throws: { error in
            (error as? ModelError)?.code == .unsupportedModel && "\(error)".contains("static var searchable")
        }
        #expect(try await db.get(Unsearched.self).count == 1, "still usable")
    }

    @Test("the last word matches as a prefix, the others whole; every word is required", arguments: await Backend.available)
    func prefix(_ backend: Backend) async throws {
        let db = try await backend.open()
        try await db.save([Note(title: "Groceries", body: "milk eggs"), Note(title: "Gross", body: "a gross mistake")])
        #expect(Set(Self.titles(try await db.search(Note.self, for: "gro"))) == ["Groceries", "Gross"])
        #expect(Self.titles(try await db.search(Note.self, for: "groc")) == ["Groceries"])
        // Type-ahead, keystroke by keystroke.
        for typed in ["m", "mi", "mil", "milk", "milk e", "milk eg", "milk eggs"] {
            let found = Set(Self.titles(try await db.search(Note.self, for: typed)))
            #expect(found == (typed.count < 3 ? ["Groceries", "Gross"] : ["Groceries"]), "\(typed): \(found)")   // "mistake"
        }
        #expect(try await db.search(Note.self, for: "gro milk").isEmpty, "only the last word is a prefix")
        #expect(Self.titles(try await db.search(Note.self, for: "milk gro")) == ["Groceries"])
        #expect(try await db.search(Note.self, for: "milk roses").isEmpty, "every word is required")
    }

    @Test("case and accents are ignored, in the text and in what is typed", arguments: await Backend.available)
    func accents(_ backend: Backend) async throws {
        let db = try await backend.open()
        try await db.save([
            Note(title: "Crème brûlée", body: "dessert"),
            Note(title: "Resume", body: "my CV"),
            Note(title: "Жук", body: "ЖУРНАЛ"),
        ])
        for typed in ["creme brulee", "CRÈME", "crème brûl", "Creme BRU"] {
            #expect(Self.titles(try await db.search(Note.self, for: typed)) == ["Crème brûlée"], "\(typed)")
        }
        #expect(Self.titles(try await db.search(Note.self, for: "résumé")) == ["Resume"])
        #expect(Self.titles(try await db.search(Note.self, for: "жук")) == ["Жук"])
        #expect(Self.titles(try await db.search(Note.self, for: "журн")) == ["Жук"])
    }

    @Test("what is typed is never query syntax: no input throws or changes the meaning of the words", arguments: await Backend.available)
    func hostileInput(_ backend: Backend) async throws {
        let db = try await backend.open()
        try await db.save([
            Note(title: "Shopping", body: "milk and eggs"),
            Note(title: "Chores", body: "no milk today"),
            Note(title: "Other", body: "bread"),
        ])
        let milk = Set(Self.titles(try await db.search(Note.self, for: "milk")))
        #expect(milk == ["Shopping", "Chores"])
        for typed in ["\"milk", "milk\"", "\"milk\"", "*milk*", "-milk", "+milk", "milk:", "(milk", "milk)", "{milk}", "^milk",
                      "milk*", "'milk'", "milk;", "milk\\", "~milk", "milk%", "milk_"] {
            #expect(Set(Self.titles(try await db.search(Note.self, for: typed))) == milk, "\(typed)")
        }
        for typed in ["", " ", "\"", "*", "-", "()", "\"\"", "'", "\\", ":", "\u{0}", "NEAR", "AND", "OR", "NOT", "\"milk", "NEAR(milk eggs)",
                      "milk OR bread", "milk AND", "NOT milk", "milk NOT eggs", "'; DROP TABLE \"Note\"; --", "milk -eggs", "title:(milk)", "title:milk",
                      String(repeating: "milk ", count: 500), String(repeating: "(", count: 1000), "🥛 milk", "m\u{301}ilk",
                      "ʼ", "milk ʼ", "ŉ", "½", "⑴", "ꟑ", "milk ʻ", "l'", "\u{200B}", "\u{FEFF}milk", "x\u{0301}\u{0301}"] {
            let found = Set(Self.titles(try await db.search(Note.self, for: typed)))
            #expect(found.isSubset(of: ["Shopping", "Chores", "Other"]), "\(typed)")
        }
        // Words are words: operators match as text and are all required.
        #expect(try await db.search(Note.self, for: "milk OR bread").isEmpty, "OR is a word the notes do not have")
        #expect(Self.titles(try await db.search(Note.self, for: "milk AND")) == ["Shopping"], "AND is a word (a prefix of \"and\")")
        #expect(Self.titles(try await db.search(Note.self, for: "NOT milk")).isEmpty)
        #expect(Self.titles(try await db.search(Note.self, for: "no milk")) == ["Chores"])
        #expect(Set(Self.titles(try await db.search(Note.self, for: "milk -eggs"))) == ["Shopping"], "- is not exclusion")
        #expect(try await db.search(Note.self, for: "NEAR(milk eggs)").isEmpty)
        // The database is as it was.
        #expect(try await db.count(Note.self) == 3)
        try await db.save(Note(title: "After", body: "milk"))
        #expect(Set(Self.titles(try await db.search(Note.self, for: "milk"))) == ["Shopping", "Chores", "After"])
    }

    @Test("a search within a filter: its conditions, its order for equal scores, its pages", arguments: await Backend.available)
    func filtersAndPaging(_ backend: Backend) async throws {
        let db = try await backend.open()
        var notes: [Note] = []
        for number in 0..<30 {
            notes.append(Note(title: String(format: "t%02d", number), body: "task to do", isArchived: number % 3 == 0))
        }
        notes.append(Note(title: "other", body: "nothing here"))
        try await db.save(notes)
        let open = Filter(\Note.isArchived, is: .equal(to: false))
        let all = try await db.search(for: "task", in: open)
        #expect(all.count == 20)
        #expect(all.allSatisfy { !$0.value.isArchived })
        let byTitle = try await db.search(for: "task", in: open.sort(by: \.title, ascending: false))
        #expect(Self.titles(byTitle) == Self.titles(byTitle).sorted(by: >), "equal scores keep the filter's order")
        let page1 = try await db.search(for: "task", in: open.sort(by: \.title).limit(5, page: 1))
        let page2 = try await db.search(for: "task", in: open.sort(by: \.title).limit(5, page: 2))
        #expect(Self.titles(page1) == ["t01", "t02", "t04", "t05", "t07"])
        #expect(Self.titles(page2) == ["t08", "t10", "t11", "t13", "t14"])
        #expect(try await db.search(for: "task", in: open.sort(by: \.title).limit(5, page: 2), limit: 2).count == 2)
        #expect(try await db.search(for: "task", in: open.sort(by: \.title).limit(5, page: 9)).isEmpty)
        #expect(try await db.search(for: "task", in: Filter(\Note.title, is: .hasPrefix("t2")), limit: 3).count == 3)
        // A #Predicate filter, sorted by descriptors, is searched within the same way.
        let predicate = #Predicate<Note> { !$0.isArchived && $0.title.starts(with: "t1") }
        let within = try await db.search(for: "task", in: Filter(predicate, sortBy: [SortDescriptor(\.title, order: .reverse)]))
        #expect(Self.titles(within) == notes.filter { !$0.isArchived && $0.title.hasPrefix("t1") }.map(\.title).sorted(by: >))
        await #expect { try await db.search(Note.self, for: "task", limit: -1) } throws: { ModelError.Code(of: $0) == .invalidFilter }
        #expect(try await db.search(for: "task", in: Filter<Note>().limit(1)).count == 1)
    }

    @Test("edits and deletes are indexed at once", arguments: await Backend.available)
    func editsAndDeletes(_ backend: Backend) async throws {
        let db = try await backend.open()
        var note = try await db.save(Note(title: "Plan", body: "alpha"))
        #expect(Self.titles(try await db.search(Note.self, for: "alpha")) == ["Plan"])
        note.body = "beta"
        try await db.save(note)
        #expect(try await db.search(Note.self, for: "alpha").isEmpty)
        #expect(Self.titles(try await db.search(Note.self, for: "beta")) == ["Plan"])
        note.isArchived = true   // a change to another property keeps the index
        try await db.save(note)
        #expect(try await db.search(Note.self, for: "beta").first?.value.isArchived == true)
        try await db.delete(note)
        #expect(try await db.search(Note.self, for: "beta").isEmpty)
        try await db.save([Note(title: "One", body: "gamma"), Note(title: "Two", body: "gamma")])
        try await db.delete(with: Filter(\Note.title, is: .equal(to: "One")))
        #expect(Self.titles(try await db.search(Note.self, for: "gamma")) == ["Two"])
        // In a transaction: its own writes are found; rolled back, they are gone.
        await #expect(throws: Rollback.self) {
            try await db.inTransaction { tx in
                try await tx.save(Note(title: "Draft", body: "delta"))
                #expect(Self.titles(try await tx.search(Note.self, for: "delta")) == ["Draft"])
                throw Rollback()
            }
        }
        #expect(try await db.search(Note.self, for: "delta").isEmpty)
    }

    #if Macros
    @RowCodable
    #endif
    struct Memo: Model, Sendable {
        var id: Int?
        var title: String
        var body: String?
        static var tableName: String { "Memo" }
    }

    #if Macros
    @RowCodable
    #endif
    struct SearchableMemo: SearchableModel, Sendable {
        var id: Int?
        var title: String
        var body: String?
        static var tableName: String { "Memo" }
        static var searchable: [SearchField<SearchableMemo>] { [.field(\.title)] }
    }

    #if Macros
    @RowCodable
    #endif
    struct MemoSearchedInFull: SearchableModel, Sendable {
        var id: Int?
        var title: String
        var body: String?
        static var tableName: String { "Memo" }
        static var searchable: [SearchField<MemoSearchedInFull>] { [.field(\.title, weight: 2), .field(\.body)] }
    }

    @Test("rows saved before the declaration are found; a changed declaration rebuilds the index", arguments: await Backend.available)
    func declarationChanges(_ backend: Backend) async throws {
        let db = try await backend.open()
        try await db.save([Memo(title: "Old memo", body: "written before search"), Memo(title: "Another", body: nil)])
        #expect(try await db.search(SearchableMemo.self, for: "old").map(\.value.title) == ["Old memo"])
        #expect(try await db.search(SearchableMemo.self, for: "written").isEmpty, "body is not declared searchable")
        try await db.save(SearchableMemo(title: "New memo", body: "written after"))
        #expect(Set(try await db.search(SearchableMemo.self, for: "memo").map(\.value.title)) == ["Old memo", "New memo"])
        // The declaration gains the body: every row is indexed again.
        #expect(Set(try await db.search(MemoSearchedInFull.self, for: "written").map(\.value.title)) == ["Old memo", "New memo"])
        try await db.save(MemoSearchedInFull(title: "Third", body: "written last"))
        #expect(try await db.search(MemoSearchedInFull.self, for: "written").count == 3)
        // Back to the first declaration: the body is no longer searched.
        #expect(try await db.search(SearchableMemo.self, for: "written").isEmpty)
        #expect(try await db.search(SearchableMemo.self, for: "third").count == 1)
        #expect(try await db.count(Memo.self) == 4)
    }

    /// A new database object on the same database each time it is called (a new run of the app).
    static func reopenable(_ backend: Backend) async throws -> @Sendable () async throws -> any ModelStore {
        switch backend {
        case .sqlite:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("search-\(UUID().uuidString).sqlite").path
            return { try SQLite.Database(path: path) }
        case .postgres:
            #if Postgres
            let url = try await TestServer.shared.freshDatabaseURL()
            return { try await Postgres.Database(url: url) }
            #else
            throw PostgresNotBuilt()
            #endif
        }
    }

    @Test("a run whose model is no longer searchable drops the index; a later declaration makes it again", arguments: await Backend.available)
    func declarationRemoved(_ backend: Backend) async throws {
        let open = try await Self.reopenable(backend)
        let first = try await open()
        try await first.save([SearchableMemo(title: "Kept memo", body: nil)])
        #expect(try await first.search(SearchableMemo.self, for: "kept").count == 1)
        let second = try await open()
        try await second.save(Memo(title: "Plain memo", body: "no index now"))
        #expect(try await second.count(Memo.self) == 2)
        if let sqlite = second as? SQLite.Database {
            #expect(try await sqlite.read("SELECT name FROM sqlite_master WHERE name LIKE 'Memo_search%'").isEmpty)
        }
        #if Postgres
        if let postgres = second as? Postgres.Database {
            let columns = try await postgres.textRows("SELECT column_name::text FROM information_schema.columns WHERE table_name = 'Memo'", [])
            #expect(!columns.contains(["codable_search"]), "\(columns)")
        }
        #endif
        let third = try await open()
        #expect(Set(try await third.search(SearchableMemo.self, for: "memo").map(\.value.title)) == ["Kept memo", "Plain memo"])
    }

    @Test("a live search follows saves, edits and deletes", arguments: await Backend.available)
    func liveSearch(_ backend: Backend) async throws {
        let db = try await backend.open()
        try await db.save(Note(title: "Shopping", body: "milk"))
        let values = Collected(db.observeSearch(Note.self, for: "milk", limit: 10))
        try await values.wait { $0.last.map(Self.titles) == ["Shopping"] }
        var later = try await db.save(Note(title: "Later", body: "more milk"))
        try await values.wait { Set($0.last.map(Self.titles) ?? []) == ["Shopping", "Later"] }
        later.body = "bread"
        try await db.save(later)
        try await values.wait { $0.last.map(Self.titles) == ["Shopping"] }
        try await db.delete(Note.self, id: 1)
        try await values.wait { $0.last?.isEmpty == true }
        let filtered = Collected(db.observeSearch(for: "bread", in: Filter(\Note.isArchived, is: .equal(to: false))))
        try await filtered.wait { $0.last.map(Self.titles) == ["Later"] }
        later.isArchived = true
        try await db.save(later)
        try await filtered.wait { $0.last?.isEmpty == true }
    }

    @Test("snippets show the words that matched, in context", arguments: await Backend.available)
    func snippets(_ backend: Backend) async throws {
        let db = try await backend.open()
        let body = "On Monday we planned the garden. On Tuesday we bought seeds, soil and a new watering can. "
            + "On Wednesday it rained all day, so nothing was planted, and the Crème fraîche went off."
        try await db.save(Note(title: "Week", body: body))
        let hit = try #require(try await db.search(Note.self, for: "creme frai").first)
        #expect(hit.snippet(\.body) == "…all day, so nothing was planted, and the [Crème] [fraîche] went off.")
        #expect(hit.snippet(\.body, words: 3, opening: "<b>", closing: "</b>") == "…the <b>Crème</b> <b>fraîche</b>…")
        #expect(hit.snippet(\.title) == "Week", "a property without a match: its beginning")
        #expect(hit.matches(in: \.body).map { String(body[$0]) } == ["Crème", "fraîche"])
        let seeds = try #require(try await db.search(Note.self, for: "seeds").first)
        #expect(seeds.snippet(\.body, words: 4) == "…we bought [seeds], soil…")
        #expect(seeds.snippet(\.body, words: 1) == "…[seeds]…")
        #expect(seeds.snippet(\.title, words: 0) == "Week")
    }

    #if Macros
    @RowCodable
    #endif
    struct Odd: SearchableModel, Equatable, Sendable {
        var id: Int?
        var q: String
        var w: Int
        var o: String?
        static var tableName: String { "My \"Note's\" tbl" }
        static var searchable: [SearchField<Odd>] { [.field(\.q), .field(\.o, weight: 2)] }
    }

    @Test("names that need quoting, and properties named like the query's own names", arguments: await Backend.available)
    func oddNames(_ backend: Backend) async throws {
        let db = try await backend.open()
        try await db.save([Odd(q: "alpha beta", w: 2, o: nil), Odd(q: "alpha", w: 1, o: "gamma beta")])
        let hits = try await db.search(for: "beta", in: Filter(\Odd.w, is: .greater(than: 0)).sort(by: \.q))
        #expect(hits.map(\.value.w) == [1, 2], "o weighs more")
        #expect(try await db.search(for: "alpha", in: Filter(\Odd.q, is: .equal(to: "alpha"))).map(\.value.w) == [1])
        #expect(try await db.search(for: "gam", in: Filter(\Odd.o, is: .notEqual(to: nil))).count == 1)
        try await db.delete(with: Filter(\Odd.w, is: .equal(to: 1)))
        #expect(try await db.search(Odd.self, for: "beta").map(\.value.w) == [2])
    }

    #if Macros
    @RowCodable
    #endif
    struct Bad: SearchableModel, Sendable {
        struct Address: Codable, Sendable { var city: String }
        var id: Int?
        var a: String
        var b: String
        var c: String
        var d: String
        var e: String
        var rank: String
        var address: Address
        nonisolated(unsafe) static var fields: [SearchField<Bad>] = []
        static var searchable: [SearchField<Bad>] { fields }
    }

    @Test("a declaration that cannot be indexed is refused with its reason, on both engines alike", arguments: await Backend.available)
    func invalidDeclarations(_ backend: Backend) async throws {
        let db = try await backend.open()
        let value = Bad(a: "a", b: "b", c: "c", d: "d", e: "e", rank: "r", address: .init(city: "Paris"))
        let cases: [([SearchField<Bad>], String)] = [
            ([], "lists no property"),
            ([.field(\.a, weight: 1), .field(\.b, weight: 2), .field(\.c, weight: 3), .field(\.d, weight: 4), .field(\.e, weight: 5)], "at most 4"),
            ([.field(\.address.city)], "nested value"),
            ([.field(\.a), .field(\.a, weight: 2)], "listed twice"),
            ([.field(\.a, weight: 0)], "positive"),
            ([.field(\.a, weight: .nan)], "positive"),
            ([.field(\.rank)], "reserves"),
        ]
        for (fields, reason) in cases {
            Bad.fields = fields
            await #expect {
                try await db.search(Bad.self, for: "a")
            } throws: { error in
                (error as? ModelError)?.code == .unsupportedModel && "\(error)".contains(reason) && "\(error)".contains("Bad")
            }
        }
        Bad.fields = [.field(\.a, weight: 1), .field(\.b, weight: 2), .field(\.c, weight: 3), .field(\.d, weight: 4), .field(\.e, weight: 4)]
        try await db.save(value)
        #expect(try await db.search(Bad.self, for: "e").count == 1, "four weights are allowed")
        try await db.save(Note(title: "Still", body: "usable"))
        #expect(Self.titles(try await db.search(Note.self, for: "usable")) == ["Still"])
        Bad.fields = []
    }

    #if Macros
    @RowCodable
    #endif
    struct Run: SearchableModel, Sendable {
        var id: Int?
        var text: String
        static var searchable: [SearchField<Run>] { [.field(\.text)] }
        static var searchLanguage: SearchLanguage { .english }
    }

    @Test("English matches word forms on both engines", arguments: await Backend.available)
    func english(_ backend: Backend) async throws {
        let db = try await backend.open()
        try await db.save([Run(text: "She was running late"), Run(text: "Nothing to see")])
        #expect(try await db.search(Run.self, for: "runs").map(\.value.text) == ["She was running late"])
        #expect(try await db.search(Run.self, for: "runs lately").map(\.value.text) == ["She was running late"])
        #expect(try await db.search(Run.self, for: "runner").isEmpty)
        let hit = try #require(try await db.search(Run.self, for: "runs").first)
        #expect(hit.snippet(\.text) == "She was [running] late")
    }

    #if Macros
    @RowCodable
    #endif
    struct Folder: Model, Equatable, Sendable {
        var id: Int?
        var name: String
    }

    #if Macros
    @RowCodable
    #endif
    struct Filed: SearchableModel, Equatable, Sendable {
        var id: Int?
        var text: String
        var folder: Folder?
        static var searchable: [SearchField<Filed>] { [.field(\.text)] }
    }

    @Test("hits of a model with relationships hold their related values", arguments: await Backend.available)
    func relationships(_ backend: Backend) async throws {
        let db = try await backend.open()
        let work = try await db.save(Folder(name: "Work"))
        try await db.save([Filed(text: "quarterly report", folder: work), Filed(text: "holiday report", folder: nil)])
        let hits = try await db.search(for: "report", in: Filter(\Filed.folder?.name, is: .equal(to: "Work")))
        #expect(hits.map(\.value.text) == ["quarterly report"])
        #expect(hits.first?.value.folder == work)
        #expect(try await db.search(Filed.self, for: "report").count == 2)
    }
}

#if Postgres
@Suite("Search finds the same rows on both engines", .serverShare, .hangLimit(minutes: 3))
struct SearchSameRowsTests {
    @Test("the same text finds the same rows on SQLite and PostgreSQL")
    func sameRows() async throws {
        guard await TestServer.shared.isAvailable else { return }
        let texts = [
            "Send the e-mail to Zoë", "pi is 3.14 roughly", "l’été est chaud", "don't panic", "foo_bar baz", "C++ and C#",
            "naïve café", "ÉCOLE publique", "Straße und Brücke", "ЖУК и жучок", "visit example.com/path?x=1", "mail me@example.org",
            "tab\tseparated\nlines", "emoji 🥛 milk", "version 2.0.1 released", "«guillemets» and “quotes”", "semi;colon,comma",
            "日本語のテキスト", "über-cool", "ALLCAPS words", "mixed123digits 456", "half ½ done",
        ]
        let queries = [
            "e-mail", "mail", "zoe", "3.14", "3", "14", "ete", "l’été", "don't", "don", "foo", "bar", "c", "cafe", "naive", "ecole",
            "straße", "brucke", "жук", "жуч", "example", "com", "path", "me", "org", "separated lines", "milk", "2.0", "guillemets",
            "quotes", "colon", "日本語のテキスト", "uber", "cool", "allcaps", "mixed123", "456", "done", "x", "released version",
        ]
        let sqlite = try await Backend.sqlite.open()
        let postgres = try await Backend.postgres.open()
        for db in [sqlite, postgres] as [any ModelStore] {
            try await db.save(texts.map { SearchOnBothBackendsTests.Note(title: "", body: $0) })
        }
        for query in queries {
            let onSQLite = Set(try await sqlite.search(SearchOnBothBackendsTests.Note.self, for: query).map(\.value.body))
            let onPostgres = Set(try await postgres.search(SearchOnBothBackendsTests.Note.self, for: query).map(\.value.body))
            #expect(onSQLite == onPostgres, "\(query): SQLite \(onSQLite.sorted()), PostgreSQL \(onPostgres.sorted())")
            #expect(!onSQLite.isEmpty || ["x"].contains(query), "\(query) finds nothing")
        }
    }
}
#endif
