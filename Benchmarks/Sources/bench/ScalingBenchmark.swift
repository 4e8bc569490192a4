import Foundation

/// Scaling: scenarios A (insert in one transaction) and B (fetch all) at 10,000, 100,000 and
/// 1,000,000 rows on a WAL file: time per row and peak memory per row during B, so a reader sees
/// how cost grows with size (it should stay flat). Each size runs as many times as it takes to
/// insert 3,000,000 rows, at least 2 and at most 20 (20 runs of 10,000 and of 100,000, 3 of 1,000,000),
/// contenders interleaved, and keeps each contender's fastest run: small sizes would otherwise
/// measure warm-up (page faults, first allocations) rather than cost per row.
///
///   swift run -c release --package-path Benchmarks bench --scaling
struct ScalingBenchmark {
    let sizes: [Int]
    let contenders: [ContenderKind]

    init(settings: Settings, contenders: [ContenderKind]) {
        sizes = settings.rows < 100_000 ? [1_000, 10_000, 100_000] : [10_000, 100_000, 1_000_000]
        let names: Set<String> = ["limit", "raw C with Foundation", "CodableSQLite", "CodableSQLite models", "GRDB Codable"]
        self.contenders = contenders.filter { names.contains($0.name) }
    }

    struct Measurement {
        var insertPerRow: Double
        var fetchPerRow: Double
        var peakBytesPerRow: Double?

        /// The fastest insert and fetch of two runs, with the peak memory of the faster fetch.
        func fastest(with other: Measurement) -> Measurement {
            Measurement(insertPerRow: min(insertPerRow, other.insertPerRow), fetchPerRow: min(fetchPerRow, other.fetchPerRow),
                        peakBytesPerRow: fetchPerRow <= other.fetchPerRow ? peakBytesPerRow : other.peakBytesPerRow)
        }
    }

    func run() throws -> String {
        var results: [String: [Int: Measurement]] = [:]
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("codablesqlite-scaling-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for size in sizes {
            let items = Item.generate(count: size)
            var expected = Checksum()
            expected.add(items)
            for _ in 0..<max(2, min(20, 3 * sizes[sizes.count - 1] / size)) {
                for contender in contenders {
                    let path = folder.appendingPathComponent("\(contender.name)-\(size).sqlite").path
                    try autoreleasepool(invoking: {
                        let (insert, fetch, peak, checksum) = try Self.insertAndFetch(try contender.make(path), items)
                        guard checksum == expected else {
                            throw BenchmarkError.verification("scaling \(contender.name) \(size): got \(checksum), expected \(expected)")
                        }
                        let measurement = Measurement(
                            insertPerRow: insert / Double(size), fetchPerRow: fetch / Double(size),
                            peakBytesPerRow: peak.map { Double($0) * 1024 / Double(size) })
                        results[contender.name, default: [:]][size] = results[contender.name]?[size].map { $0.fastest(with: measurement) } ?? measurement
                    })
                    removeDatabaseFiles(path)
                }
            }
        }
        return report(results)
    }

    /// A and B on one contender's database; the records are made from the items before the timings.
    private static func insertAndFetch<C: Contender>(_ database: C, _ items: [Item]) throws -> (Double, Double, Int?, Checksum) {
        let records = items.map(C.Fetched.init)
        let insert = try measureSeconds { try database.insert(records) }
        var fetched: [C.Fetched] = []
        let (fetch, peak) = try Memory.measuringPeakGrowth { fetched = try database.fetchAll() }
        var checksum = Checksum()
        checksum.add(fetched)
        return (insert, fetch, peak, checksum)
    }

    private func report(_ results: [String: [Int: Measurement]]) -> String {
        guard let smallest = sizes.first, let largest = sizes.last else { return "" }
        var lines = ["", "Scaling: A and B on a WAL file, fastest of several runs per size (µs per row; peak memory growth during B per row)"]
        let width = (contenders.map(\.name.count).max() ?? 20) + 4
        let header = "  " + "contender".padding(toLength: width, withPad: " ", startingAt: 0)
            + sizes.map { rightAligned("\($0) rows") }.joined()
            + "   \(largest)/\(smallest)"
        lines.append(header)
        for contender in contenders {
            guard let bySize = results[contender.name] else { continue }
            var insertLine = "  " + "\(contender.name) A".padding(toLength: width, withPad: " ", startingAt: 0)
            var fetchLine = "  " + "\(contender.name) B".padding(toLength: width, withPad: " ", startingAt: 0)
            for size in sizes {
                let measurement = bySize[size]
                insertLine += rightAligned(String(format: "%.2f µs", (measurement?.insertPerRow ?? 0) * 1e6))
                let peak = measurement?.peakBytesPerRow.map { String(format: ", %.0f B", $0) } ?? ""
                fetchLine += rightAligned(String(format: "%.2f µs", (measurement?.fetchPerRow ?? 0) * 1e6) + peak)
            }
            if let small = bySize[smallest], let large = bySize[largest] {
                insertLine += String(format: "   %.2fx", large.insertPerRow / small.insertPerRow)
                fetchLine += String(format: "   %.2fx", large.fetchPerRow / small.fetchPerRow)
            }
            lines += [insertLine, fetchLine]
        }
        return lines.joined(separator: "\n")
    }

    private func rightAligned(_ text: String, width: Int = 24) -> String {
        String(repeating: " ", count: max(2, width - text.count)) + text
    }
}
