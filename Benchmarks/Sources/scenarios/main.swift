import CodableSQLite
import Foundation
import GRDBSQLite

// `scenarios`: one scenario per process, on an in-memory database, with the synchronous API, for
// counting instructions with callgrind (repeatable here, unlike times) when comparing two commits:
//
//     swift build -c release --package-path Benchmarks --product scenarios
//     valgrind --tool=callgrind --callgrind-out-file=out.G Benchmarks/.build/release/scenarios G-graph
//     grep '^summary:' out.G
//
// Build it at each commit (a clone per commit) and compare the totals; BENCHMARKS.md has the last
// comparison. Scenarios: A-encoder, A-models, A-models-assigned, B-models, C-models, C-decoder,
// C-missing (ids that are not there), D-models, F-filter, G-graph, K-raw, K-plain and K-generated (the
// Northwind orders; NORTHWIND=path of the unpacked database), T-commits; C-models-file and C-decoder-file on a WAL file.

/// A deterministic spread of `index` (a multiplicative hash): the same data in every run.
func spread(_ index: Int, _ salt: UInt64) -> UInt64 {
    let mixed = (UInt64(index) &+ salt) &* 0x9E37_79B9_7F4A_7C15
    return mixed ^ (mixed >> 29)
}

struct Item: Codable, Model {
    var id: Int
    var title: String
    var priority: Int
    var dueDate: Date
    var done: Bool
    var notes: String?
}

struct ItemA: Codable, Model {
    var id: Int64?
    var title: String
    var priority: Int
    var dueDate: Date
    var done: Bool
    var notes: String?
}

/// The Northwind order of BENCHMARKS.md's K, plain and generated.
struct Order: Codable {
    var orderID: Int64
    var customerID: String?
    var employeeID: Int64?
    var orderDate: String?
    var requiredDate: String?
    var shippedDate: String?
    var shipVia: Int64?
    var freight: Double?
    var shipName: String?
    var shipAddress: String?
    var shipCity: String?
    var shipRegion: String?
    var shipPostalCode: String?
    var shipCountry: String?

    enum CodingKeys: String, CodingKey {
        case orderID = "OrderID", customerID = "CustomerID", employeeID = "EmployeeID", orderDate = "OrderDate"
        case requiredDate = "RequiredDate", shippedDate = "ShippedDate", shipVia = "ShipVia", freight = "Freight"
        case shipName = "ShipName", shipAddress = "ShipAddress", shipCity = "ShipCity", shipRegion = "ShipRegion"
        case shipPostalCode = "ShipPostalCode", shipCountry = "ShipCountry"
    }
}

#if Generated
@RowCodable
struct GeneratedOrder: Codable {
    var orderID: Int64
    var customerID: String?
    var employeeID: Int64?
    var orderDate: String?
    var requiredDate: String?
    var shippedDate: String?
    var shipVia: Int64?
    var freight: Double?
    var shipName: String?
    var shipAddress: String?
    var shipCity: String?
    var shipRegion: String?
    var shipPostalCode: String?
    var shipCountry: String?

    enum CodingKeys: String, CodingKey {
        case orderID = "OrderID", customerID = "CustomerID", employeeID = "EmployeeID", orderDate = "OrderDate"
        case requiredDate = "RequiredDate", shippedDate = "ShippedDate", shipVia = "ShipVia", freight = "Freight"
        case shipName = "ShipName", shipAddress = "ShipAddress", shipCity = "ShipCity", shipRegion = "ShipRegion"
        case shipPostalCode = "ShipPostalCode", shipCountry = "ShipCountry"
    }
}
#endif

struct Studio: Codable, Model { var id: Int64?; var name: String }
struct Actor: Codable, Model { var id: String; var name: String }
struct Movie: Codable, UUIDModel {
    let id: UUID
    var title: String
    var studio: Studio?
    var cast: [Actor]
}

func items(_ count: Int) -> [Item] {
    (0..<count).map { i in
        Item(
            id: i + 1, title: "Task \(i)", priority: Int(spread(i, 1) % 5),
            dueDate: Date(timeIntervalSince1970: 1_700_000_000 + Double(spread(i, 2) % 10_000_000)),
            done: spread(i, 3) % 2 == 0,
            notes: spread(i, 4) % 3 == 0 ? nil : "A note about task \(i)")
    }
}

func movies(_ count: Int) -> [Movie] {
    (0..<count).map { n in
        let studio = n % 4 == 0 ? nil : Studio(id: Int64(n % 100 + 1), name: "Studio \(n % 100)")
        let cast = (0..<5).map { k in
            let a = spread(n * 5 + k, 5) % UInt64(count * 2)
            return Actor(id: "actor\(a)", name: "Actor \(a)")
        }
        let id = withUnsafeBytes(of: (spread(n, 6), spread(n, 7))) { raw in
            UUID(uuid: (raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                        raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]))
        }
        return Movie(id: id, title: "Movie \(n)", studio: studio, cast: cast)
    }
}

func check(_ ok: Bool, _ message: @autoclosure () -> String) {
    if !ok {
        FileHandle.standardError.write(Data("FAILED: \(message())\n".utf8))
        exit(1)
    }
}

let n = 10_000
let scenario = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : ""
/// How many times the C scenarios look every item up (a second argument; 1 by default), so that a
/// sampling profiler (`perf record`) sees mostly lookups.
let passes = CommandLine.arguments.count > 2 ? max(1, Int(CommandLine.arguments[2]) ?? 1) : 1
/// The `-file` scenarios use a WAL database file in the temporary folder; the others `:memory:`.
let onFile = scenario.hasSuffix("-file")
let filePath = FileManager.default.temporaryDirectory.appendingPathComponent("scenarios-\(UUID().uuidString).sqlite").path
let db = try SQLite.Database(path: onFile ? filePath : ":memory:")
defer { if onFile { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: filePath + suffix) } } }

switch scenario {
case "A-encoder":
    try db.execute(raw: "CREATE TABLE items (id INTEGER PRIMARY KEY, title TEXT, priority INTEGER, dueDate TEXT, done INTEGER, notes TEXT)")
    try SQLite.Encoder(db).encode(items(n), using: "INSERT INTO items VALUES (:id, :title, :priority, :dueDate, :done, :notes)")
    print("A-encoder: \(n) rows")

case "A-models":
    try db.save(items(n))
    print("A-models: \(n) saved")

case "A-models-assigned":
    let values = items(n).map { ItemA(id: nil, title: $0.title, priority: $0.priority, dueDate: $0.dueDate, done: $0.done, notes: $0.notes) }
    let saved = try db.save(values)
    check(saved.count == n && saved.allSatisfy { $0.id != nil }, "ids not assigned")
    print("A-models-assigned: \(saved.count) saved, last id \(saved.last?.id ?? -1)")

case "B-models":
    try db.save(items(n))
    let all = try db.get(Item.self)
    check(all.count == n, "B got \(all.count)")
    print("B-models: \(all.count) read")

case "C-models", "C-models-file":
    try db.save(items(n))
    var found = 0
    for _ in 0..<passes {
        for id in 1...n {
            if try db.get(Item.self, id: id) != nil { found += 1 }
        }
    }
    check(found == n * passes, "C found \(found)")
    print("C-models: \(found) found")

case "C-missing":
    try db.save(items(n))
    var missing = 0
    for id in (n + 1)...(2 * n) {
        if try db.get(Item.self, id: id) == nil { missing += 1 }
    }
    check(missing == n, "C-missing found \(n - missing)")
    print("C-missing: \(missing) not found")

case "C-decoder", "C-decoder-file":
    try db.save(items(n))
    let decoder = SQLite.Decoder(db)
    var found = 0
    for _ in 0..<passes {
        for id in 1...n {
            if try decoder.decode(Item.self, using: "SELECT * FROM Item WHERE id = :id", arguments: ["id": .integer(Int64(id))]) != nil { found += 1 }
        }
    }
    check(found == n * passes, "C found \(found)")
    print("C-decoder: \(found) found")

case "D-models":
    let values = items(n)
    try db.save(values)
    let edited = values.map { item in
        var item = item
        item.title += " (edited)"
        item.done.toggle()
        item.priority = (item.priority + 1) % 5
        return item
    }
    try db.save(edited)
    print("D-models: \(edited.count) updated")

case "F-filter":
    try db.save(items(n))
    var total = 0
    for _ in 0..<2_000 {
        total += try db.get(with: Filter(\Item.priority, is: .greater(than: 2)).sort(by: \.dueDate).limit(50)).count
    }
    check(total == 2_000 * 50, "F total \(total)")
    print("F-filter: \(total) rows")

case "G-graph":
    let data = movies(2_000)
    try db.save(data)
    let loaded = try db.get(Movie.self)
    check(loaded.count == data.count && loaded.allSatisfy { $0.cast.count == 5 }, "G loaded \(loaded.count)")
    print("G-graph: \(loaded.count) movies")

case "K-raw":
    // K's baseline: hand-written C into the same struct.
    guard let path = ProcessInfo.processInfo.environment["NORTHWIND"] else { exit(2) }
    var handle: OpaquePointer?
    guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let handle else { exit(1) }
    var prepared: OpaquePointer?
    sqlite3_prepare_v2(handle, "SELECT OrderID, CustomerID, EmployeeID, OrderDate, RequiredDate, ShippedDate, ShipVia, Freight, ShipName, ShipAddress, ShipCity, ShipRegion, ShipPostalCode, ShipCountry FROM Orders ORDER BY OrderID", -1, &prepared, nil)
    guard let statement = prepared else { exit(1) }
    func text(_ column: Int32) -> String? {
        guard let bytes = sqlite3_column_text(statement, column) else { return nil }
        return String(cString: bytes)
    }
    func integer(_ column: Int32) -> Int64? {
        sqlite3_column_type(statement, column) == SQLITE_NULL ? nil : sqlite3_column_int64(statement, column)
    }
    var orders: [Order] = []
    orders.reserveCapacity(16_384)
    while sqlite3_step(statement) == SQLITE_ROW {
        orders.append(Order(
            orderID: sqlite3_column_int64(statement, 0), customerID: text(1), employeeID: integer(2), orderDate: text(3),
            requiredDate: text(4), shippedDate: text(5), shipVia: integer(6),
            freight: sqlite3_column_type(statement, 7) == SQLITE_NULL ? nil : sqlite3_column_double(statement, 7),
            shipName: text(8), shipAddress: text(9), shipCity: text(10), shipRegion: text(11), shipPostalCode: text(12),
            shipCountry: text(13)))
    }
    sqlite3_finalize(statement)
    sqlite3_close_v2(handle)
    print("K-raw: \(orders.count) orders")

case "K-plain", "K-generated":
    // The Northwind orders (BENCHMARKS.md, K) from the database unpacked at the path in NORTHWIND.
    guard let path = ProcessInfo.processInfo.environment["NORTHWIND"] else {
        FileHandle.standardError.write(Data("K: set NORTHWIND to an unpacked northwind.db\n".utf8))
        exit(2)
    }
    let northwind = try SQLite.Database(path: path)
    let sql: String = "SELECT OrderID, CustomerID, EmployeeID, OrderDate, RequiredDate, ShippedDate, ShipVia, Freight, ShipName, ShipAddress, ShipCity, ShipRegion, ShipPostalCode, ShipCountry FROM Orders ORDER BY OrderID"
    let decoder = SQLite.Decoder(northwind)
    #if Generated
    let count = scenario == "K-plain" ? try decoder.decode([Order].self, using: sql).count : try decoder.decode([GeneratedOrder].self, using: sql).count
    #else
    guard scenario == "K-plain" else {
        FileHandle.standardError.write(Data("K-generated: built without the Generated trait\n".utf8))
        exit(2)
    }
    let count = try decoder.decode([Order].self, using: sql).count
    #endif
    check(count == 15_889, "K read \(count)")
    print("\(scenario): \(count) orders")

case "T-commits":
    for item in items(5_000) {
        try db.save(item)
    }
    print("T-commits: 5000 saves")

default:
    FileHandle.standardError.write(Data("usage: scenarios A-encoder|A-models|A-models-assigned|B-models|C-models[-file]|C-decoder[-file]|C-missing|D-models|F-filter|G-graph|K-raw|K-plain|K-generated|T-commits\n".utf8))
    exit(2)
}
