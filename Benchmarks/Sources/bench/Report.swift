import Foundation
import GRDBSQLite

/// Times and memory per contender, printed as a table ending with CodableSQLite's worst ratio.
struct Report: CustomStringConvertible {
    let settings: Settings
    let contenders: [ContenderKind]
    var times: [Runner.Key: [Double]] = [:]
    /// Peak resident memory growth during B on the file database, in kB, per repetition.
    var peaks: [String: [Int]] = [:]

    init(settings: Settings, contenders: [ContenderKind]) {
        self.settings = settings
        self.contenders = contenders
    }

    mutating func add(_ seconds: Double, _ key: Runner.Key) {
        times[key, default: []].append(seconds)
    }

    fileprivate func median<T: Comparable>(_ values: [T]) -> T? {
        let sorted = values.sorted()
        return sorted.isEmpty ? nil : sorted[sorted.count / 2]
    }

    fileprivate var baseline: String { contenders.first(where: \.isBaseline)?.name ?? "raw C with Foundation" }
    fileprivate var limit: String? { contenders.first(where: \.isLimit)?.name }
    private var ours: String { contenders.first(where: \.isOurs)?.name ?? "CodableSQLite" }
    private var models: String? { contenders.first(where: \.isModels)?.name }
    private var generated: String? { contenders.first(where: \.isGenerated)?.name }
    /// Every contender with results, in the order they are listed (H adds "GRDB query interface").
    fileprivate var names: [String] {
        var names = contenders.map(\.name)
        for kind in QueryBenchmark.contenders where !names.contains(kind.name) { names.append(kind.name) }
        return names.filter { name in times.keys.contains { $0.contender == name } || peaks[name] != nil }
    }

    fileprivate func ratio(_ key: Runner.Key, to reference: String? = nil) -> Double? {
        let baselineKey = Runner.Key(kind: key.kind, scenario: key.scenario, contender: reference ?? baseline)
        guard let value = times[key].flatMap(median), let reference = times[baselineKey].flatMap(median), reference > 0 else { return nil }
        return value / reference
    }

    var description: String {
        var lines: [String] = []
        lines.append("")
        lines.append("CodableSQLite benchmarks: \(settings.rows.formatted()) items, \(settings.lookups.formatted()) lookups, "
            + "\(settings.repetitions) measured repetitions after \(settings.warmups) warm-up, contenders interleaved")
        lines.append("machine: \(Machine.description); SQLite \(String(cString: sqlite3_libversion()))")
        let nameWidth = max(20, names.map(\.count).max() ?? 0)
        for kind in settings.kinds {
            lines.append("")
            lines.append(kind == .file ? "file database (WAL, synchronous=NORMAL)" : "in-memory database (:memory:)")
            lines.append("  " + "contender".padding(toLength: nameWidth, withPad: " ", startingAt: 0)
                + "        min     median   vs raw C  vs limit")
            for scenario in Scenario.allCases {
                guard names.contains(where: { times[Runner.Key(kind: kind, scenario: scenario, contender: $0)] != nil }) else { continue }
                lines.append(scenario.title(settings))
                for name in names {
                    let key = Runner.Key(kind: kind, scenario: scenario, contender: name)
                    guard let values = times[key], let minimum = values.min(), let middle = median(values) else { continue }
                    let ratioText = (ratio(key).map { String(format: "%8.2fx", $0) } ?? "         ")
                        + (limit.flatMap { ratio(key, to: $0) }.map { String(format: "%9.2fx", $0) } ?? "")
                    lines.append("  " + name.padding(toLength: nameWidth, withPad: " ", startingAt: 0)
                        + String(format: " %9.3fs %9.3fs", minimum, middle) + ratioText)
                }
            }
        }
        if let reference = peaks[baseline].flatMap(median), reference > 0 {
            lines.append("")
            lines.append("peak memory growth during B (file database), median:")
            for name in names {
                guard let peak = peaks[name].flatMap(median) else { continue }
                let change = Double(peak - reference) / Double(reference) * 100
                let limitPeak = limit.flatMap { peaks[$0] }.flatMap(median)
                let versusLimit = limitPeak.map { String(format: "   %.2fx the limit", Double(peak) / Double(max($0, 1))) } ?? ""
                lines.append("  " + name.padding(toLength: nameWidth, withPad: " ", startingAt: 0)
                    + String(format: " %8.1f MB  %+6.1f%% vs raw C", Double(peak) / 1024, change) + versusLimit)
            }
        }
        if let models {
            lines.append("")
            lines.append("E: the model API (\(models)) vs the Encoder/Decoder path (\(ours)), medians:")
            for kind in settings.kinds {
                for scenario in Scenario.allCases {
                    let key = Runner.Key(kind: kind, scenario: scenario, contender: models)
                    guard let value = ratio(key, to: ours) else { continue }
                    lines.append("  \(kind.rawValue) \(scenario.title(settings))".padding(toLength: 66, withPad: " ", startingAt: 0)
                        + String(format: "%6.2fx", value))
                }
            }
            lines.append(worstLine("worst model API ratio vs Encoder/Decoder", models, versus: ours))
        }
        lines.append("")
        let peers = names.filter { $0.hasPrefix("GRDB") || $0.hasPrefix("Fluent") }
        func fastestPeer(_ key: Runner.Key) -> Double? {
            peers.compactMap { times[Runner.Key(kind: key.kind, scenario: key.scenario, contender: $0)].flatMap(median) }.min()
        }
        for contender in [ours] + (models.map { [$0] } ?? []) {
            lines.append(worstLine("\(contender) worst ratio vs the fastest of GRDB and Fluent", contender, fastestPeer))
        }
        if let models, let limit {
            lines.append(worstLine("worst model API ratio vs limit", models, versus: limit))
        }
        lines.append(worstLine("worst ratio vs raw C", ours, versus: baseline))
        if let limit {
            if let generated {
                lines.append(worstLine("worst ratio vs limit (generated)", generated, versus: limit))
            } else {
                lines.append("worst ratio vs limit (generated): not run (built without the Generated trait)")
            }
            lines.append(worstLine("worst ratio vs limit", ours, versus: limit))
        }
        return lines.joined(separator: "\n")
    }
}

extension Report {
    /// "`label`: X.XXx (where)": the highest ratio of `contender`'s median to `reference`'s, over
    /// every database and scenario both ran.
    fileprivate func worstLine(_ label: String, _ contender: String, _ reference: (Runner.Key) -> Double?) -> String {
        var worst: (ratio: Double, key: Runner.Key)?
        for (key, values) in times where key.contender == contender {
            guard let value = median(values), let base = reference(key), base > 0 else { continue }
            if value / base > (worst?.ratio ?? 0) { worst = (value / base, key) }
        }
        guard let worst else { return "\(label): no results" }
        return String(format: "\(label): %.2fx", worst.ratio) + " (\(worst.key.kind.rawValue) \(worst.key.scenario.title(settings)))"
    }

    fileprivate func worstLine(_ label: String, _ contender: String, versus reference: String) -> String {
        worstLine(label, contender) { times[Runner.Key(kind: $0.kind, scenario: $0.scenario, contender: reference)].flatMap(median) }
    }

    /// The medians as CSV, one row per database, scenario and contender, for `Benchmarks/plot`.
    var csv: String {
        var lines = ["database,scenario,title,contender,min_seconds,median_seconds,ratio_vs_limit"]
        for kind in settings.kinds {
            for scenario in Scenario.allCases {
                for name in names {
                    let key = Runner.Key(kind: kind, scenario: scenario, contender: name)
                    guard let values = times[key], let minimum = values.min(), let middle = median(values) else { continue }
                    let versusLimit = limit.flatMap { ratio(key, to: $0) }.map { String(format: "%.3f", $0) } ?? ""
                    let title = scenario.title(settings).replacingOccurrences(of: ",", with: "")
                    lines.append("\(kind.rawValue),\(scenario.rawValue),\(title),\(name)," + String(format: "%.4f,%.4f,", minimum, middle) + versusLimit)
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

enum Machine {
    static var description: String {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        var model = "unknown CPU"
        if let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
           let line = info.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
           let name = line.split(separator: ":", maxSplits: 1).last {
            model = name.trimmingCharacters(in: .whitespaces)
        }
        let memory = ProcessInfo.processInfo.physicalMemory / 1_073_741_824
        return "\(model), \(cores) cores, \(memory) GiB, \(ProcessInfo.processInfo.operatingSystemVersionString)"
    }
}
