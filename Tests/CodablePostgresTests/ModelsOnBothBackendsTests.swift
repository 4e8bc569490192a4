import Foundation
import Testing
import CodableSQLite
#if Postgres
@testable import CodablePostgres
#endif

/// One set of model tests, run against SQLite and (with the Postgres trait) against a real
/// PostgreSQL server, through the public ``ModelStore`` protocol.
@Suite("Models on SQLite and PostgreSQL", .serverShare, .hangLimit(minutes: 3))
struct ModelsOnBothBackendsTests {
    enum Mood: String, Codable, Sendable { case calm, busy }
    #if Macros
    @RowCodable
    #endif
    struct Address: Codable, Equatable, Sendable { var city: String; var zip: Int; var verified: Bool }
    #if Macros
    @RowCodable
    #endif
    struct Everything: UUIDModel, Equatable, Sendable {
        let id: UUID
        var name: String
        var age: Int
        var score: Double
        var active: Bool
        var born: Date
        var photo: Data
        var price: Decimal
        var homepage: URL
        var nickname: String?
        var mood: Mood
        var address: Address
        var tags: [String]
        var extras: [String: Int]
        var lastSeen: Date?
    }

    static func sample(_ index: Int) -> Everything {
        Everything(
            id: UUID(), name: "Person \(index)", age: 20 + index, score: Double(index) / 3, active: index % 2 == 0,
            // Microseconds: the precision both engines keep.
            born: Date(timeIntervalSince1970: 1_700_000_000 + Double(index) * 86_400 + 0.123456),
            photo: Data([0, 1, 2, 255, UInt8(index % 256)]), price: Decimal(string: "\(index).25")!,
            homepage: URL(string: "https://example.com/\(index)?q=a%20b")!, nickname: index % 3 == 0 ? nil : "n\(index)",
            mood: index % 2 == 0 ? .calm : .busy, address: Address(city: index % 2 == 0 ? "Paris" : "Oslo", zip: 1000 + index, verified: index % 4 == 0),
            tags: ["t\(index)", "all"], extras: ["k": index], lastSeen: index % 2 == 0 ? nil : Date(timeIntervalSince1970: 1_600_000_000.5))
    }

    @Test("every stored type round-trips", arguments: await Backend.available)
    func roundTrip(_ backend: Backend) async throws {
        let db = try await backend.open()
        let values = (0..<12).map(Self.sample)
        let saved = try await db.save(values)
        #expect(saved == values)
        for value in values {
            #expect(try await db.get(Everything.self, id: value.id) == value)
        }
        #expect(try await db.get(Everything.self, id: UUID()) == nil)
        #expect(try await db.count(Everything.self) == 12)
        // Saving again replaces.
        var changed = values[0]
        changed.name = "Changed"
        changed.nickname = nil
        try await db.save(changed)
        #expect(try await db.get(Everything.self, id: changed.id) == changed)
        #expect(try await db.count(Everything.self) == 12)
    }

    @Test("filters, sorts and pages mean the same on both", arguments: await Backend.available)
    func filters(_ backend: Backend) async throws {
        let db = try await backend.open()
        let values = (0..<20).map(Self.sample)
        try await db.save(values)
        func names(_ filter: Filter<Everything>) async throws -> [String] { try await db.get(with: filter).map(\.name) }

        #expect(try await db.count(with: Filter(\Everything.age, is: .greater(than: 35))) == 4)
        #expect(try await db.count(with: Filter(\Everything.age, is: .between(25, and: 29))) == 5)
        #expect(try await db.count(with: Filter(\Everything.nickname, is: .equal(to: nil))) == 7)
        #expect(try await db.count(with: Filter(\Everything.nickname, is: .notEqual(to: nil))) == 13)
        #expect(try await db.count(with: Filter(\Everything.nickname, is: .notEqual(to: "n1"))) == 19)
        #expect(try await db.count(with: Filter(\Everything.active, is: .equal(to: true))) == 10)
        #expect(try await db.count(with: Filter(\Everything.mood, is: .in([.busy]))) == 10)
        #expect(try await db.count(with: Filter(\Everything.age, is: .notIn([20, 21]))) == 18)
        #expect(try await db.count(with: Filter(\Everything.age, is: .in([]))) == 0)
        #expect(try await db.count(with: Filter(\Everything.born, is: .greater(than: values[10].born))) == 9)
        #expect(try await db.count(with: Filter(\Everything.price, is: .greater(than: Decimal(9.5)))) == 10)
        #expect(try await db.count(with: Filter(\Everything.id, is: .equal(to: values[3].id))) == 1)
        #expect(try await db.count(with: Filter(\Everything.photo, is: .equal(to: values[3].photo))) == 1)
        // Into nested values.
        #expect(try await db.count(with: Filter(\Everything.address.city, is: .equal(to: "Paris"))) == 10)
        #expect(try await db.count(with: Filter(\Everything.address.zip, is: .greaterOrEqual(to: 1015))) == 5)
        #expect(try await db.count(with: Filter(\Everything.address.verified, is: .equal(to: true))) == 5)
        // Text matching, with characters that are special to LIKE and GLOB.
        #expect(try await names(Filter(\Everything.name, is: .hasPrefix("Person 1")).sort(by: \.age)).count == 11)
        #expect(try await db.count(with: Filter(\Everything.name, is: .hasSuffix("9"))) == 2)
        #expect(try await db.count(with: Filter(\Everything.name, is: .contains("%"))) == 0)
        #expect(try await db.count(with: Filter(\Everything.name, is: .like("person 1_"))) == 10)
        #expect(try await db.count(with: Filter(\Everything.address.city, is: .hasPrefix("Os"))) == 10)
        // Combinations, sorting and paging.
        let either = Filter(\Everything.age, is: .less(than: 22)).or(\Everything.age, is: .greater(than: 37))
        #expect(try await names(either.sort(by: \.age)) == ["Person 0", "Person 1", "Person 18", "Person 19"])
        let page = Filter<Everything>().sort(by: \.mood).sort(by: \.age, ascending: false).limit(3, page: 2)
        #expect(try await names(page) == ["Person 13", "Person 11", "Person 9"])
        #expect(try await db.count(with: Filter<Everything>().limit(5, page: 4)) == 5)
        #expect(try await names(Filter<Everything>().sort(by: \.address.zip, ascending: false).limit(2)) == ["Person 19", "Person 18"])
        // Optional values sort first, as SQLite sorts NULL.
        #expect(try await db.get(with: Filter<Everything>().sort(by: \.nickname).limit(1)).first?.nickname == nil)
    }

    #if Macros
    @RowCodable
    #endif
    struct Word: UUIDModel, Equatable, Sendable { let id: UUID; var text: String }

    @Test("text compares and sorts by bytes, as SQLite", arguments: await Backend.available)
    func textOrder(_ backend: Backend) async throws {
        let db = try await backend.open()
        try await db.save(["b", "B", "a", "A", "é"].map { Word(id: UUID(), text: $0) })
        #expect(try await db.get(with: Filter<Word>().sort(by: \.text)).map(\.text) == ["A", "B", "a", "b", "é"])
        #expect(try await db.count(with: Filter(\Word.text, is: .greater(than: "Z"))) == 3)
        #expect(try await db.count(with: Filter(\Word.text, is: .hasPrefix("a"))) == 1)
        #expect(try await db.count(with: Filter(\Word.text, is: .like("a"))) == 2)
    }

    @Test("hasPrefix, hasSuffix and contains match wildcard characters literally", arguments: await Backend.available)
    func literalTextMatching(_ backend: Backend) async throws {
        let db = try await backend.open()
        let texts = ["50% off", "50 % off", "a_b", "axb", "star*", "what?", "[x]", "x", #"back\slash"#, "backslash"]
        try await db.save(texts.map { Word(id: UUID(), text: $0) })
        func matching(_ rule: Rule<String>) async throws -> [String] {
            try await db.get(with: Filter(\Word.text, is: rule).sort(by: \.text)).map(\.text)
        }
        #expect(try await matching(.hasPrefix("50%")) == ["50% off"])
        #expect(try await matching(.contains("_")) == ["a_b"])
        #expect(try await matching(.hasSuffix("*")) == ["star*"])
        #expect(try await matching(.hasSuffix("?")) == ["what?"])
        #expect(try await matching(.hasPrefix("[")) == ["[x]"])
        #expect(try await matching(.contains(#"\s"#)) == [#"back\slash"#])
        #expect(try await matching(.contains("")) == texts.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
    }

    @Test("deletes by value, id, list and filter report what they removed", arguments: await Backend.available)
    func deletes(_ backend: Backend) async throws {
        let db = try await backend.open()
        let values = (0..<10).map(Self.sample)
        try await db.save(values)
        #expect(try await db.delete(values[0]))
        #expect(try await !db.delete(values[0]))
        #expect(try await db.delete(Everything.self, id: values[1].id))
        #expect(try await db.delete([values[2], values[3], values[2]]) == 2)
        #expect(try await db.delete(with: Filter(\Everything.age, is: .greater(than: 27))) == 2)
        #expect(try await db.delete(with: Filter<Everything>().sort(by: \.age).limit(2)) == 2)
        #expect(try await db.get(Everything.self).map(\.age).sorted() == [26, 27])
    }

    #if Macros
    @RowCodable
    #endif
    struct Note: Model, Equatable, Sendable { var id: Int?; var text: String }

    @Test("optional integer ids are assigned, after any explicit ids", arguments: await Backend.available)
    func assignedIDs(_ backend: Backend) async throws {
        let db = try await backend.open()
        let first = try await db.save(Note(id: nil, text: "one"))
        let id = try #require(first.id)
        let more = try await db.save([Note(id: nil, text: "two"), Note(id: nil, text: "three")])
        #expect(more.map(\.text) == ["two", "three"])
        #expect(Set(more.compactMap(\.id)).count == 2 && more.allSatisfy { ($0.id ?? 0) > id })
        try await db.save(Note(id: 100, text: "explicit"))
        let after = try await db.save(Note(id: nil, text: "after"))
        #expect((after.id ?? 0) > 100)
        #expect(try await db.count(Note.self) == 5)
    }

    @Test("an assigned id never takes an explicit id of the same save", arguments: await Backend.available)
    func assignedIDsSkipExplicitOnes(_ backend: Backend) async throws {
        let db = try await backend.open()
        let saved = try await db.save([Note(id: nil, text: "new"), Note(id: 1, text: "first")])
        #expect(try await db.count(Note.self) == 2)
        #expect(saved[1].id == 1 && saved[0].id != nil && saved[0].id != 1)
        #expect(try await db.get(Note.self, id: 1)?.text == "first")
        let reversed = try await db.save([Note(id: 7, text: "seven"), Note(id: nil, text: "newer"), Note(id: 8, text: "eight")])
        #expect(try await db.count(Note.self) == 5)
        #expect(![1, 7, 8].contains(reversed[1].id ?? 1))
        #expect(try await db.get(Note.self, id: 7)?.text == "seven")
        #expect(try await db.get(Note.self, id: 8)?.text == "eight")
    }

    @Test("one save of many values: an id given twice keeps the last value, awkward text and NULLs survive", arguments: await Backend.available)
    func bulkSave(_ backend: Backend) async throws {
        let db = try await backend.open()
        let awkward = ["", "NULL", "tab\there", "line\nbreak", #"quote " and \ backslash"#, "{a,b}", "é – 🙂", String(repeating: "x", count: 10_000)]
        // More than PostgreSQL writes in one statement (made 1,000 values here; 10,000 by default).
        let count = 2_500
        var values = (0..<count).map(Self.sample)
        for (index, text) in awkward.enumerated() {
            values[index].name = text
            values[index].nickname = text
        }
        // More than microseconds, on both sides of a statement's boundary: what a save returns is
        // what a get returns, on both engines.
        let pastMicroseconds = [0, 1, 2, 999, 1_000, 1_001, 2_499]
        for index in pastMicroseconds {
            values[index].born = Date(timeIntervalSince1970: 1_700_000_000.123456789 + Double(index))
        }
        // An id given twice in one statement's share, and across shares: the last value wins.
        var replaced = values[10]
        replaced.name = "the last one wins"
        values.append(replaced)
        var replacedNearby = values[1_200]
        replacedNearby.name = "this one too"
        values.insert(replacedNearby, at: 1_500)
        let saved = try await Backend.withSmallStatements(of: 1_000) { try await db.save(values) }
        #expect(saved.count == values.count)
        #expect(saved.last?.name == "the last one wins")
        #expect(try await db.count(Everything.self) == count)
        #expect(try await db.get(Everything.self, id: replaced.id) == replaced)
        #expect(try await db.get(Everything.self, id: replacedNearby.id) == replacedNearby)
        for index in Array(0..<awkward.count) + pastMicroseconds {
            let (value, saved) = (values[index], saved[index])
            #expect(try await db.get(Everything.self, id: value.id) == saved)
            #expect(saved.name == value.name && abs(saved.born.timeIntervalSince(value.born)) < 0.000_001)
        }
        let stored = Dictionary(values.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
        let withoutNickname = stored.values.filter { $0.nickname == nil }.count
        #expect(try await db.count(with: Filter(\Everything.nickname, is: .equal(to: nil))) == withoutNickname)

        // Ids assigned and given, with one given twice, in one call.
        let notes = try await db.save([Note(id: nil, text: "a"), Note(id: 5, text: "x"), Note(id: 5, text: "y"), Note(id: nil, text: "b")])
        #expect(notes.map(\.text) == ["a", "x", "y", "b"])
        #expect(notes[1].id == 5 && notes[2].id == 5)
        #expect(Set([notes[0].id, notes[3].id, 5]).count == 3)
        #expect(try await db.get(Note.self, id: 5)?.text == "y")
        #expect(try await db.count(Note.self) == 3)
    }

    /// Decodes its optional with `decodeNil`/`decode(String?.self)`, which need the key present.
    struct Stamp: UUIDModel, Equatable, Sendable {
        let id: UUID
        var at: Date
        var note: String?
        enum CodingKeys: String, CodingKey { case id, at, note }
        init(id: UUID, at: Date, note: String?) { (self.id, self.at, self.note) = (id, at, note) }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(UUID.self, forKey: .id)
            at = try container.decode(Date.self, forKey: .at)
            note = try container.decodeNil(forKey: .note) ? nil : try container.decode(String?.self, forKey: .note)
        }
    }

    #if Macros
    @RowCodable
    #endif
    struct Tag: Model, Equatable, Sendable { var id: String; var count: Int }

    @Test("a date past the microsecond is found by a filter on itself; ids that differ in bytes stay apart", arguments: await Backend.available)
    func datesAndByteDistinctIDs(_ backend: Backend) async throws {
        let db = try await backend.open()
        let at = Date(timeIntervalSince1970: 1_700_000_000.123456789)
        let saved = try await db.save([Stamp(id: UUID(), at: at, note: nil), Stamp(id: UUID(), at: at.addingTimeInterval(1), note: "n")])
        #expect(saved.map(\.note) == [nil, "n"])
        #expect(try await db.get(Stamp.self, id: saved[0].id) == saved[0])
        #expect(try await db.get(with: Filter(\Stamp.at, is: .equal(to: at))).map(\.id) == [saved[0].id])
        #expect(try await db.count(with: Filter(\Stamp.at, is: .less(than: at))) == 0)

        // "café" composed and decomposed: equal as Swift strings, two ids to both databases.
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(composed == decomposed)
        try await db.save([Tag(id: composed, count: 1), Tag(id: decomposed, count: 2)])
        #expect(try await db.count(Tag.self) == 2)
        #expect(try await db.get(Tag.self).map(\.count).sorted() == [1, 2])
    }

    @Test("random dates a microsecond apart stay apart, in order, each found by a filter on itself", arguments: await Backend.available)
    func microsecondsStayDistinct(_ backend: Backend) async throws {
        let db = try await backend.open()
        var random = SeededRandom(seed: 0xDA7E_0001)
        // The issue's pair first: one microsecond apart, the later one's Double just below .000002.
        var dates = [Date(timeIntervalSince1970: 1_700_000_000.000001), Date(timeIntervalSince1970: 1_700_000_000.000002)]
        // Within 2^31 s of 2001 a Date's Double resolves a microsecond (closer than half of one).
        for _ in 0..<150 {
            // Two microseconds in a row, each as the Date nearest to it.
            let micros = Int64.random(in: -(1 << 31) * 1_000_000...(1 << 31) * 1_000_000, using: &random)
            dates += [micros, micros + 1].map { Date(timeIntervalSinceReferenceDate: Double($0) / 1_000_000) }
        }
        // And dates between microseconds, which each engine keeps within half of one (SQLite exactly).
        for _ in 0..<50 {
            let date = Date(timeIntervalSinceReferenceDate: Double.random(in: -2_000_000_000...2_000_000_000, using: &random))
            dates += [date, date.addingTimeInterval(0.000002)]
        }
        let saved = try await db.save(dates.map { Stamp(id: UUID(), at: $0, note: nil) })
        for (value, date) in zip(saved, dates) {
            // Kept to the microsecond nearest the date (SQLite keeps every digit).
            // (A Date's Double near 2^31 s resolves a quarter of a microsecond.)
            #expect(abs(value.at.timeIntervalSince(date)) <= 0.0000008, "\(date.timeIntervalSinceReferenceDate) became \(value.at.timeIntervalSinceReferenceDate)")
            #expect(try await db.get(Stamp.self, id: value.id) == value)
        }
        for pair in stride(from: 0, to: saved.count, by: 2) {
            #expect(saved[pair].at < saved[pair + 1].at, "\(dates[pair].timeIntervalSinceReferenceDate) and \(dates[pair + 1].timeIntervalSinceReferenceDate) became \(saved[pair].at.timeIntervalSinceReferenceDate) and \(saved[pair + 1].at.timeIntervalSinceReferenceDate)")
            for index in [pair, pair + 1] {
                #expect(try await db.get(with: Filter(\Stamp.at, is: .equal(to: dates[index]))).map(\.id) == [saved[index].id])
            }
        }
        let ordered = try await db.get(with: Filter<Stamp>().sort(by: \.at)).map(\.id)
        #expect(ordered == saved.sorted { $0.at < $1.at }.map(\.id))
    }

    #if Macros
    @RowCodable
    #endif
    struct Keyed: UUIDModel, Sendable {
        let id: UUID
        var email: String
        static var indexes: [ModelIndex<Keyed>] { [.unique(\.email)] }
    }

    @Test("a unique index refuses a duplicate; the database stays usable", arguments: await Backend.available)
    func uniqueIndex(_ backend: Backend) async throws {
        let db = try await backend.open()
        try await db.save(Keyed(id: UUID(), email: "a@example.com"))
        do {
            try await db.save(Keyed(id: UUID(), email: "a@example.com"))
            Issue.record("a duplicate was saved")
        } catch ModelError.Code.uniqueViolation {
            // Matched the same way on both engines; each keeps its own precise error.
        } catch {
            Issue.record("not matched as a unique violation: \(error)")
        }
        // An array whose second value is refused: the engine's own error, the same code, nothing saved.
        let error = await #expect(throws: (any Error).self) {
            try await db.save([Keyed(id: UUID(), email: "c@example.com"), Keyed(id: UUID(), email: "a@example.com")])
        }
        if let error {
            #expect(backend.isUniqueViolation(error), "the engine's own error: \(error)")
            #expect(ModelError.Code(of: error) == .uniqueViolation)
        }
        #expect(ModelError.Code(of: CancellationError()) == nil)
        #expect(try await db.count(Keyed.self) == 1, "the failed array saved nothing")
        try await db.save(Keyed(id: UUID(), email: "b@example.com"))
        #expect(try await db.count(Keyed.self) == 2)
    }

    /// Coded by hand: the size through a nested container, a date past the microsecond.
    struct HandWritten: Model, Equatable, Sendable {
        struct Size: Codable, Equatable, Sendable { var width: Int; var height: Int }
        var id: Int?
        var label: String
        var size: Size
        var at: Date

        init(id: Int?, label: String, size: Size, at: Date) {
            (self.id, self.label, self.size, self.at) = (id, label, size, at)
        }

        enum CodingKeys: String, CodingKey { case id, label, size, at }
        enum SizeKeys: String, CodingKey { case width, height }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(id, forKey: .id)
            try container.encode(label, forKey: .label)
            var size = container.nestedContainer(keyedBy: SizeKeys.self, forKey: .size)
            try size.encode(self.size.width, forKey: .width)
            try size.encode(self.size.height, forKey: .height)
            try container.encode(at, forKey: .at)
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decodeIfPresent(Int.self, forKey: .id)
            label = try container.decode(String.self, forKey: .label)
            let size = try container.nestedContainer(keyedBy: SizeKeys.self, forKey: .size)
            self.size = Size(width: try size.decode(Int.self, forKey: .width), height: try size.decode(Int.self, forKey: .height))
            at = try container.decode(Date.self, forKey: .at)
        }
    }

    #if Macros
    @RowCodable
    #endif
    struct Reading: Model, Equatable, Sendable {
        var id: Int?
        var value: Double
        var count: UInt64
    }

    @Test("hand-written coding with nested containers saves and loads; values no column can hold are refused with their coding path", arguments: await Backend.available)
    func handWrittenAndUnstorable(_ backend: Backend) async throws {
        let db = try await backend.open()
        let given = (0..<3).map { HandWritten(id: nil, label: "h\($0)", size: .init(width: $0, height: 2 * $0), at: Date(timeIntervalSinceReferenceDate: 1_000.123_456_789 + Double($0))) }
        let saved = try await db.save(given)
        #expect(saved.compactMap(\.id).count == 3)
        #expect(saved.map(\.size) == given.map(\.size))
        for value in saved {
            #expect(try await db.get(HandWritten.self, id: value.id) == value)
        }

        for (bad, key) in [(Reading(id: nil, value: .nan, count: 1), "value"), (Reading(id: nil, value: 1, count: .max), "count")] {
            do {
                try await db.save([Reading(id: nil, value: 2, count: 2), bad])
                Issue.record("\(bad) was saved")
            } catch let error as EncodingError {
                guard case .invalidValue(_, let context) = error else { Issue.record("\(error)"); continue }
                #expect(context.codingPath.last?.stringValue == key, "\(error)")
            }
        }
        #expect(try await db.count(Reading.self) == 0)
        #expect(try await db.save(Reading(id: nil, value: 3, count: 3)).id != nil)
        #expect(try await db.count(Reading.self) == 1)
    }

    #if Macros
    @RowCodable
    #endif
    struct Measure: Model, Sendable { var id: Int; var value: Double }

    @Test("a save that fails part-way inside a transaction leaves nothing of itself committed", arguments: await Backend.available)
    func failingLargeSaveInTransaction(_ backend: Backend) async throws {
        let db = try await backend.open()
        // On PostgreSQL, three statements of 1,000 values; the value that cannot be stored is in
        // the last, after two were written.
        var values = (0..<2_500).map { Measure(id: $0, value: Double($0)) }
        values[2_200].value = .nan
        let committed = try? await Backend.withSmallStatements(of: 1_000) {
            try await db.inTransaction { tx in
                try await tx.save(Measure(id: 10_000, value: 1))
                await #expect(throws: EncodingError.self) { try await tx.save(values) }
                return true
            }
        }
        // SQLite goes on with the transaction; PostgreSQL refuses to commit one whose save failed
        // after writing (25P02). Neither stores anything of the failed save.
        #expect(committed == (backend == .sqlite ? true : nil))
        #expect(try await db.count(Measure.self) == (backend == .sqlite ? 1 : 0))
        #expect(try await db.get(Measure.self, id: 5) == nil)
        // The database goes on; the same save without the bad value is stored whole.
        values[2_200].value = 0
        try await Backend.withSmallStatements(of: 1_000) { _ = try await db.save(values) }
        #expect(try await db.count(with: Filter(\Measure.id, is: .less(than: 2_500))) == 2_500)
    }

    #if Macros
    @RowCodable
    #endif
    struct Nested: Codable, Sendable { var a: Int }
    #if Macros
    @RowCodable
    #endif
    struct Strange: UUIDModel, Sendable {
        let id: UUID
        var nested: Nested
        var computed: Int { 1 }
    }

    @Test("bad filters throw ModelError and change nothing", arguments: await Backend.available)
    func badFilters(_ backend: Backend) async throws {
        let db = try await backend.open()
        try await db.save(Strange(id: UUID(), nested: Nested(a: 1)))
        #expect(await throwsModelError(.invalidKeyPath) { _ = try await db.get(with: Filter(\Strange.computed, is: .equal(to: 1))) })
        #expect(await throwsModelError(.invalidFilter) { _ = try await db.get(with: Filter<Strange>().limit(-1)) })
        #expect(await throwsModelError(.invalidFilter) { _ = try await db.get(with: Filter(\Strange.nested.a, is: .equal(to: 1)).limit(1, page: 0)) })
        #expect(try await db.count(with: Filter(\Strange.nested.a, is: .equal(to: 1))) == 1)
    }

    @Test("the key-value store keeps any Codable value", arguments: await Backend.available)
    func keyValue(_ backend: Backend) async throws {
        let db = try await backend.open()
        #expect(try await db.value(Int.self, forKey: "missing") == nil)
        try await db.store(173813.5345, forKey: "number")
        try await db.store([Self.sample(1).address], forKey: "addresses")
        try await db.store(Date(timeIntervalSince1970: 1_700_000_000.25), forKey: "date")
        #expect(try await db.value(Double.self, forKey: "number") == 173813.5345)
        #expect(try await db.value([Address].self, forKey: "addresses") == [Self.sample(1).address])
        #expect(try await db.value(Date.self, forKey: "date") == Date(timeIntervalSince1970: 1_700_000_000.25))
        #expect(try await db.removeValue(forKey: "number"))
        #expect(try await !db.removeValue(forKey: "number"))
        #expect(try await db.value(Double.self, forKey: "number") == nil)
    }

    enum Version1 { struct Pet: UUIDModel, Sendable { let id: UUID; var name: String } }
    enum Version2 {
        struct Pet: UUIDModel, Sendable {
            let id: UUID; var name: String; var age: Int?
            static var tableName: String { "Pet" }
        }
    }
    enum Version3 {
        struct Pet: UUIDModel, Sendable {
            let id: UUID; var name: String; var weight: Double
            static var tableName: String { "Pet" }
        }
    }

    @Test("a new optional property becomes a column; a new required one on a table with rows is refused", arguments: await Backend.available)
    func evolution(_ backend: Backend) async throws {
        let db = try await backend.open()
        let id = UUID()
        try await db.save(Version1.Pet(id: id, name: "Rex"))
        try await db.save(Version2.Pet(id: UUID(), name: "Tom", age: 3))
        #expect(try await db.get(Version2.Pet.self, id: id)?.age == nil)
        #expect(await throwsModelError(.schemaMismatch) { try await db.save(Version3.Pet(id: UUID(), name: "Bo", weight: 1)) })
        #expect(try await db.count(Version2.Pet.self) == 2)
    }

    enum Version4 {
        struct Pet: UUIDModel, Sendable {
            let id: UUID; var name: Int
            static var tableName: String { "Pet" }
        }
        struct Aged: UUIDModel, Sendable {
            let id: UUID; var name: String; var age: Int
            static var tableName: String { "Pet" }
        }
    }

    /// The schema-change rules are one decision (`SchemaChange` in CodableModels): the same
    /// refusals, with the same messages, on both engines.
    @Test("schema changes: a changed type and a property made required over empty rows are refused alike; nothing is lost", arguments: await Backend.available)
    func schemaChangeRefusals(_ backend: Backend) async throws {
        let db = try await backend.open()
        let rex = Version2.Pet(id: UUID(), name: "Rex", age: nil)
        try await db.save([rex, Version2.Pet(id: UUID(), name: "Tom", age: 3)])
        func refusal(_ body: () async throws -> Void) async -> ModelError? {
            do { try await body(); return nil } catch let error as ModelError { return error } catch { return nil }
        }
        let retyped = await refusal { try await db.save(Version4.Pet(id: UUID(), name: 1)) }
        #expect(retyped?.code == .schemaMismatch)
        #expect(retyped?.message.contains("property `name` is now Int") == true, "\(String(describing: retyped))")
        let required = await refusal { try await db.save(Version4.Aged(id: UUID(), name: "Bo", age: 1)) }
        #expect(required?.code == .schemaMismatch)
        #expect(required?.message.contains("`age` is no longer optional, but 1 row(s)") == true, "\(String(describing: required))")
        #expect(try await db.count(Version2.Pet.self) == 2, "nothing lost")
        // Once every row has a value, the property can be required.
        try await db.delete(rex)
        try await db.save(Version4.Aged(id: UUID(), name: "Bo", age: 1))
        #expect(try await db.get(Version4.Aged.self).map(\.age).sorted() == [1, 3])
    }

    enum Strict {
        struct Member: Model, Equatable, Sendable {
            var id: String; var nickname: String
            static var indexes: [ModelIndex<Member>] { [.unique(\.nickname)] }
        }
        struct Team: Model, Sendable { var id: String; var members: [Member] }
    }
    enum Relaxed {
        struct Member: Model, Equatable, Sendable {
            var id: String; var nickname: String?
            static var tableName: String { "Member" }
            static var indexes: [ModelIndex<Member>] { [.unique(\.nickname)] }
        }
        struct Team: Model, Sendable {
            var id: String; var members: [Member]
            static var tableName: String { "Team" }
        }
    }

    @Test("a property made optional drops NOT NULL: rows, links, the unique index and deletes' cascades all kept", arguments: await Backend.available)
    func propertyMadeOptional(_ backend: Backend) async throws {
        let db = try await backend.open()
        try await db.save(Strict.Team(id: "t", members: [Strict.Member(id: "a", nickname: "Ann"), Strict.Member(id: "b", nickname: "Bob")]))
        let anonymous = Relaxed.Member(id: "c", nickname: nil)
        try await db.save(anonymous)
        #expect(try await db.get(Relaxed.Member.self, id: "c") == anonymous)
        #expect(try await db.get(Relaxed.Member.self, id: "a") == Relaxed.Member(id: "a", nickname: "Ann"))
        #expect(try await db.get(Relaxed.Team.self, id: "t")?.members.map(\.id) == ["a", "b"])
        #expect(try await db.get(with: Filter(\Relaxed.Member.nickname, is: .equal(to: "Bob"))).map(\.id) == ["b"])
        let duplicate = await #expect(throws: (any Error).self) { try await db.save(Relaxed.Member(id: "d", nickname: "Ann")) }
        #expect(duplicate.flatMap { ModelError.Code(of: $0) } == .uniqueViolation, "the unique index is kept: \(String(describing: duplicate))")
        try await db.save(Relaxed.Member(id: "e", nickname: nil))
        #expect(try await db.count(Relaxed.Member.self) == 4)
        // The links still follow the rows: a deleted member leaves its team.
        _ = try await db.delete(Relaxed.Member(id: "a", nickname: "Ann"))
        #expect(try await db.get(Relaxed.Team.self, id: "t")?.members.map(\.id) == ["b"])
    }

    #if Macros
    @RowCodable
    #endif
    struct Account: UUIDModel, Equatable, Sendable { let id: UUID; var owner: String; var balance: Int }
    struct Refused: Error {}

    /// Written once against the public protocol, as an app would.
    static func transfer(_ amount: Int, from: UUID, to: UUID, in db: some ModelStore) async throws {
        try await db.inTransaction { tx in
            guard var source = try await tx.get(Account.self, id: from), var target = try await tx.get(Account.self, id: to) else {
                throw Refused()
            }
            source.balance -= amount
            target.balance += amount
            try await tx.save([source, target])
            if source.balance < 0 { throw Refused() }
        }
    }

    @Test("inTransaction { tx in } commits, rolls back, and nests as a savepoint", arguments: await Backend.available)
    func transactions(_ backend: Backend) async throws {
        let db = try await backend.open()
        let ann = Account(id: UUID(), owner: "Ann", balance: 100), bob = Account(id: UUID(), owner: "Bob", balance: 0)
        try await db.save([ann, bob])
        try await Self.transfer(30, from: ann.id, to: bob.id, in: db)
        await #expect(throws: Refused.self) { try await Self.transfer(500, from: ann.id, to: bob.id, in: db) }
        #expect(try await db.get(Account.self, id: ann.id)?.balance == 70)
        #expect(try await db.get(Account.self, id: bob.id)?.balance == 30)
        // A nested body that throws undoes only its own writes.
        let kept = try await db.inTransaction { tx in
            try await tx.save(Account(id: UUID(), owner: "Outer", balance: 1))
            await #expect(throws: Refused.self) {
                try await tx.inTransaction { inner in
                    try await inner.save(Account(id: UUID(), owner: "Inner", balance: 2))
                    throw Refused()
                }
            }
            return try await tx.count(Account.self)
        }
        #expect(kept == 3)
        #expect(try await db.get(with: Filter(\Account.owner, is: .equal(to: "Inner"))).isEmpty)
        #expect(try await db.count(Account.self) == 3)
    }
}
