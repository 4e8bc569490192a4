import Foundation
import Testing
@testable import CodableSQLite

/// `ColumnForm`: a value's properties straight into columns, in the storage contract's stored form
/// (what CodablePostgres saves), and back from column texts.
@Suite("Coding: column form (properties into columns and back)")
struct ColumnFormTests {
    enum Status: String, Codable, Equatable { case open, done }
    #if Macros
    @RowCodable
    #endif
    struct Flat: Codable, Equatable {
        var id: Int64
        var title: String
        var note: String?
        var done: Bool
        var score: Double
        var status: Status
        var at: Date
        var tags: [String]
        var extras: [String: Int]
        var blob: Data
        var price: Decimal
    }

    static let flat = Flat(id: 7, title: "a \"b\"", note: nil, done: true, score: 0.1, status: .done,
                           at: Date(timeIntervalSince1970: 1_700_000_000.25), tags: ["x", "y"], extras: ["k": 1],
                           blob: Data([0, 255]), price: Decimal(string: "12.50")!)
    static let names = ["id", "title", "note", "done", "score", "status", "at", "tags", "extras", "blob", "price"]

    static func slots(json: Set<String> = ["tags", "extras"], skipping: Set<String> = []) -> [String: ColumnForm.Slot] {
        var slots: [String: ColumnForm.Slot] = [:]
        for (index, name) in names.enumerated() {
            slots[name] = skipping.contains(name) ? .skipped : .column(index, asJSON: json.contains(name))
        }
        return slots
    }

    @Test func propertiesTakeTheirStoredFormOrTheirJSON() throws {
        var row = [SQLite.Value?](repeating: nil, count: Self.names.count)
        #expect(try ColumnForm.encode(Self.flat, slots: Self.slots(), into: &row))
        #expect(row[0] == .integer(7))
        #expect(row[1] == .text("a \"b\""))
        #expect(row[2] == nil)   // a nil optional writes nothing
        #expect(row[3] == .integer(1))
        #expect(row[4] == .double(0.1))
        #expect(row[5] == .text("done"))
        #expect(row[6] == .text("2023-11-14 22:13:20.25"))
        #expect(row[7] == .text(#"["x","y"]"#))
        #expect(row[8] == .text(#"{"k":1}"#))
        #expect(row[9] == .data(Data([0, 255])))
        #expect(row[10] == .text("12.5"))
    }

    @Test func skippedPropertiesAreNotEncodedAndUnknownKeysAreNamed() throws {
        var row = [SQLite.Value?](repeating: nil, count: Self.names.count)
        #expect(try ColumnForm.encode(Self.flat, slots: Self.slots(skipping: ["tags"]), into: &row))
        #expect(row[7] == nil)
        var slots = Self.slots()
        slots["title"] = nil
        #expect {
            try ColumnForm.encode(Self.flat, slots: slots, into: &row)
        } throws: { ($0 as? ColumnForm.UnknownKey)?.name == "title" }
    }

    struct Shaped: Encodable {
        var id: Int
        var width: Int
        enum CodingKeys: String, CodingKey { case id, size }
        enum SizeKeys: String, CodingKey { case width }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            var size = container.nestedContainer(keyedBy: SizeKeys.self, forKey: .size)
            try size.encode(width, forKey: .width)
        }
    }

    @Test func valuesThatAreNotOneFlatKeyedContainerAreLeftToTheJSONForm() throws {
        var row = [SQLite.Value?](repeating: nil, count: 2)
        let slots: [String: ColumnForm.Slot] = ["id": .column(0, asJSON: false), "size": .column(1, asJSON: true)]
        #expect(try ColumnForm.encode(Shaped(id: 1, width: 2), slots: slots, into: &row) == false)
        #expect(try ColumnForm.encode([1, 2], slots: slots, into: &row) == false)
        #expect(try ColumnForm.encode(Date(), slots: slots, into: &row) == false)
        // An error inside a nested container is left to the JSON form too, which reports it with
        // its whole coding path (`size.width`), not as this encoder saw it.
        struct BadlyShaped: Encodable {
            enum CodingKeys: String, CodingKey { case id, size }
            enum SizeKeys: String, CodingKey { case width }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                var size = container.nestedContainer(keyedBy: SizeKeys.self, forKey: .size)
                try size.encode(Double.nan, forKey: .width)
            }
        }
        #expect(try ColumnForm.encode(BadlyShaped(), slots: slots, into: &row) == false)
        #expect(row.count == 2)
    }

    #if Macros
    @RowCodable
    #endif
    struct Numbers: Codable { var real: Double; var big: UInt64 }

    @Test func unstorableNumbersThrowWithTheirCodingPath() throws {
        let slots: [String: ColumnForm.Slot] = ["real": .column(0, asJSON: false), "big": .column(1, asJSON: false)]
        var row = [SQLite.Value?](repeating: nil, count: 2)
        for (value, key) in [(Numbers(real: .nan, big: 1), "real"), (Numbers(real: .infinity, big: 1), "real"), (Numbers(real: 1, big: .max), "big")] {
            #expect {
                try ColumnForm.encode(value, slots: slots, into: &row)
            } throws: { error in
                guard case EncodingError.invalidValue(_, let context) = error else { return false }
                return context.codingPath.map(\.stringValue) == [key]
            }
        }
    }

    /// The texts a PostgreSQL row of `Flat` holds, as members of its JSON form.
    static let storedRow: [ColumnForm.Member] = [
        .number("7"), .string("a \"b\""), .null, .bool(true), .number("0.1"), .string("done"),
        .string("2023-11-14 22:13:20.250000"), .json(#"["x", "y"]"#), .json(#"{"k": 1}"#), .string("AP8="), .number("12.50"),
    ]

    @Test func aReaderDecodesRowsOfColumnTexts() throws {
        let reader = ColumnForm.Reader(columns: Self.names, source: "the test")
        #expect(try reader.decode(Flat.self, row: Self.storedRow) == Self.flat)
        var other = Self.storedRow
        other[2] = .string("a note")
        other[7] = .json("[]")
        let decoded = try reader.decode(Flat.self, row: other)
        #expect(decoded.note == "a note" && decoded.tags == [])
    }

    @Test func aReaderNamesThePropertyAndColumnOfBadData() throws {
        let reader = ColumnForm.Reader(columns: Self.names, source: "the test")
        var wrongType = Self.storedRow
        wrongType[4] = .string("not a number")
        #expect {
            try reader.decode(Flat.self, row: wrongType)
        } throws: { error in
            guard case DecodingError.typeMismatch(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["score"] && context.debugDescription.contains("column \"score\"")
                && context.debugDescription.contains("the test")
        }
        var badJSON = Self.storedRow
        badJSON[8] = .json("{")
        #expect {
            try reader.decode(Flat.self, row: badJSON)
        } throws: { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["extras"]
        }
        #expect {
            try reader.decode(Flat.self, row: Array(Self.storedRow.dropLast()))
        } throws: { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return false }
            return context.debugDescription.contains("10 columns where 11")
        }
        let narrower = ColumnForm.Reader(columns: Array(Self.names.dropLast()), source: "the test")
        #expect {
            try narrower.decode(Flat.self, row: Array(Self.storedRow.dropLast()))
        } throws: { error in
            guard case DecodingError.keyNotFound(let key, _) = error else { return false }
            return key.stringValue == "price"
        }
    }
}
