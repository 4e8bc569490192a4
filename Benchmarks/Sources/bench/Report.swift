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

    private func median<T: Comparable>(_ values: [T]) -> T? {
        let sorted = values.sorted()
        return sorted.isEmpty ? nil : sorted[sorted.count / 2]
    }

    private var baseline: String { contenders.first(where: \.isBaseline)?.name ?? "raw C with Foundation" }
    private var limit: String? { contenders.first(where: \.isLimit)?.name }
    private var ours: String { contenders.first(where: \.isOurs)?.name ?? "CodableSQLite" }
    private var models: String? { contenders.first(where: \.isModels)?.name }

    private func ratio(_ key: Runner.Key, to reference: String? = nil) -> Double? {
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
        let nameWidth = max(18, contenders.map(\.name.count).max() ?? 0)
        for kind in settings.kinds {
            lines.append("")
            lines.append(kind == .file ? "file database (WAL, synchronous=NORMAL)" : "in-memory database (:memory:)")
            lines.append("  " + "contender".padding(toLength: nameWidth, withPad: " ", startingAt: 0)
                + "        min     median   vs raw C  vs limit")
            for scenario in Scenario.allCases {
                lines.append(scenario.title(settings))
                for contender in contenders {
                    let key = Runner.Key(kind: kind, scenario: scenario, contender: contender.name)
                    guard let values = times[key], let minimum = values.min(), let middle = median(values) else { continue }
                    let ratioText = (ratio(key).map { String(format: "%8.2fx", $0) } ?? "         ")
                        + (limit.flatMap { ratio(key, to: $0) }.map { String(format: "%9.2fx", $0) } ?? "")
                    lines.append("  " + contender.name.padding(toLength: nameWidth, withPad: " ", startingAt: 0)
                        + String(format: " %9.3fs %9.3fs", minimum, middle) + ratioText)
                }
            }
        }
        if let reference = peaks[baseline].flatMap(median), reference > 0 {
            lines.append("")
            lines.append("peak memory growth during B (file database), median:")
            for contender in contenders {
                guard let peak = peaks[contender.name].flatMap(median) else { continue }
                let change = Double(peak - reference) / Double(reference) * 100
                let limitPeak = limit.flatMap { peaks[$0] }.flatMap(median)
                let versusLimit = limitPeak.map { String(format: "   %.2fx the limit", Double(peak) / Double(max($0, 1))) } ?? ""
                lines.append("  " + contender.name.padding(toLength: nameWidth, withPad: " ", startingAt: 0)
                    + String(format: " %8.1f MB  %+6.1f%% vs raw C", Double(peak) / 1024, change) + versusLimit)
            }
        }
        if let models {
            lines.append("")
            lines.append("E: the model API (\(models)) vs the Encoder/Decoder path (\(ours)), medians:")
            var worstModels: (ratio: Double, key: Runner.Key)?
            for kind in settings.kinds {
                for scenario in Scenario.allCases {
                    let key = Runner.Key(kind: kind, scenario: scenario, contender: models)
                    guard let value = ratio(key, to: ours) else { continue }
                    lines.append("  \(kind.rawValue) \(scenario.title(settings))".padding(toLength: 60, withPad: " ", startingAt: 0)
                        + String(format: "%6.2fx", value))
                    if value > (worstModels?.ratio ?? 0) { worstModels = (value, key) }
                }
            }
            if let worstModels {
                lines.append(String(format: "worst model API ratio vs Encoder/Decoder: %.2fx", worstModels.ratio)
                    + " (\(worstModels.key.kind.rawValue) \(worstModels.key.scenario.title(settings)))")
            }
        }
        var worst: (ratio: Double, key: Runner.Key)?
        for (key, _) in times where key.contender == ours {
            if let value = ratio(key), value > (worst?.ratio ?? 0) { worst = (value, key) }
        }
        lines.append("")
        if let worst {
            lines.append(String(format: "worst ratio vs raw C: %.2fx", worst.ratio)
                + " (\(worst.key.kind.rawValue) \(worst.key.scenario.title(settings)))")
        }
        if let limit {
            var worstLimit: (ratio: Double, key: Runner.Key)?
            for (key, _) in times where key.contender == ours {
                if let value = ratio(key, to: limit), value > (worstLimit?.ratio ?? 0) { worstLimit = (value, key) }
            }
            if let worstLimit {
                lines.append(String(format: "worst ratio vs limit: %.2fx", worstLimit.ratio)
                    + " (\(worstLimit.key.kind.rawValue) \(worstLimit.key.scenario.title(settings)))")
            }
        }
        return lines.joined(separator: "\n")
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
