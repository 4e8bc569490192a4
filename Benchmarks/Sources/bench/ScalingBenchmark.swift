import Foundation

/// Scaling: scenarios A (insert in one transaction) and B (fetch all) at 10,000, 100,000 and
/// 1,000,000 rows on a WAL file, one run per size and contender: time per row and peak memory per
/// row during B, so a reader sees how cost grows with size (it should stay flat).
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
            for contender in contenders {
                let path = folder.appendingPathComponent("\(contender.name)-\(size).sqlite").path
                try autoreleasepool(invoking: {
                    let database = try contender.make(path)
                    let insert = try measureSeconds { try database.insert(items) }
                    var fetched: [Item] = []
                    let (fetch, peak) = try Memory.measuringPeakGrowth { fetched = try database.fetchAll() }
                    var checksum = Checksum()
                    checksum.add(fetched)
                    guard checksum == expected else {
                        throw BenchmarkError.verification("scaling \(contender.name) \(size): got \(checksum), expected \(expected)")
                    }
                    results[contender.name, default: [:]][size] = Measurement(
                        insertPerRow: insert / Double(size), fetchPerRow: fetch / Double(size),
                        peakBytesPerRow: peak.map { Double($0) * 1024 / Double(size) })
                })
                removeDatabaseFiles(path)
            }
        }
        return report(results)
    }

    private func report(_ results: [String: [Int: Measurement]]) -> String {
        guard let smallest = sizes.first, let largest = sizes.last else { return "" }
        var lines = ["", "Scaling: A and B on a WAL file, one run per size (µs per row; peak memory growth during B per row)"]
        let header = "  " + "contender".padding(toLength: 22, withPad: " ", startingAt: 0)
            + sizes.map { rightAligned("\($0) rows") }.joined()
            + "   \(largest)/\(smallest)"
        lines.append(header)
        for contender in contenders {
            guard let bySize = results[contender.name] else { continue }
            var insertLine = "  " + "\(contender.name) A".padding(toLength: 22, withPad: " ", startingAt: 0)
            var fetchLine = "  " + "\(contender.name) B".padding(toLength: 22, withPad: " ", startingAt: 0)
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
