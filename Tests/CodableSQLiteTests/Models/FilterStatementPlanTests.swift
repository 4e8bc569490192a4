import Foundation
import Testing
@testable import CodableSQLite

// How a count and a delete keep to a filter's order and page, decided once in CodableModels
// (`Filter.countSQL`, `Filter.deleteCondition`) for both engines, shown here in SQLite's dialect.

private struct Reader: Model {
    var id: Int64
    var name: String
    var age: Int
    static var tableName: String { "plan_readers" }
}

private let table = SQLName.quoted(Reader.tableName)
private let adults = Filter(\Reader.age, is: .greater(than: 17))

/// The statement and its arguments, as SQLite gets them.
private func count(_ filter: Filter<Reader>) throws -> (sql: String, arguments: [SQLite.Value]) {
    var dialect = SQLiteDialect()
    let sql = try filter.countSQL(table: table, in: &dialect)
    return (sql, dialect.arguments)
}

private func deleteCondition(_ filter: Filter<Reader>) throws -> (sql: String, arguments: [SQLite.Value]) {
    var dialect = SQLiteDialect()
    let sql = try filter.deleteCondition(table: table, id: "\"id\"", in: &dialect)
    return (sql, dialect.arguments)
}

@Suite("Plans: counts and deletes within a filter's order and page")
struct FilterStatementPlanTests {
    @Test("A count without a page counts the condition on the table, leaving the order out")
    func countWithoutPage() throws {
        let (sql, arguments) = try count(adults.sort(by: \.name))
        #expect(sql.hasPrefix("SELECT count(*) FROM \(table) WHERE "))
        #expect(!sql.contains("ORDER BY") && !sql.contains("LIMIT"))
        #expect(arguments == [.integer(17)])
    }

    @Test("A count with a page counts that page's rows: the condition's arguments, then the limit and offset")
    func countWithinPage() throws {
        let (sql, arguments) = try count(adults.sort(by: \.name).limit(10, page: 3))
        #expect(sql.hasPrefix("SELECT count(*) FROM (SELECT 1 FROM \(table) WHERE "))
        #expect(sql.hasSuffix(" LIMIT ? OFFSET ?) AS page"))
        #expect(!sql.contains("ORDER BY"))
        #expect(arguments == [.integer(17), .integer(10), .integer(20)])
    }

    @Test("A delete without an order or a page deletes by the condition itself")
    func deleteByCondition() throws {
        let (sql, arguments) = try deleteCondition(adults)
        #expect(sql.hasPrefix(" WHERE ") && !sql.contains("IN (SELECT"))
        #expect(arguments == [.integer(17)])
        #expect(try deleteCondition(Filter<Reader>()).sql == "")
    }

    @Test("A delete with an order or a page deletes the rows a read of the filter returns, by id")
    func deleteWithinOrderAndPage() throws {
        let (sql, arguments) = try deleteCondition(adults.sort(by: \.name, ascending: false).limit(5))
        #expect(sql.hasPrefix(" WHERE \"id\" IN (SELECT \"id\" FROM \(table) WHERE "))
        #expect(sql.contains(" ORDER BY ") && sql.hasSuffix(" LIMIT ? OFFSET ?)"))
        #expect(arguments == [.integer(17), .integer(5), .integer(0)])
        #expect(try deleteCondition(Filter<Reader>().sort(by: \.age)).sql.hasPrefix(" WHERE \"id\" IN (SELECT \"id\" FROM \(table) ORDER BY "))
    }

    @Test("A filter that cannot be read is refused before any statement")
    func invalidFilterRefused() throws {
        let error = #expect(throws: ModelError.self) { try count(Filter<Reader>().limit(-1)) }
        #expect(error?.code == .invalidFilter)
    }
}
