import CodableSQLite
import Foundation
import GRDB
import GRDBSQLite

/// Scenario J: full-text search. Index N notes (100,000 in a full run), then search them: queries
/// of one, two and three words, and type-ahead (a query per keystroke of a phrase, its last word
/// a prefix), 20 hits each, best first.
///
/// Contenders, each on a new WAL file with `synchronous = NORMAL`, the same FTS5 index (external
/// content on the notes table, `unicode61 remove_diacritics 2`, prefixes 2–4, three triggers):
/// - hand-written FTS5 (the floor): SQLite's C API, the index and triggers written by hand,
///   statements prepared once, hits ranked by `bm25` with the same weights, read by column index;
/// - GRDB's FTS5 API: `create(virtualTable:using: FTS5())` synchronized with the table, queries
///   with `FTS5Pattern` and the SQL GRDB's documentation gives for synchronized tables;
/// - CodableSQLite: a `SearchableModel`, `db.save(notes)` and `db.search(Note.self, for:limit:)`.
struct SearchBenchmark {
    let notes: Int
    let queries: Int

    init(settings: Settings) {
        // The quick run is CI's smoke test: small enough to cost seconds.
        notes = settings.rows < 100_000 ? 2_000 : settings.rows
        queries = settings.rows < 100_000 ? 50 : 1_000
    }

    struct Note: SearchableModel, Sendable, Codable, FetchableRecord, PersistableRecord {
        var id: Int64
        var title: String
        var body: String
        static var tableName: String { "note" }
        static let databaseTableName = "note"
        static var searchable: [SearchField<Note>] { [.field(\.title, weight: 3), .field(\.body)] }
    }

    /// What a run measured for one contender.
    struct Result {
        var name: String
        var index: Double = 0
        var bytes: Int = 0
        var latencies: [String: [Double]] = [:]
    }

    func run() throws -> String {
        let data = Self.corpus(count: notes)
        let plainBytes = try measurePlainFileSize(data)
        var lines = ["", "J: full-text search, \(notes) notes (title and body, \(Self.vocabulary.count) words), \(queries) queries of each kind, 20 hits (file database, WAL)"]
        var results: [Result] = []
        for (name, measure) in [("hand-written FTS5", measureFloor), ("GRDB FTS5", measureGRDB), ("CodableSQLite", measureCodableSQLite)] {
            var result = try measure(data)
            result.name = name
            results.append(result)
        }
        lines.append("  " + "".padding(toLength: 20, withPad: " ", startingAt: 0)
            + "index     growth   " + Self.kinds.map { $0.padding(toLength: 19, withPad: " ", startingAt: 0) }.joined())
        lines.append("  " + "".padding(toLength: 20, withPad: " ", startingAt: 0)
            + "(ms)      (MB)     " + Self.kinds.map { _ in "p50 / p99 µs".padding(toLength: 19, withPad: " ", startingAt: 0) }.joined())
        for result in results {
            var line = "  " + result.name.padding(toLength: 20, withPad: " ", startingAt: 0)
            line += String(format: "%-9.0f %-8.1f ", result.index * 1000, Double(result.bytes - plainBytes) / 1_048_576)
            for kind in Self.kinds {
                let sorted = (result.latencies[kind] ?? []).sorted()
                let p50 = sorted.isEmpty ? 0 : sorted[sorted.count / 2] * 1e6
                let p99 = sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, sorted.count * 99 / 100)] * 1e6
                line += String(format: "%.0f / %.0f", p50, p99).padding(toLength: 19, withPad: " ", startingAt: 0)
            }
            lines.append(line)
        }
        let floor = results[0]
        for result in results.dropFirst() {
            let ratios = Self.kinds.map { kind -> String in
                let mine = (result.latencies[kind] ?? []).sorted(), base = (floor.latencies[kind] ?? []).sorted()
                guard !mine.isEmpty, !base.isEmpty else { return "-" }
                return String(format: "%@ %.2fx", kind, mine[mine.count / 2] / base[base.count / 2])
            }
            lines.append("  \(result.name) vs the floor: index \(String(format: "%.2fx", result.index / floor.index)), p50 " + ratios.joined(separator: ", "))
        }
        return lines.joined(separator: "\n")
    }

    static let kinds = ["1 word", "2 words", "3 words", "type-ahead"]

    // MARK: Data

    /// 4,000 made-up words, some with accents; notes draw from them with a skew (a few words are
    /// common, most are rare), as text does.
    static let vocabulary: [String] = {
        var random = SplitMix(seed: 11)
        let syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "bé", "cha", "dor", "el", "fra", "gu", "hin", "ï", "jo", "ou", "pré"]
        return (0..<4_000).map { _ in
            (0..<(2 + Int(random.next() % 3))).map { _ in syllables[Int(random.next() % UInt64(syllables.count))] }.joined()
        }
    }()

    static func word(_ random: inout SplitMix) -> String {
        // Skewed: the square of a uniform draw favours low ranks.
        let uniform = Double(random.next() % 1_000_000) / 1_000_000
        return vocabulary[Int(uniform * uniform * Double(vocabulary.count - 1))]
    }

    static func corpus(count: Int) -> [Note] {
        var random = SplitMix(seed: 5)
        return (1...count).map { id in
            let title = (0..<(3 + Int(random.next() % 4))).map { _ in word(&random) }.joined(separator: " ")
            let body = (0..<(20 + Int(random.next() % 40))).map { _ in word(&random) }.joined(separator: " ")
            return Note(id: Int64(id), title: title.prefix(1).uppercased() + title.dropFirst(), body: body + ".")
        }
    }

    /// The queries of each kind, the same for every contender.
    func workload() -> [(kind: String, text: String)] {
        var random = SplitMix(seed: 23)
        var work: [(String, String)] = []
        for _ in 0..<queries {
            for (count, kind) in [(1, "1 word"), (2, "2 words"), (3, "3 words")] {
                // Drawn as the text is: common words often, rare ones seldom.
                work.append((kind, (0..<count).map { _ in Self.word(&random) }.joined(separator: " ")))
            }
        }
        var keystrokes = 0
        while keystrokes < queries {
            let phrase = Self.word(&random) + " " + Self.word(&random)
            for end in 1...phrase.count where keystrokes < queries {
                work.append(("type-ahead", String(phrase.prefix(end))))
                keystrokes += 1
            }
        }
        return work
    }

    private func time(_ work: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try work()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    private func fileSize(_ path: String) -> Int {
        ["", "-wal"].reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: path + $1)[.size] as? Int) ?? 0) }
    }

    /// The notes without an index: what the index's growth is measured from.
    private func measurePlainFileSize(_ data: [Note]) throws -> Int {
        let path = temporaryDatabasePath("j-plain")
        defer { removeDatabaseFiles(path) }
        let floor = try FloorFTS5(path: path, indexed: false)
        try floor.insert(data)
        try floor.checkpoint()
        return fileSize(path)
    }

    // MARK: Contenders

    private func measureFloor(_ data: [Note]) throws -> Result {
        let path = temporaryDatabasePath("j-floor")
        defer { removeDatabaseFiles(path) }
        let floor = try FloorFTS5(path: path, indexed: true)
        var result = Result(name: "")
        result.index = try time { try floor.insert(data) }
        try floor.checkpoint()
        result.bytes = fileSize(path)
        for (kind, text) in workload() {
            var found = 0
            result.latencies[kind, default: []].append(try time { found = try floor.search(text, limit: 20).count })
            if kind == "1 word", found == 0 { throw BenchmarkError.verification("J floor: \"\(text)\" found nothing") }
        }
        return result
    }

    private func measureGRDB(_ data: [Note]) throws -> Result {
        let path = temporaryDatabasePath("j-grdb")
        defer { removeDatabaseFiles(path) }
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try pool.write { db in
            try db.create(table: "note") { table in
                table.column("id", .integer).primaryKey()
                table.column("title", .text).notNull()
                table.column("body", .text).notNull()
            }
            try db.create(virtualTable: "note_ft", using: FTS5()) { table in
                table.synchronize(withTable: "note")
                table.tokenizer = .unicode61(diacritics: .remove)
                table.prefixes = [2, 3, 4]
                table.column("title")
                table.column("body")
            }
        }
        var result = Result(name: "")
        result.index = try time { try pool.write { db in for note in data { try note.insert(db) } } }
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        result.bytes = fileSize(path)
        let sql = "SELECT note.* FROM note JOIN note_ft ON note_ft.rowid = note.rowid AND note_ft MATCH ? ORDER BY bm25(note_ft, 3.0, 1.0) LIMIT 20"
        for (kind, text) in workload() {
            var found = 0
            result.latencies[kind, default: []].append(try time {
                // Whole words, the last a prefix as every contender's type-ahead: GRDB's prefix
                // pattern makes every word a prefix, which finds more.
                guard let pattern = kind == "type-ahead" ? FTS5Pattern(matchingAllPrefixesIn: text) : FTS5Pattern(matchingAllTokensIn: text) else { return }
                found = try pool.read { db in try Note.fetchAll(db, sql: sql, arguments: [pattern]) }.count
            })
            if kind == "1 word", found == 0 { throw BenchmarkError.verification("J GRDB: \"\(text)\" found nothing") }
        }
        return result
    }

    private func measureCodableSQLite(_ data: [Note]) throws -> Result {
        let path = temporaryDatabasePath("j-codablesqlite")
        defer { removeDatabaseFiles(path) }
        var result = Result(name: "")
        do {
            let db = try SQLite.Database(path: path)
            result.index = try time { try db.save(data) }
            _ = try db.execute(raw: "PRAGMA wal_checkpoint(TRUNCATE)")
            result.bytes = fileSize(path)
            for (kind, text) in workload() {
                var found = 0
                result.latencies[kind, default: []].append(try time { found = try db.search(Note.self, for: text, limit: 20).count })
                if kind == "1 word", found == 0 { throw BenchmarkError.verification("J CodableSQLite: \"\(text)\" found nothing") }
            }
        }
        return result
    }
}

private let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

/// Hand-written FTS5: the schema the others build, by hand, and one prepared statement a query.
final class FloorFTS5 {
    private let db: OpaquePointer
    private let indexed: Bool
    private var query: OpaquePointer?

    init(path: String, indexed: Bool) throws {
        var handle: OpaquePointer?
        guard sqlite3_open(path, &handle) == SQLITE_OK, let handle else { throw BenchmarkError.sqlite("cannot open \(path)") }
        db = handle
        self.indexed = indexed
        try exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
        try exec("CREATE TABLE note (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL)")
        guard indexed else { return }
        try exec("""
            CREATE VIRTUAL TABLE note_fts USING fts5(title, body, content='note', tokenize='unicode61 remove_diacritics 2', prefix='2 3 4');
            CREATE TRIGGER note_ai AFTER INSERT ON note BEGIN INSERT INTO note_fts (rowid, title, body) VALUES (new.rowid, new.title, new.body); END;
            CREATE TRIGGER note_ad AFTER DELETE ON note BEGIN INSERT INTO note_fts (note_fts, rowid, title, body) VALUES ('delete', old.rowid, old.title, old.body); END;
            CREATE TRIGGER note_au AFTER UPDATE ON note BEGIN INSERT INTO note_fts (note_fts, rowid, title, body) VALUES ('delete', old.rowid, old.title, old.body);
                INSERT INTO note_fts (rowid, title, body) VALUES (new.rowid, new.title, new.body); END;
            """)
        query = try prepare("""
            SELECT note.id, note.title, note.body FROM note JOIN note_fts ON note_fts.rowid = note.rowid \
            WHERE note_fts MATCH ?1 ORDER BY bm25(note_fts, 3.0, 1.0) LIMIT ?2
            """)
    }

    deinit {
        sqlite3_finalize(query)
        sqlite3_close_v2(db)
    }

    private func exec(_ sql: String) throws { try execute(sql, on: db) }

    private func prepare(_ sql: String) throws -> OpaquePointer { try prepareStatement(sql, on: db) }

    func insert(_ notes: [SearchBenchmark.Note]) throws {
        let insert = try prepare("INSERT INTO note (id, title, body) VALUES (?1, ?2, ?3)")
        defer { sqlite3_finalize(insert) }
        try exec("BEGIN")
        for note in notes {
            sqlite3_bind_int64(insert, 1, note.id)
            sqlite3_bind_text(insert, 2, note.title, -1, transient)
            sqlite3_bind_text(insert, 3, note.body, -1, transient)
            guard sqlite3_step(insert) == SQLITE_DONE else { throw BenchmarkError.sqlite(String(cString: sqlite3_errmsg(db))) }
            sqlite3_reset(insert)
        }
        try exec("COMMIT")
    }

    func checkpoint() throws { try exec("PRAGMA wal_checkpoint(TRUNCATE)") }

    /// The typed words quoted (never syntax), the last a prefix: as CodableSQLite does.
    func search(_ text: String, limit: Int32) throws -> [SearchBenchmark.Note] {
        guard let query else { return [] }
        let words = text.split { !$0.isLetter && !$0.isNumber }
        guard !words.isEmpty else { return [] }
        let match = words.enumerated().map { "\"\($1)\"" + ($0 == words.count - 1 ? "*" : "") }.joined(separator: " ")
        sqlite3_bind_text(query, 1, match, -1, transient)
        sqlite3_bind_int(query, 2, limit)
        defer { sqlite3_reset(query) }
        var notes: [SearchBenchmark.Note] = []
        while true {
            let code = sqlite3_step(query)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else { throw BenchmarkError.sqlite(String(cString: sqlite3_errmsg(db))) }
            notes.append(SearchBenchmark.Note(
                id: sqlite3_column_int64(query, 0),
                title: String(cString: sqlite3_column_text(query, 1)),
                body: String(cString: sqlite3_column_text(query, 2))))
        }
        return notes
    }
}
