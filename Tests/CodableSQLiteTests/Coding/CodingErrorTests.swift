import Foundation
import Testing
import CodableModels
@testable import CodableSQLite

#if Macros
@RowCodable
#endif
private struct Member: Codable, Equatable {
    var id: Int
    var name: String
    var age: Int
    var tags: [Int]
}

@Suite("Coding: errors name the path, the column, the type found and the SQL")
struct CodingErrorTests {
    let db: SQLite.Database
    let decoder: SQLite.Decoder

    init() throws {
        db = try TestDatabases.memory()
        try db.execute(raw: """
            CREATE TABLE people (id, name, age, tags);
            INSERT INTO people VALUES (1, 'a', 30, '[1, 2]'), (2, 'b', 40, '[3]'), (3, 'c', 50, '[]'),
                                      (4, 'd', 'old', '[1, "two", 3]');
            """)
        decoder = SQLite.Decoder(db)
    }

    private func contextOf(_ error: DecodingError?) -> DecodingError.Context? {
        switch error {
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?, .keyNotFound(_, let context)?, .dataCorrupted(let context)?:
            return context
        default:
            return nil
        }
    }

    @Test func typeMismatchInAnArrayNamesTheRowIndexAndColumn() throws {
        let sql = "SELECT id, name, age, tags FROM people WHERE id IN (1, 4) ORDER BY id"
        let error = #expect(throws: DecodingError.self) { try decoder.decode([Member].self, using: sql) }
        guard case .typeMismatch(let type, let context)? = error else { Issue.record("expected typeMismatch"); return }
        #expect(ObjectIdentifier(type) == ObjectIdentifier(Int.self))
        #expect(context.codingPath.map(\.intValue) == [1, nil])
        #expect(context.codingPath.last?.stringValue == "age")
        #expect(context.debugDescription == "Expected to decode Int but found a TEXT value instead (column \"age\"; SQL: \(sql)).")
    }

    @Test func typeMismatchInsideJSONHasTheFullPath() throws {
        let error = #expect(throws: DecodingError.self) {
            try decoder.decode(Member.self, using: "SELECT id, name, 1 AS age, tags FROM people WHERE id = 4")
        }
        guard case .typeMismatch(_, let context)? = error else { Issue.record("expected typeMismatch"); return }
        #expect(context.codingPath.map(\.stringValue) == ["tags", "Index 1"])
        #expect(context.debugDescription.contains("Expected to decode Int but found a string instead"))
        #expect(context.debugDescription.contains("JSON in column \"tags\""))
    }

    @Test func nullForANonOptionalIsValueNotFound() throws {
        let error = #expect(throws: DecodingError.self) {
            try decoder.decode(Member.self, using: "SELECT 1 AS id, NULL AS name, 2 AS age, '[]' AS tags")
        }
        guard case .valueNotFound(let type, let context)? = error else { Issue.record("expected valueNotFound"); return }
        #expect(ObjectIdentifier(type) == ObjectIdentifier(String.self))
        #expect(context.codingPath.map(\.stringValue) == ["name"])
        #expect(context.debugDescription.hasPrefix("Expected String but found NULL instead (column \"name\""))
    }

    @Test func missingColumnIsKeyNotFoundListingTheColumns() throws {
        let error = #expect(throws: DecodingError.self) { try decoder.decode(Member.self, using: "SELECT id, name FROM people WHERE id = 1") }
        guard case .keyNotFound(let key, let context)? = error else { Issue.record("expected keyNotFound"); return }
        #expect(key.stringValue == "age")
        #expect(context.debugDescription.contains("columns: id, name"))
    }

    @Test func numberThatDoesNotFitIsDataCorrupted() throws {
        struct Small: Decodable { var value: Int8 }
        let error = #expect(throws: DecodingError.self) { try decoder.decode(Small.self, using: "SELECT 300 AS value") }
        guard case .dataCorrupted(let context)? = error else { Issue.record("expected dataCorrupted"); return }
        #expect(context.debugDescription.hasPrefix("Parsed number <300> does not fit in Int8"))
        let fraction = #expect(throws: DecodingError.self) { try decoder.decode(Small.self, using: "SELECT 1.5 AS value") }
        #expect(contextOf(fraction) != nil)
    }

    @Test func malformedUUIDURLAndDecimalAreDataCorruptedNotDefaults() throws {
        struct Values: Decodable { var uuid: UUID?; var url: URL?; var decimal: Decimal? }
        for (column, text) in [("uuid", "not-a-uuid"), ("url", ""), ("decimal", "12abc"), ("decimal", "1e+"), ("decimal", "1e-"),
                               ("decimal", "1e999"), ("uuid", "E621E1F8-C36C-495A-93FC-0C247A3E6E5")] {
            let sql = "SELECT ? AS \(column)"
            let error = #expect(throws: DecodingError.self) { try decoder.decode(Values.self, using: sql, arguments: [.text(text)]) }
            guard case .dataCorrupted(let context)? = error else { Issue.record("expected dataCorrupted for \(column)"); continue }
            #expect(context.codingPath.map(\.stringValue) == [column])
        }
        let blob = #expect(throws: DecodingError.self) { try decoder.decode(UUID.self, using: "SELECT x'0102'") }
        #expect(contextOf(blob)?.debugDescription.contains("16 bytes") == true)
    }

    /// The UUID parser reads 8-4-4-4-12 hexadecimal digits of either case between dashes, and
    /// refuses every near miss: each byte position replaced by each kind of wrong byte. (Foundation's
    /// `UUID(uuidString:)` on Linux is no oracle: it reads "G" and "/" as digits.)
    @Test func uuidTextParsesEitherCaseAndRefusesNearMisses() throws {
        let text = Array("E621e1F8-c36C-495A-93fc-0C247A3E6E5F".utf8)
        var cases: [[UInt8]] = [text, Array(text.dropLast()), text + [UInt8(ascii: "0")], Array(text.map { $0 == UInt8(ascii: "-") ? UInt8(ascii: "0") : $0 })]
        for position in text.indices {
            for byte in [UInt8(ascii: "g"), UInt8(ascii: "G"), UInt8(ascii: "-"), UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "@"),
                         UInt8(ascii: "`"), UInt8(ascii: " "), 0, 0xC3, UInt8(ascii: "0")] {
                var changed = text
                changed[position] = byte
                cases.append(changed)
            }
        }
        for bytes in cases {
            let parsed = bytes.withUnsafeBufferPointer { ValueParsing.uuid($0) }
            let expected = Self.referenceUUID(bytes)
            #expect(parsed == expected, "\(String(decoding: bytes, as: UTF8.self))")
        }
        #expect(text.withUnsafeBufferPointer { ValueParsing.uuid($0) } == UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
    }

    /// The plain reading of a UUID's text, digit pair by digit pair.
    private static func referenceUUID(_ bytes: [UInt8]) -> UUID? {
        guard bytes.count == 36, [8, 13, 18, 23].allSatisfy({ bytes[$0] == UInt8(ascii: "-") }) else { return nil }
        let digits = bytes.enumerated().filter { ![8, 13, 18, 23].contains($0.offset) }.map(\.element)
        guard digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0 | 0x20) })
        else { return nil }
        var value: [UInt8] = []
        for pair in stride(from: 0, to: 32, by: 2) {
            guard let byte = UInt8(String(decoding: digits[pair...pair + 1], as: UTF8.self), radix: 16) else { return nil }
            value.append(byte)
        }
        return value.withUnsafeBytes { UUID(uuid: $0.load(as: uuid_t.self)) }
    }

    @Test func infiniteRealIsNotADate() throws {
        for strategy in [CodingStrategy.DateDecoding.iso8601, .secondsSince1970, .millisecondsSince1970, .deferredToDate] {
            let decoder = SQLite.Decoder(db)
            decoder.dateDecodingStrategy = strategy
            let error = #expect(throws: DecodingError.self) { try decoder.decode(Date.self, using: "SELECT -1e999") }
            #expect(contextOf(error)?.debugDescription.contains("not a point in time") == true)
        }
    }

    @Test func infiniteRealIsNotADecimal() throws {
        for sql in ["SELECT 1e999", "SELECT -1e999"] {
            let error = #expect(throws: DecodingError.self) { try decoder.decode(Decimal.self, using: sql) }
            #expect(contextOf(error)?.debugDescription.contains("does not fit in a Decimal") == true)
        }
        #expect(try decoder.decode(Int.self, using: "SELECT count(*) FROM people") != nil)
    }

    @Test func moreThanOneRowForASingleValueIsAnError() throws {
        let error = #expect(throws: DecodingError.self) { try decoder.decode(Int.self, using: "SELECT id FROM people") }
        guard case .typeMismatch(_, let context)? = error else { Issue.record("expected typeMismatch"); return }
        #expect(context.debugDescription.contains("several rows"))
        #expect(try decoder.decode(Int.self, using: "SELECT id FROM people WHERE id = 99") == nil)
    }

    @Test func databaseStaysUsableAfterDecodingErrors() throws {
        _ = try? decoder.decode([Member].self, using: "SELECT * FROM people")
        #expect(try decoder.decode([Member].self, using: "SELECT * FROM people WHERE id < 4 ORDER BY id").count == 3)
        try db.write("INSERT INTO people VALUES (5, 'e', 1, '[]')")
        #expect(try decoder.decode(Int.self, using: "SELECT count(*) FROM people") == 5)
    }

    @Test func decodingErrorsDoNotLeakReadTransactions() throws {
        let file = try TestDatabases.file()
        try file.execute(raw: "CREATE TABLE t (x); INSERT INTO t VALUES ('text')")
        let fileDecoder = SQLite.Decoder(file)
        #expect(throws: DecodingError.self) { try fileDecoder.decode([Int].self, using: "SELECT x FROM t") }
        try file.write("INSERT INTO t VALUES (2)")
        #expect(try fileDecoder.decode(Int.self, using: "SELECT count(*) FROM t") == 2)
    }
}

@Suite("Coding: arrays are one transaction")
struct ArrayEncodingTests {
    #if Macros
    @RowCodable
    #endif
    struct Row: Codable, Equatable { var id: Int; var value: UInt64 }

    @Test func constraintFailureRollsBackEverythingAndNamesTheElement() throws {
        for db in try TestDatabases.both() {
            try db.execute(raw: "CREATE TABLE r (id INTEGER PRIMARY KEY, value); INSERT INTO r VALUES (10, 0)")
            let encoder = SQLite.Encoder(db)
            let error = #expect(throws: SQLite.Error.self) {
                try encoder.encode([Row(id: 1, value: 1), Row(id: 10, value: 2), Row(id: 3, value: 3)], using: "INSERT INTO r VALUES (:id, :value)")
            }
            #expect(error?.code == .constraint)
            #expect(error?.elementIndex == 1)
            #expect(error?.description.contains("array element 1") == true)
            #expect(try db.read("SELECT id FROM r") == [["id": .integer(10)]])
        }
    }

    @Test func encodingFailureRollsBackEverythingWithTheIndexInThePath() throws {
        let db = try TestDatabases.file()
        try db.execute(raw: "CREATE TABLE r (id INTEGER PRIMARY KEY, value)")
        let encoder = SQLite.Encoder(db)
        let error = #expect(throws: EncodingError.self) {
            try encoder.encode([Row(id: 1, value: 1), Row(id: 2, value: 2), Row(id: 3, value: .max)], using: "INSERT INTO r VALUES (:id, :value)")
        }
        guard case .invalidValue(_, let context)? = error else { Issue.record("expected invalidValue"); return }
        #expect(context.codingPath.map(\.intValue) == [2, nil])
        #expect(context.codingPath.last?.stringValue == "value")
        #expect(try db.read("SELECT count(*) AS n FROM r")[0]["n"] == .integer(0))
    }

    @Test func valuesBeyondThePositionalParametersNameTheirIndex() throws {
        struct Triple: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.unkeyedContainer()
                try container.encode(1)
                try container.encode("two")
                try container.encode(3.5)
            }
        }
        let db = try TestDatabases.memory()
        try db.execute(raw: "CREATE TABLE pair (a, b)")
        let error = #expect(throws: EncodingError.self) { try SQLite.Encoder(db).encode(Triple(), using: "INSERT INTO pair VALUES (?, ?)") }
        guard case .invalidValue(let value, let context)? = error else { Issue.record("expected invalidValue"); return }
        #expect(value as? Double == 3.5)
        #expect(context.codingPath.map(\.intValue) == [2])
        #expect(context.debugDescription.contains("2 parameter(s)"))
        #expect(try db.read("SELECT count(*) AS n FROM pair")[0]["n"] == .integer(0))
    }

    @Test func genericallyTypedArraysAreWrittenRowByRow() throws {
        func save<T: Encodable>(_ value: T, with encoder: SQLite.Encoder) throws {
            try encoder.encode(value, using: "INSERT INTO r VALUES (:id, :value)")
        }
        let db = try TestDatabases.memory()
        try db.execute(raw: "CREATE TABLE r (id INTEGER PRIMARY KEY, value)")
        try save([Row(id: 1, value: 1), Row(id: 2, value: 2)], with: SQLite.Encoder(db))
        #expect(try SQLite.Decoder(db).decode([Row].self, using: "SELECT * FROM r ORDER BY id") == [Row(id: 1, value: 1), Row(id: 2, value: 2)])
    }

    @Test func emptyArrayWritesNothingButStillChecksTheSQL() throws {
        let db = try TestDatabases.memory()
        try db.execute(raw: "CREATE TABLE r (id)")
        try SQLite.Encoder(db).encode([Row](), using: "INSERT INTO r VALUES (:id)")
        #expect(throws: SQLite.Error.self) { try SQLite.Encoder(db).encode([Row](), using: "INSERT INTO nope VALUES (:id)") }
    }

    @Test func arrayInsideAnOuterTransactionIsASavepoint() throws {
        struct Stop: Error {}
        let db = try TestDatabases.memory()
        try db.execute(raw: "CREATE TABLE r (id INTEGER PRIMARY KEY, value)")
        let encoder = SQLite.Encoder(db)
        #expect(throws: Stop.self) {
            try db.inTransaction { _ in
                try encoder.encode([Row(id: 1, value: 1)], using: "INSERT INTO r VALUES (:id, :value)")
                throw Stop()
            }
        }
        #expect(try db.read("SELECT count(*) AS n FROM r")[0]["n"] == .integer(0))
    }
}
