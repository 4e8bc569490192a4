import Foundation
import Testing
import CodableModels
@testable import CodableSQLite

#if Macros
@RowCodable
#endif
private struct Event: Codable, Equatable {
    var id: Int
    var at: Date
}

@Suite("Coding: dates")
struct DateCodingTests {
    let db: SQLite.Database
    let encoder: SQLite.Encoder
    let decoder: SQLite.Decoder

    init() throws {
        db = try TestDatabases.memory()
        try db.execute(raw: "CREATE TABLE events (id INTEGER PRIMARY KEY, at)")
        encoder = SQLite.Encoder(db)
        decoder = SQLite.Decoder(db)
    }

    @Test func defaultStorageIsSortableUTCText() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        try encoder.encode(Event(id: 1, at: date), using: "INSERT INTO events VALUES (:id, :at)")
        #expect(try db.read("SELECT at, typeof(at) AS type FROM events") == [["at": .text("2023-11-14 22:13:20.25"), "type": .text("text")]])
        try db.write("DELETE FROM events")
        try encoder.encode(Event(id: 2, at: Date(timeIntervalSince1970: 0)), using: "INSERT INTO events VALUES (:id, :at)")
        #expect(try db.read("SELECT at FROM events") == [["at": .text("1970-01-01 00:00:00")]])
    }

    @Test func randomDatesInYearsOneToNineThousandNineHundredNinetyNineRoundTripExactly() throws {
        var generator = SystemRandomNumberGenerator()
        let earliest = DateText.earliestSeconds + 366 * 86_400  // year 1
        let latest = DateText.endSeconds - 1
        var dates: [Date] = [Date(), .distantPast, .distantFuture, Date(timeIntervalSinceReferenceDate: 0),
                             Date(timeIntervalSinceReferenceDate: 1e-20), Date(timeIntervalSinceReferenceDate: -1e-20),
                             Date(timeIntervalSinceReferenceDate: -0.3), Date(timeIntervalSinceReferenceDate: Double(latest) + 0.999)]
        for _ in 0..<5000 {
            dates.append(Date(timeIntervalSinceReferenceDate: Double.random(in: Double(earliest)...Double(latest), using: &generator)))
            // Dates near now with microsecond noise, the common case.
            dates.append(Date(timeIntervalSinceNow: Double.random(in: -1e9...1e9, using: &generator)))
        }
        let events = dates.enumerated().map { Event(id: $0.offset, at: $0.element) }
        try encoder.encode(events, using: "INSERT INTO events VALUES (:id, :at)")
        let back = try decoder.decode([Event].self, using: "SELECT * FROM events ORDER BY id")
        #expect(back.count == events.count)
        let mismatches = zip(back, events).filter { $0 != $1 }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(3))")
    }

    @Test func textOrderIsChronologicalOrder() throws {
        var generator = SystemRandomNumberGenerator()
        let dates = (0..<2000).map { _ in Date(timeIntervalSinceReferenceDate: Double.random(in: -6e10...2.5e11, using: &generator)) }
            + [Date(timeIntervalSinceReferenceDate: 10), Date(timeIntervalSinceReferenceDate: 10.5), Date(timeIntervalSinceReferenceDate: 10.25)]
        try encoder.encode(dates.enumerated().map { Event(id: $0.offset, at: $0.element) }, using: "INSERT INTO events VALUES (:id, :at)")
        let sortedBySQL = try decoder.decode([Date].self, using: "SELECT at FROM events ORDER BY at")
        #expect(sortedBySQL == dates.sorted())
    }

    @Test func sqliteDateFunctionsReadTheText() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000.125)
        try encoder.encode(Event(id: 1, at: date), using: "INSERT INTO events VALUES (:id, :at)")
        let row = try db.read("""
            SELECT strftime('%Y', at) AS year, date(at) AS day, unixepoch(at) AS seconds,
                   julianday(at) = julianday('2023-11-14 22:13:20.125') AS same,
                   at < datetime('now') AS past, at = datetime(at, '+0 seconds') AS exactSecond
            FROM events
            """)[0]
        #expect(row["year"] == .text("2023"))
        #expect(row["day"] == .text("2023-11-14"))
        #expect(row["seconds"] == .integer(1_700_000_000))
        #expect(row["same"] == .integer(1))
        #expect(row["past"] == .integer(1))
    }

    @Test func comparesWithDatetimeNow() throws {
        try encoder.encode([Event(id: 1, at: Date(timeIntervalSinceNow: -60)), Event(id: 2, at: Date(timeIntervalSinceNow: 3600))],
                           using: "INSERT INTO events VALUES (:id, :at)")
        #expect(try db.read("SELECT id FROM events WHERE at < datetime('now')") == [["id": .integer(1)]])
    }

    @Test func decodesEveryFormatSQLiteAccepts() throws {
        let cases: [(String, Double)] = [
            ("'2023-11-14'", 1_699_920_000),
            ("'2023-11-14 22:13'", 1_700_000_000 - 20),
            ("'2023-11-14 22:13:20'", 1_700_000_000),
            ("'2023-11-14 22:13:20.5'", 1_700_000_000.5),
            ("'2023-11-14 22:13:20.123456789'", 1_700_000_000.123456789),
            ("'2023-11-14T22:13:20'", 1_700_000_000),
            ("'2023-11-14T22:13:20Z'", 1_700_000_000),
            ("'2023-11-14T22:13:20.000Z'", 1_700_000_000),
            ("'2023-11-15T00:13:20+02:00'", 1_700_000_000),
            ("'2023-11-14T16:43:20-05:30'", 1_700_000_000),
            ("'2023-11-14 22:13:20 +0000'", 1_700_000_000),
            ("'22:13:20'", 946_764_800),
            ("1700000000", 1_700_000_000),
            ("1700000000.5", 1_700_000_000.5),
        ]
        for (literal, expected) in cases {
            let date = try decoder.decode(Date.self, using: "SELECT \(literal)")
            #expect(date.map { abs($0.timeIntervalSince1970 - expected) < 1e-6 } == true, "\(literal) → \(String(describing: date))")
        }
    }

    @Test func malformedDateTextIsDataCorrupted() throws {
        // The second line: near misses of the form this library writes.
        for text in ["2023-13-01", "2023-11-14 25:00", "yesterday", "2023-11-14T", "", "2023-11-14 22:13:20.", "12/14/2023",
                     "2023-11-14 22:13:2x", "2023-11-14 22:60:00", "2023-00-14 22:13:20", "2023-11-32 22:13:20",
                     "2023-11-14 24:00:00", "2023-11-14 22:13:60", "2023-11-14 22:13:20.5x", "2023-11-14 22:13:20x", "2O23-11-14 22:13:20"] {
            try db.write("DELETE FROM events")
            try db.write("INSERT INTO events VALUES (1, ?)", arguments: [.text(text)])
            let error = #expect(throws: DecodingError.self) { try decoder.decode(Event.self, using: "SELECT * FROM events") }
            guard case .dataCorrupted(let context)? = error else { Issue.record("expected dataCorrupted for \(text)"); continue }
            #expect(context.codingPath.map(\.stringValue) == ["at"])
            #expect(context.debugDescription.contains("column \"at\""))
        }
    }

    @Test func otherDateStrategiesRoundTripBothWays() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000.5)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "dd/MM/yyyy HH:mm:ss.SSS"
        let strategies: [(CodingStrategy.DateEncoding, CodingStrategy.DateDecoding, SQLite.Value)] = [
            (.secondsSince1970, .secondsSince1970, .double(1_700_000_000.5)),
            (.millisecondsSince1970, .millisecondsSince1970, .double(1_700_000_000_500)),
            (.deferredToDate, .deferredToDate, .double(date.timeIntervalSinceReferenceDate)),
            (.formatted(formatter), .formatted(formatter), .text("14/11/2023 22:13:20.500")),
            (.custom { date, encoder in
                var container = encoder.singleValueContainer()
                try container.encode(Int64(date.timeIntervalSince1970 * 1000))
            }, .custom { decoder in
                Date(timeIntervalSince1970: Double(try decoder.singleValueContainer().decode(Int64.self)) / 1000)
            }, .integer(1_700_000_000_500)),
        ]
        for (encoding, decoding, stored) in strategies {
            try db.write("DELETE FROM events")
            encoder.dateEncodingStrategy = encoding
            decoder.dateDecodingStrategy = decoding
            try encoder.encode(Event(id: 1, at: date), using: "INSERT INTO events VALUES (:id, :at)")
            #expect(try db.read("SELECT at FROM events")[0]["at"] == stored)
            #expect(try decoder.decode(Event.self, using: "SELECT * FROM events")?.at == date)
        }
    }

    @Test func datesOutsideYearsZeroToNineThousandNineHundredNinetyNineAreEncodingErrors() throws {
        let far = Date(timeIntervalSinceReferenceDate: 4e11)
        #expect(throws: EncodingError.self) { try encoder.encode(Event(id: 1, at: far), using: "INSERT INTO events VALUES (:id, :at)") }
        encoder.dateEncodingStrategy = .secondsSince1970
        try encoder.encode(Event(id: 1, at: far), using: "INSERT INTO events VALUES (:id, :at)")
        decoder.dateDecodingStrategy = .secondsSince1970
        #expect(try decoder.decode(Event.self, using: "SELECT * FROM events")?.at == far)
    }

    @Test("a date's text at the nearest microsecond rounds its decimals, carrying into the next second")
    func microsecondText() {
        #expect(DateText.microsecondText("2063-06-09 03:39:28.5235834") == "2063-06-09 03:39:28.523583")
        #expect(DateText.microsecondText("2063-06-09 03:39:28.5235836") == "2063-06-09 03:39:28.523584")
        #expect(DateText.microsecondText("2063-06-09 03:39:28.0000005") == "2063-06-09 03:39:28.000001")
        #expect(DateText.microsecondText("2063-06-09 03:39:28.0000004") == "2063-06-09 03:39:28.000000")
        #expect(DateText.microsecondText("1999-12-31 23:59:59.9999996") == "2000-01-01 00:00:00")
        #expect(DateText.microsecondText("2063-06-09 03:39:28.123") == "2063-06-09 03:39:28.123")
        #expect(DateText.microsecondText("2063-06-09 03:39:28") == "2063-06-09 03:39:28")
        // The issue's pair: a microsecond apart, and so they stay.
        let pair = [1_700_000_000.000001, 1_700_000_000.000002].map { DateText.format(Date(timeIntervalSince1970: $0)).map(DateText.microsecondText) }
        #expect(pair == ["2023-11-14 22:13:20.000001", "2023-11-14 22:13:20.000002"])
    }

    /// Whole milliseconds take a shorter path when formatted: its text must be the general path's
    /// (whole seconds, then the shortest decimal's fraction digits), in every year and sign.
    @Test func millisecondDatesFormatAsTheGeneralPathDoes() throws {
        var random = SystemRandomNumberGenerator()
        let earliest = DateText.earliestSeconds * 1000, end = DateText.endSeconds * 1000
        var intervals: [Double] = [0, -0.001, 0.001, -0.5, 0.12, 1.1, -1.001, 978_307_200.123, Double(earliest) / 1000, Double(end - 1) / 1000]
        for _ in 0..<20_000 {
            intervals.append(Double(Int64.random(in: earliest..<end, using: &random)) / 1000)                 // whole milliseconds
            intervals.append(Double(Int64.random(in: -4_000_000_000_000..<4_000_000_000_000, using: &random)) / 1_000_000)  // microseconds: the general path
        }
        for interval in intervals {
            let (whole, fraction) = try #require(DateText.split(interval))
            let seconds = try #require(DateText.format(Date(timeIntervalSinceReferenceDate: Double(whole))))
            let expected = fraction.isEmpty ? seconds : seconds + "." + String(decoding: fraction, as: UTF8.self)
            let text = DateText.format(Date(timeIntervalSinceReferenceDate: interval))
            #expect(text == expected, "\(interval)")
            if text != expected { break }
        }
    }

    /// PostgreSQL's binary timestamps (microseconds from 2000-01-01) give the `Date` their text
    /// `YYYY-MM-DD HH:MM:SS.ffffff` parses to: near today (one division) and far from it (the
    /// exact decimal path), and nothing outside years 0–9999.
    @Test func binaryTimestampsGiveTheDateTheirTextParsesTo() throws {
        var random = SystemRandomNumberGenerator()
        let offset: Int64 = 366 * 86_400 * 1_000_000  // 2000-01-01 to the reference date
        let earliest = DateText.earliestSeconds * 1_000_000 + offset, end = DateText.endSeconds * 1_000_000 + offset
        var samples: [Int64] = [0, 1, -1, 999_999, -1_000_000, earliest, end - 1, offset, offset - 1]
        for _ in 0..<20_000 {
            samples.append(Int64.random(in: earliest..<end, using: &random))
            samples.append(Int64.random(in: -9_000_000_000_000_000..<9_000_000_000_000_000, using: &random) / 1_000)  // ±285 years
        }
        for microseconds in samples {
            let whole = (microseconds - offset).quotientAndRemainder(dividingBy: 1_000_000)
            let (seconds, fraction) = whole.remainder < 0 ? (whole.quotient - 1, whole.remainder + 1_000_000) : whole
            let day = try #require(DateText.format(Date(timeIntervalSinceReferenceDate: Double(seconds))))
            let digits = String(fraction), text = day + "." + String(repeating: "0", count: 6 - digits.count) + digits
            let parsed = Array(text.utf8).withUnsafeBufferPointer { DateText.parse($0) }
            #expect(DateText.date(microsecondsSince2000: microseconds) == parsed, "\(microseconds) (\(text))")
            if DateText.date(microsecondsSince2000: microseconds) != parsed { break }
        }
        for outside in [earliest - 1, end, Int64.max, Int64.min] {
            #expect(DateText.date(microsecondsSince2000: outside) == nil, "\(outside)")
        }
    }
}
