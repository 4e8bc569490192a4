import Foundation
import Testing
@testable import CodableSQLite

#if Macros
@RowCodable
#endif
private struct Scalars: Codable, Equatable {
    var bool: Bool
    var int: Int
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var int64: Int64
    var uint: UInt
    var uint8: UInt8
    var uint16: UInt16
    var uint32: UInt32
    var uint64: UInt64
    var float: Float
    var double: Double
    var string: String
    var data: Data
    var url: URL
    var uuid: UUID
    var decimal: Decimal
}

private enum Status: String, Codable { case open, closed }
private enum Level: Int, Codable { case low = 1, high = 2 }

@Suite("Coding: storage contract")
struct StorageContractTests {
    let db: SQLite.Database
    let encoder: SQLite.Encoder
    let decoder: SQLite.Decoder

    init() throws {
        db = try TestDatabases.memory()
        encoder = SQLite.Encoder(db)
        decoder = SQLite.Decoder(db)
    }

    private func roundTrip<T: Codable & Equatable>(_ value: T) throws -> (T?, [SQLiteRow]) {
        try db.execute(raw: "DROP TABLE IF EXISTS v; CREATE TABLE v (value)")
        try encoder.encode(value, using: "INSERT INTO v VALUES (?)")
        let back = try decoder.decode(T.self, using: "SELECT value FROM v")
        return (back, try db.read("SELECT value, typeof(value) AS type FROM v"))
    }

    private static let scalarColumns = "bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float, double, string, data, url, uuid, decimal"

    private func roundTripScalars(_ value: Scalars) throws -> Scalars? {
        try db.execute(raw: "DROP TABLE IF EXISTS s; CREATE TABLE s (\(Self.scalarColumns))")
        let parameters = Self.scalarColumns.split(separator: ",").map { ":" + $0.trimmingCharacters(in: .whitespaces) }
        try encoder.encode(value, using: "INSERT INTO s VALUES (\(parameters.joined(separator: ", ")))")
        return try decoder.decode(Scalars.self, using: "SELECT * FROM s")
    }

    @Test func everyScalarTypeRoundTripsAtItsExtremes() throws {
        let minimum = Scalars(
            bool: false, int: .min, int8: .min, int16: .min, int32: .min, int64: .min, uint: 0, uint8: 0, uint16: 0, uint32: 0,
            uint64: 0, float: -.greatestFiniteMagnitude, double: -.infinity, string: "", data: Data(),
            url: URL(string: "file:///")!, uuid: UUID(), decimal: Decimal(string: "-0.000000000000000000000000001")!)
        let maximum = Scalars(
            bool: true, int: .max, int8: .max, int16: .max, int32: .max, int64: .max, uint: UInt(Int64.max), uint8: .max,
            uint16: .max, uint32: .max, uint64: UInt64(Int64.max), float: .infinity, double: .greatestFiniteMagnitude,
            string: "emoji 🎉👩‍👩‍👧 and ünïcödé", data: Data((0..<1_048_576).map { UInt8(truncatingIfNeeded: $0) }),
            url: URL(string: "https://example.com/a%20b?q=1&r=%C3%A9#frag")!, uuid: UUID(),
            decimal: Decimal(string: "12345678901234567890.123456789")!)
        #expect(try roundTripScalars(minimum) == minimum)
        #expect(try roundTripScalars(maximum) == maximum)
    }

    @Test func storageClassesFollowTheContract() throws {
        let value = Scalars(
            bool: true, int: 1, int8: 1, int16: 1, int32: 1, int64: 1, uint: 1, uint8: 1, uint16: 1, uint32: 1, uint64: 1,
            float: 1.5, double: 2.5, string: "s", data: Data(), url: URL(string: "https://a.b")!,
            uuid: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, decimal: 3.25)
        _ = try roundTripScalars(value)
        let types = try db.read("SELECT typeof(bool) AS b, typeof(uint64) AS u, typeof(float) AS f, typeof(data) AS d, "
            + "typeof(url) AS l, uuid, decimal, bool AS boolValue FROM s")[0]
        #expect(types["b"] == .text("integer"))
        #expect(types["u"] == .text("integer"))
        #expect(types["f"] == .text("real"))
        #expect(types["d"] == .text("blob"))
        #expect(types["l"] == .text("text"))
        #expect(types["uuid"] == .text("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        #expect(types["decimal"] == .text("3.25"))
        #expect(types["boolValue"] == .integer(1))
    }

    @Test func uint64AboveInt64MaxIsAnEncodingErrorNotAWrap() throws {
        try db.execute(raw: "CREATE TABLE v (value)")
        let error = #expect(throws: EncodingError.self) { try encoder.encode(UInt64.max, using: "INSERT INTO v VALUES (?)") }
        if case .invalidValue(_, let context)? = error {
            #expect(context.debugDescription.contains("18446744073709551615"))
        }
        #expect(try db.read("SELECT count(*) AS n FROM v")[0]["n"] == .integer(0))
    }

    @Test func nanIsAnEncodingError() throws {
        try db.execute(raw: "CREATE TABLE v (value)")
        #expect(throws: EncodingError.self) { try encoder.encode(Double.nan, using: "INSERT INTO v VALUES (?)") }
        #expect(throws: EncodingError.self) { try encoder.encode(Float.nan, using: "INSERT INTO v VALUES (?)") }
    }

    @Test func nanDatesAreAnEncodingErrorWithEveryNumericStrategy() throws {
        try db.execute(raw: "CREATE TABLE v (value)")
        for strategy in [CodingStrategy.DateEncoding.secondsSince1970, .millisecondsSince1970, .deferredToDate, .iso8601] {
            let encoder = SQLite.Encoder(db)
            encoder.dateEncodingStrategy = strategy
            let error = #expect(throws: EncodingError.self) {
                try encoder.encode(Date(timeIntervalSinceReferenceDate: .nan), using: "INSERT INTO v VALUES (?)")
            }
            #expect(error.map { "\($0)" }?.contains("nan") == true)  // describing the error must not trap
        }
        let infinite = #expect(throws: EncodingError.self) {
            try encoder.encode(Date(timeIntervalSinceReferenceDate: .infinity), using: "INSERT INTO v VALUES (?)")
        }
        #expect(infinite.map { "\($0)" }?.contains("years 0 to 9999") == true)
        #expect(try db.read("SELECT count(*) AS n FROM v") == [["n": .integer(0)]])
    }

    @Test func decimalsReadFromNumericColumnsStayExact() throws {
        // NUMERIC affinity turns the encoder's exact text into REAL; reading it back keeps 19.99.
        try db.execute(raw: "CREATE TABLE prices (amount DECIMAL(10, 2))")
        try encoder.encode([Decimal(string: "19.99")!, 100, Decimal(string: "0.1")!], using: "INSERT INTO prices VALUES (?)")
        #expect(try db.read("SELECT typeof(amount) AS t FROM prices ORDER BY rowid").map { $0["t"] }
            == [.text("real"), .text("integer"), .text("real")])
        #expect(try decoder.decode([Decimal].self, using: "SELECT amount FROM prices ORDER BY rowid")
            == [Decimal(string: "19.99")!, 100, Decimal(string: "0.1")!])
    }

    @Test func infinityRoundTripsAsReal() throws {
        let (back, rows) = try roundTrip(-Double.infinity)
        #expect(back == -.infinity)
        #expect(rows[0]["type"] == .text("real"))
    }

    @Test func anyNonZeroIntegerDecodesTrue() throws {
        #expect(try decoder.decode([Bool].self, using: "SELECT column1 FROM (VALUES (0), (1), (-5), (2.5))") == [false, true, true, true])
    }

    @Test func emptyDataIsAZeroLengthBlob() throws {
        let (back, rows) = try roundTrip(Data())
        #expect(back == Data())
        #expect(rows == [["value": .data(Data()), "type": .text("blob")]])
    }

    @Test func uuidDecodesFromLowercaseTextAndSixteenByteBlobs() throws {
        let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        #expect(try decoder.decode(UUID.self, using: "SELECT 'e621e1f8-c36c-495a-93fc-0c247a3e6e5f'") == uuid)
        #expect(try decoder.decode(UUID.self, using: "SELECT x'E621E1F8C36C495A93FC0C247A3E6E5F'") == uuid)
    }

    @Test func enumsStoreTheirRawValueSoSQLComparesDirectly() throws {
        struct Ticket: Codable, Equatable { var id: Int; var status: Status; var level: Level }
        try db.execute(raw: "CREATE TABLE tickets (id, status, level)")
        try encoder.encode([Ticket(id: 1, status: .open, level: .high), Ticket(id: 2, status: .closed, level: .low)],
                           using: "INSERT INTO tickets VALUES (:id, :status, :level)")
        #expect(try db.read("SELECT id FROM tickets WHERE status = 'open' AND level = 2") == [["id": .integer(1)]])
        #expect(try db.read("SELECT typeof(status) AS s, typeof(level) AS l FROM tickets LIMIT 1") == [["s": .text("text"), "l": .text("integer")]])
        #expect(try decoder.decode([Ticket].self, using: "SELECT * FROM tickets ORDER BY id")
            == [Ticket(id: 1, status: .open, level: .high), Ticket(id: 2, status: .closed, level: .low)])
    }

    @Test func nilBindsNullWhetherSkippedOrEncodedAsNil() throws {
        struct Skips: Codable { var id: Int; var note: String? }
        struct EncodesNil: Encodable {
            var id: Int
            enum CodingKeys: CodingKey { case id, note }
            func encode(to encoder: any Swift.Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(id, forKey: .id)
                try container.encodeNil(forKey: .note)
            }
        }
        try db.execute(raw: "CREATE TABLE n (id PRIMARY KEY, note)")
        try db.write("INSERT INTO n VALUES (1, 'old'), (2, 'old')")
        try encoder.encode(Skips(id: 1, note: nil), using: "INSERT OR REPLACE INTO n VALUES (:id, :note)")
        try encoder.encode(EncodesNil(id: 2), using: "UPDATE n SET note = :note WHERE id = :id")
        #expect(try db.read("SELECT note FROM n ORDER BY id").map { $0["note"] } == [.null, .null])
    }

    @Test func parameterTheValueDoesNotProvideBindsNull() throws {
        struct OnlyID: Codable { var id: Int }
        try db.execute(raw: "CREATE TABLE n (id, note)")
        try encoder.encode(OnlyID(id: 1), using: "INSERT INTO n VALUES (:id, :note)")
        #expect(try db.read("SELECT note FROM n") == [["note": .null]])
    }

    @Test func propertyWithoutParameterIsAnErrorUnlessIgnored() throws {
        struct Extra: Codable { var id: Int; var secret: String }
        try db.execute(raw: "CREATE TABLE n (id)")
        let error = #expect(throws: EncodingError.self) { try encoder.encode(Extra(id: 1, secret: "s"), using: "INSERT INTO n VALUES (:id)") }
        if case .invalidValue(_, let context)? = error {
            #expect(context.codingPath.map(\.stringValue) == ["secret"])
            #expect(context.debugDescription.contains(":secret"))
            #expect(context.debugDescription.contains("INSERT INTO n VALUES (:id)"))
        } else {
            Issue.record("expected invalidValue, got \(String(describing: error))")
        }
        #expect(try db.read("SELECT count(*) AS n FROM n")[0]["n"] == .integer(0))
        encoder.ignoresUnusedProperties = true
        try encoder.encode(Extra(id: 1, secret: "s"), using: "INSERT INTO n VALUES (:id)")
        #expect(try db.read("SELECT id FROM n") == [["id": .integer(1)]])
    }

    @Test func missingColumnDecodesNilIntoOptionalAndFailsOtherwise() throws {
        struct Loose: Codable, Equatable { var id: Int; var note: String? }
        struct Strict: Codable { var id: Int; var note: String }
        #expect(try decoder.decode(Loose.self, using: "SELECT 1 AS id") == Loose(id: 1, note: nil))
        let error = #expect(throws: DecodingError.self) { try decoder.decode(Strict.self, using: "SELECT 1 AS id") }
        guard case .keyNotFound(let key, let context)? = error else { Issue.record("expected keyNotFound"); return }
        #expect(key.stringValue == "note")
        #expect(context.debugDescription.contains("SELECT 1 AS id"))
    }
}
