import Foundation
import Testing
@testable import CodableSQLite

/// The three places a value is stored — a column, inside a nested value's JSON, and as a filter
/// argument — follow the one contract of `StoredForm`.
@Suite("Coding: one storage contract for columns, JSON and filter values")
struct StoredFormTests {
    #if Macros
    @RowCodable
    #endif
    fileprivate struct Column<T: Codable>: Codable { var v: T }
    #if Macros
    @RowCodable
    #endif
    fileprivate struct Nested<T: Codable>: Codable { var inner: Column<T> }
    enum Status: String, Codable, Equatable { case open, done }

    /// How a value looks in a column, inside JSON (read back with `json_extract`), and as a filter
    /// argument; and the value each path decodes back to.
    private func paths<T: Codable & Equatable>(_ value: T) throws -> (column: SQLite.Value, json: SQLite.Value, filter: SQLite.Value) {
        let db = try TestDatabases.memory()
        try db.execute(raw: "CREATE TABLE t (v, inner)")
        try SQLite.Encoder(db).encode(Column(v: value), using: "INSERT INTO t (v) VALUES (:v)")
        try SQLite.Encoder(db).encode(Nested(inner: Column(v: value)), using: "UPDATE t SET inner = :inner")
        let row = try db.read("SELECT v, json_extract(inner, '$.v') AS json FROM t")[0]
        let filter = try ValueEncoder.value(for: value, at: .root, options: EncodingOptions())
        // Both stored forms decode back to the value.
        let decoder = SQLite.Decoder(db)
        #expect(try decoder.decode(Column<T>.self, using: "SELECT v FROM t")?.v == value)
        #expect(try decoder.decode(Nested<T>.self, using: "SELECT inner FROM t")?.inner.v == value)
        return (row["v"] ?? .null, row["json"] ?? .null, filter)
    }

    @Test func typesStoredAsTheirOwnValueAgreeEverywhere() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        let uuid = UUID()
        let url = URL(string: "https://example.com/a?b=c")!
        let cases: [(String, () throws -> (column: SQLite.Value, json: SQLite.Value, filter: SQLite.Value))] = [
            ("Date", { try paths(date) }),
            ("UUID", { try paths(uuid) }),
            ("URL", { try paths(url) }),
            ("String", { try paths("héllo") }),
            ("Int", { try paths(-42) }),
            ("Int64", { try paths(Int64.max) }),
            ("UInt8", { try paths(UInt8(200)) }),
            ("Double", { try paths(2.5) }),
            ("Float", { try paths(Float(0.5)) }),
            ("enum", { try paths(Status.done) }),
        ]
        for (name, make) in cases {
            let (column, json, filter) = try make()
            #expect(column == filter, "\(name): the filter argument differs from the column")
            #expect(column == json, "\(name): the JSON member differs from the column")
        }
        #expect(try paths(date).column == .text("2023-11-14 22:13:20.25"))
        #expect(try paths(uuid).column == .text(uuid.uuidString))
    }

    @Test func boolIsAnIntegerInColumnsAndABooleanInJSON() throws {
        let (column, json, filter) = try paths(true)
        #expect(column == .integer(1))
        #expect(filter == .integer(1))
        #expect(json == .integer(1))   // json_extract reads JSON true as 1, so SQL comparisons agree
    }

    @Test func dataIsABlobInColumnsAndBase64InJSON() throws {
        let bytes = Data([0, 1, 2, 250, 255])
        let (column, json, filter) = try paths(bytes)
        #expect(column == .data(bytes))
        #expect(filter == .data(bytes))
        #expect(json == .text(bytes.base64EncodedString()))   // JSON has no bytes
        #expect(try paths(Data()).column == .data(Data()))
    }

    @Test func decimalIsExactTextInColumnsAndANumberInJSON() throws {
        let price = Decimal(string: "19.99")!
        let (column, json, filter) = try paths(price)
        #expect(column == .text("19.99"))
        #expect(filter == .text("19.99"))
        #expect(json == .double(19.99))
    }

    @Test func everyDateStrategyAgreesBetweenColumnAndJSON() throws {
        let date = Date(timeIntervalSince1970: 86_400.5)
        let strategies: [(CodingStrategy.DateEncoding, CodingStrategy.DateDecoding, SQLite.Value)] = [
            (.iso8601, .iso8601, .text("1970-01-02 00:00:00.5")),
            (.secondsSince1970, .secondsSince1970, .double(86_400.5)),
            (.millisecondsSince1970, .millisecondsSince1970, .double(86_400_500)),
            (.deferredToDate, .deferredToDate, .double(date.timeIntervalSinceReferenceDate)),
            (.custom({ date, encoder in var c = encoder.singleValueContainer(); try c.encode("day \(Int(date.timeIntervalSince1970 / 86_400))") }),
             .custom({ _ in date }), .text("day 1")),
        ]
        for (encoding, decoding, expected) in strategies {
            let db = try TestDatabases.memory()
            try db.execute(raw: "CREATE TABLE t (v, inner)")
            let encoder = SQLite.Encoder(db)
            encoder.dateEncodingStrategy = encoding
            try encoder.encode(Column(v: date), using: "INSERT INTO t (v) VALUES (:v)")
            try encoder.encode(Nested(inner: Column(v: date)), using: "UPDATE t SET inner = :inner")
            let row = try db.read("SELECT v, json_extract(inner, '$.v') AS json FROM t")[0]
            #expect(row["v"] == expected)
            #expect(row["json"] == expected)
            let decoder = SQLite.Decoder(db)
            decoder.dateDecodingStrategy = decoding
            #expect(try decoder.decode(Column<Date>.self, using: "SELECT v FROM t")?.v == date)
            #expect(try decoder.decode(Nested<Date>.self, using: "SELECT inner FROM t")?.inner.v == date)
        }
    }

    @Test func modelColumnTypesComeFromTheContract() {
        #expect(StorageType.of(Date.self) == (.text, false))
        #expect(StorageType.of(UUID?.self) == (.text, true))
        #expect(StorageType.of(Data.self) == (.blob, false))
        #expect(StorageType.of(Decimal.self) == (.text, false))
        #expect(StorageType.of(Status.self) == (.text, false))
        #expect(StorageType.of(Bool.self) == (.integer, false))
        #expect(StorageType.of([String].self) == (.untyped, false))
        for type in [Date.self, UUID.self, URL.self, Data.self, Decimal.self] as [Any.Type] {
            #expect(StoredForm.isSpecial(type))
        }
        #expect(!StoredForm.isSpecial(String.self))
    }
}
