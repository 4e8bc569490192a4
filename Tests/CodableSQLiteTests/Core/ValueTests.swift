import Foundation
import Testing
@testable import CodableSQLite

@Suite("Core: SQLite.Value")
struct ValueTests {
    @Test func accessorsMatchOnlyTheirCase() {
        let integer = SQLite.Value.integer(42)
        #expect(integer.intValue == 42)
        #expect(integer.int64Value == 42)
        #expect(integer.doubleValue == nil)
        #expect(integer.stringValue == nil)
        #expect(integer.dataValue == nil)
        #expect(SQLite.Value.double(1.5).doubleValue == 1.5)
        #expect(SQLite.Value.text("a").stringValue == "a")
        #expect(SQLite.Value.data(Data([1])).dataValue == Data([1]))
        #expect(SQLite.Value.null.isNull)
        #expect(SQLite.Value.text("1").intValue == nil)
    }

    @Test func boolValueIsTrueForAnyNonZeroInteger() {
        #expect(SQLite.Value.integer(0).boolValue == false)
        #expect(SQLite.Value.integer(1).boolValue == true)
        #expect(SQLite.Value.integer(-7).boolValue == true)
        #expect(SQLite.Value.text("true").boolValue == nil)
    }

    @Test func literals() {
        let values: [SQLite.Value] = [nil, 1, 2.5, "x", true, false]
        #expect(values == [.null, .integer(1), .double(2.5), .text("x"), .integer(1), .integer(0)])
    }

    @Test func descriptionIsAnSQLLiteral() {
        #expect(SQLite.Value.text("it's").description == "'it''s'")
        #expect(SQLite.Value.data(Data([0x01, 0xAB])).description == "x'01ab'")
        #expect(SQLite.Value.null.description == "NULL")
        #expect(SQLite.Value.integer(-3).description == "-3")
    }

    @Test func storageClassNames() {
        #expect([SQLite.Value.null, 1, 1.0, "", .data(Data())].map(\.storageClass) == ["NULL", "INTEGER", "REAL", "TEXT", "BLOB"])
    }

    @Test func resultCodesKnowTheirFamily() {
        #expect(SQLite.ResultCode.constraintUnique.primary == .constraint)
        #expect(SQLite.ResultCode.constraintUnique.isExtended)
        #expect(!SQLite.ResultCode.constraint.isExtended)
        #expect(SQLite.ResultCode(rawValue: 19) == .constraint)
    }
}
