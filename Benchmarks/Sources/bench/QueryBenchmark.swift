#if Fluent
import FluentBench
#endif
import Foundation

/// A contender of scenario H: filtered, sorted, paged queries through its own query API.
protocol QueryContender: AnyObject {
    /// Stores the items and the index the queries use, on (dueDate, priority). Not timed.
    func store(forQueries items: [Item]) throws
    /// Page `page` (0-based) of `QueryBenchmark.pageSize` items with priority > 2, by dueDate.
    func page(_ page: Int) throws -> [Item]
}

/// H: `lookups` queries `Filter(\.priority, is: .greater(than: 2)).sort(by: \.dueDate).limit(50, page: k)`
/// on `rows` items, pages 1 to 10 in a fixed random order (the pages an app shows), each contender
/// with the same index on (dueDate, priority). Every row has its own dueDate, so each page has one
/// right answer; the first query of each page is checked against it, every query's ids are summed.
struct QueryBenchmark {
    static let pageSize = 50
    static let pageCount = 10
    static let indexSQL = indexSQL(table: "item")
    static func indexSQL(table: String) -> String {
        "CREATE INDEX \(table)_dueDate_priority ON \(table) (dueDate, priority)"
    }

    static let pageSQL = "\(Item.selectAll.replacingOccurrences(of: " ORDER BY id", with: "")) WHERE priority > 2 ORDER BY dueDate LIMIT \(pageSize) OFFSET :offset"

    struct Kind: Sendable {
        let name: String
        let make: @Sendable (String) throws -> any QueryContender
    }

    static let contenders: [Kind] = [
        Kind(name: "limit") { try LimitC(path: $0) },
        Kind(name: "CodableSQLite") { try CodableSQLiteContender<Item>(path: $0) },
        Kind(name: "CodableSQLite models") { try CodableSQLiteModelsContender(path: $0) },
        Kind(name: "CodableSQLite #Predicate") { try CodableSQLitePredicateContender(path: $0) },
        Kind(name: "GRDB query interface") { try GRDBCodable(path: $0) },
    ] + fluent

    #if Fluent
    static let fluent = [Kind(name: "Fluent") { try FluentContender(path: $0) }]
    #else
    static let fluent: [Kind] = []
    #endif

    let settings: Settings

    /// The items of H: every row gets its own dueDate, a permutation of the ids a minute apart.
    static func items(count: Int) -> [Item] {
        Item.generate(count: count).map { item in
            var item = item
            let slot = (Int(item.id) &* 7_919) % count
            item.dueDate = Item.date(ms: 1_700_000_000_000 + Int64(slot) * 60_000)
            return item
        }
    }

    /// Runs H for each database kind and records the medians into `report`.
    func run(into report: inout Report) throws {
        let items = Self.items(count: settings.rows)
        let matching = items.filter { $0.priority > 2 }.sorted { ($0.dueDate ?? .distantPast) < ($1.dueDate ?? .distantPast) }
        let expectedPages = (0..<Self.pageCount).map { page in
            var checksum = Checksum()
            checksum.add(Array(matching.dropFirst(page * Self.pageSize).prefix(Self.pageSize)))
            return checksum
        }
        var random = SplitMix(seed: 99)
        let pages = (0..<settings.lookups).map { _ in Int(random.next() % UInt64(Self.pageCount)) }
        let expectedIDSum = pages.reduce(Int64(0)) { sum, page in
            matching.dropFirst(page * Self.pageSize).prefix(Self.pageSize).reduce(sum) { $0 &+ $1.id }
        }
        let selected = Self.contenders.filter { settings.contenderNames.isEmpty || settings.contenderNames.contains($0.name) }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("codablesqlite-bench-h-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        for kind in settings.kinds {
            var databases: [(name: String, contender: any QueryContender)] = []
            for contender in selected {
                let path = kind == .memory ? ":memory:" : folder.appendingPathComponent("\(contender.name).sqlite").path
                let database = try contender.make(path)
                try database.store(forQueries: items)
                for page in 0..<Self.pageCount {
                    var checksum = Checksum()
                    checksum.add(try database.page(page))
                    guard checksum == expectedPages[page] else {
                        throw BenchmarkError.verification("\(contender.name) H page \(page + 1): got \(checksum), expected \(expectedPages[page])")
                    }
                }
                databases.append((contender.name, database))
            }
            let repetitions = min(settings.repetitions, 3)
            for repetition in 0..<(1 + repetitions) {
                for index in databases.indices {
                    let (name, database) = databases[(index + repetition) % databases.count]
                    var idSum: Int64 = 0
                    let seconds = try measureSeconds {
                        for page in pages {
                            for item in try database.page(page) { idSum &+= item.id }
                        }
                    }
                    guard idSum == expectedIDSum else { throw BenchmarkError.verification("\(name) H: wrong rows") }
                    if repetition > 0 { report.add(seconds, Runner.Key(kind: kind, scenario: .queries, contender: name)) }
                }
            }
        }
        print("H done")
    }
}

extension LimitC: QueryContender {}
extension CodableSQLiteContender: QueryContender where Record == Item {}
extension CodableSQLiteModelsContender: QueryContender {}
extension CodableSQLitePredicateContender: QueryContender {}
extension GRDBCodable: QueryContender {}
