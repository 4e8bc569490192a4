// Must type-check (the Macros trait): @RowCodable on the structs people write — optionals spelled
// three ways, a property without a written type, renamed and skipped keys, a generic struct, one
// with its own initializer, public types — and @RowDecodable / @RowEncodable alone.
import CodableSQLite
import Foundation

@RowCodable
struct Order: Codable {
    var id: Int64
    var customer: String?
    var placed: Optional<Date>
    var note: String!
    var count = 0
    let kind = "order"
    var total: Double { Double(count) }
}

@RowCodable
public struct Invoice: Codable, Sendable {
    public var number: Int
    public var lines: [String]
    var internalNote: String? = nil

    enum CodingKeys: String, CodingKey { case number = "invoice_no", lines }
}

@RowCodable
struct Page<Item: Codable>: Codable {
    var items: [Item]
    var `default`: Bool

    init(items: [Item]) {
        self.items = items
        self.default = false
    }
}

@RowDecodable
struct Total: Decodable { var customer: String; var amount: Double }

// @RowCodable on a type that is only Decodable generates decoding only.
@RowCodable
struct Summary: Decodable { var customer: String; var orders: Int }

@RowEncodable
struct NewOrder: Encodable { var customer: String; var amount: Double? }

@RowCodable
struct Tagged: Codable, Model { var id: Int64?; var tags: [String]; var size: Int32; var flag: Bool }

func use(_ db: SQLite.Database) throws {
    let decoder = SQLite.Decoder(db)
    let orders: [Order] = try decoder.decode([Order].self, using: "SELECT * FROM orders")
    let totals = try decoder.decode([Total].self, using: "SELECT customer, sum(amount) AS amount FROM orders GROUP BY customer")
    let summaries: [any RowDecodable] = try decoder.decode([Summary].self, using: "SELECT customer, count(*) AS orders FROM orders GROUP BY customer")
    try SQLite.Encoder(db).encode(NewOrder(customer: "a", amount: nil), using: "INSERT INTO orders (customer, amount) VALUES (:customer, :amount)")
    _ = try db.save(Tagged(id: nil, tags: [], size: 1, flag: true))
    let keys: [any CodingKey] = Invoice.rowCodingKeys + Page<Int>.rowCodingKeys
    print(orders.count, totals.count, summaries.count, keys.count)
}
