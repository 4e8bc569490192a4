import CodableSQLite
import Foundation
import GRDB
import GRDBSQLite

/// K: the published Swift SQLite benchmark (Lighter's performance suite, quoted in the sqlite-data
/// README): fetch all 15,889 orders of the Northwind database into a struct of its 14 columns.
/// Contenders: hand-written C into the same struct (the baseline), CodableSQLite's plain
/// `SQLite.Decoder`, the same with the generated coder (@RowCodable), GRDB with a hand-written `init(row:)`, GRDB Codable. The database is
/// `../shared/data/northwind.db.gz` next to the repository (or `--northwind PATH`), unpacked into
/// the temporary folder at run time; without it the scenario says so and is skipped.
struct NorthwindBenchmark {
    let settings: Settings

    /// One row of `Orders`, its dates as the text the database holds.
    struct Order: Codable, Equatable, FetchableRecord {
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
    /// The same record with generated row coding (@RowCodable).
    @RowCodable
    struct GeneratedOrder: Codable, Equatable {
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

        var order: Order {
            Order(
                orderID: orderID, customerID: customerID, employeeID: employeeID, orderDate: orderDate, requiredDate: requiredDate,
                shippedDate: shippedDate, shipVia: shipVia, freight: freight, shipName: shipName, shipAddress: shipAddress,
                shipCity: shipCity, shipRegion: shipRegion, shipPostalCode: shipPostalCode, shipCountry: shipCountry)
        }
    }
    #endif

    /// GRDB's hand-written record: columns by position, as its documentation's fastest form.
    struct ManualOrder: FetchableRecord {
        var order: Order
        init(row: Row) throws {
            order = Order(
                orderID: row[0], customerID: row[1], employeeID: row[2], orderDate: row[3], requiredDate: row[4], shippedDate: row[5],
                shipVia: row[6], freight: row[7], shipName: row[8], shipAddress: row[9], shipCity: row[10], shipRegion: row[11],
                shipPostalCode: row[12], shipCountry: row[13])
        }
    }

    static let sql = """
        SELECT OrderID, CustomerID, EmployeeID, OrderDate, RequiredDate, ShippedDate, ShipVia, Freight, ShipName, ShipAddress, \
        ShipCity, ShipRegion, ShipPostalCode, ShipCountry FROM Orders ORDER BY OrderID
        """

    /// Where the packed database is: `--northwind PATH`, else `../shared/data/` beside the
    /// repository.
    var packedPath: String? {
        if let path = settings.northwindPath { return path }
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let path = repository.deletingLastPathComponent().appendingPathComponent("shared/data/northwind.db.gz").path
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    func run() throws -> String {
        guard let packed = packedPath else {
            return "\nK: northwind orders: skipped (no ../shared/data/northwind.db.gz beside the repository; --northwind PATH)"
        }
        let path = temporaryDatabasePath("northwind")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Self.unpack(packed, to: path)

        let repetitions = settings.rows >= 100_000 ? 50 : 10
        // `fetch` is timed; `orders` gives the same fetch's orders, to check (a conversion, untimed).
        var contenders: [(name: String, fetch: () throws -> Void, orders: () throws -> [Order])] = []
        func add(_ name: String, _ fetch: @escaping () throws -> [Order]) {
            contenders.append((name, { _ = try fetch() }, fetch))
        }
        var raw: OpaquePointer?
        guard sqlite3_open_v2(path, &raw, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let raw else {
            throw BenchmarkError.sqlite("cannot open \(path)")
        }
        defer { sqlite3_close_v2(raw) }
        let statement = try prepareStatement(Self.sql, on: raw)
        defer { sqlite3_finalize(statement) }
        add("raw C") { try Self.fetchC(statement) }
        let database = try SQLite.Database(path: path)
        let decoder = SQLite.Decoder(database)
        add("plain") { try decoder.decode([Order].self, using: Self.sql) }
        #if Generated
        contenders.append((
            "generated", { _ = try decoder.decode([GeneratedOrder].self, using: Self.sql) },
            { try decoder.decode([GeneratedOrder].self, using: Self.sql).map(\.order) }))
        #endif
        let queue = try DatabaseQueue(path: path)
        contenders.append((
            "GRDB manual", { _ = try queue.read { db in try ManualOrder.fetchAll(db, sql: Self.sql) } },
            { try queue.read { db in try ManualOrder.fetchAll(db, sql: Self.sql).map(\.order) } }))
        add("GRDB Codable") { try queue.read { db in try Order.fetchAll(db, sql: Self.sql) } }

        let expected = try contenders[0].orders()
        guard expected.count == 15_889 else { throw BenchmarkError.verification("K: \(expected.count) orders, not 15,889") }
        for contender in contenders where try contender.orders() != expected {
            throw BenchmarkError.verification("K \(contender.name): other orders")
        }
        // Repetitions interleaved (each contender once per round), so that the machine's drift
        // touches all alike; best and median, so that the noise shows.
        var times: [String: [Double]] = [:]
        for _ in 0..<repetitions {
            for contender in contenders { times[contender.name, default: []].append(try measureSeconds { try contender.fetch() }) }
        }
        let best = times.mapValues { $0.min() ?? .nan }
        let median = times.mapValues { values in values.sorted()[values.count / 2] }
        func ratio(_ name: String, _ of: [String: Double]) -> String {
            guard let time = of[name], let baseline = of["raw C"] else { return "n/a (built without the Generated trait)" }
            return String(format: "%.2fx", time / baseline)
        }
        var lines = ["", "K: northwind orders (15,889 rows, 14 columns; \(repetitions) rounds, contenders interleaved)",
                     "  contender          best         median"]
        for contender in contenders {
            lines.append("  " + contender.name.padding(toLength: 14, withPad: " ", startingAt: 0)
                + String(format: "%8.2f ms %@  %8.2f ms %@", (best[contender.name] ?? .nan) * 1000, ratio(contender.name, best),
                         (median[contender.name] ?? .nan) * 1000, ratio(contender.name, median)))
        }
        for (label, of) in [("best", best), ("median", median)] {
            lines.append("northwind orders vs raw C (\(label)): plain \(ratio("plain", of)), generated \(ratio("generated", of)), "
                + "GRDB manual \(ratio("GRDB manual", of)), GRDB Codable \(ratio("GRDB Codable", of))")
        }
        return lines.joined(separator: "\n")
    }

    /// Hand-written C: each column by position into the struct.
    static func fetchC(_ statement: OpaquePointer) throws -> [Order] {
        sqlite3_reset(statement)
        // String(cString:): measured faster here than String(decoding:) of sqlite3_column_bytes bytes.
        func text(_ column: Int32) -> String? {
            guard let bytes = sqlite3_column_text(statement, column) else { return nil }
            return String(cString: bytes)
        }
        func integer(_ column: Int32) -> Int64? {
            sqlite3_column_type(statement, column) == SQLITE_NULL ? nil : sqlite3_column_int64(statement, column)
        }
        var orders: [Order] = []
        orders.reserveCapacity(16_384)
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { break }
            guard step == SQLITE_ROW else { throw BenchmarkError.sqlite("step: \(step)") }
            orders.append(Order(
                orderID: sqlite3_column_int64(statement, 0), customerID: text(1), employeeID: integer(2), orderDate: text(3),
                requiredDate: text(4), shippedDate: text(5), shipVia: integer(6),
                freight: sqlite3_column_type(statement, 7) == SQLITE_NULL ? nil : sqlite3_column_double(statement, 7),
                shipName: text(8), shipAddress: text(9), shipCity: text(10), shipRegion: text(11), shipPostalCode: text(12),
                shipCountry: text(13)))
        }
        return orders
    }

    /// `gunzip -c packed > path`.
    static func unpack(_ packed: String, to path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil), let output = FileHandle(forWritingAtPath: path) else {
            throw BenchmarkError.verification("K: cannot create \(path)")
        }
        defer { try? output.close() }
        let gunzip = Process()
        gunzip.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        gunzip.arguments = ["gunzip", "-c", packed]
        gunzip.standardOutput = output
        try gunzip.run()
        gunzip.waitUntilExit()
        guard gunzip.terminationStatus == 0 else { throw BenchmarkError.verification("K: gunzip \(packed) failed") }
    }
}
