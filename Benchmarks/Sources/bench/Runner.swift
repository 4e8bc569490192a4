import Foundation
import GRDBSQLite
#if canImport(Glibc)
/// glibc's malloc_trim, which the Glibc module does not import (it lives in malloc.h).
@_silgen_name("malloc_trim")
private func malloc_trim(_ pad: Int) -> Int32
#endif

enum DatabaseKind: String, CaseIterable {
    case file, memory
}

enum Scenario: String, CaseIterable {
    case insert = "A", fetchAll = "B", lookups = "C", update = "D", queries = "H"

    func title(_ settings: Settings) -> String {
        switch self {
        case .insert: "A insert \(settings.rows.formatted()) (1 transaction)"
        case .fetchAll: "B fetch all \(settings.rows.formatted()) into [Item]"
        case .lookups: "C \(settings.lookups.formatted()) lookups by primary key"
        case .update: "D update \(settings.rows.formatted()) by primary key (1 transaction)"
        case .queries: "H \(settings.lookups.formatted()) queries: priority > 2, by dueDate, 50 a page"
        }
    }
}

struct Settings {
    var rows = 100_000
    var lookups = 10_000
    var repetitions = 5
    var warmups = 1
    var kinds = DatabaseKind.allCases
    /// For profiling: run only these contenders.
    var contenderNames: Set<String> = []
    /// Run only scenario F (live queries).
    var observationOnly = false
    /// Run only scenario G (relationships).
    var relationshipsOnly = false
    /// Run only the scaling runs of A and B.
    var scalingOnly = false
    /// Run only scenario H (filtered, sorted, paged queries).
    var queriesOnly = false
    /// Run only scenario I (an array of structs kept on disk).
    var structsOnly = false
    /// Run only scenario J (full-text search).
    var searchOnly = false
    /// Only K, the Northwind orders (`--northwind-only`); `--northwind PATH`: the packed database.
    var northwindOnly = false
    var northwindPath: String?
    /// Where to write the A–D and H results as CSV, for `Benchmarks/plot`.
    var csvPath: String?
    /// Profile only F's write throughput with this many observers.
    var profiledObservers: Int?

    mutating func parse(_ arguments: [String]) throws {
        var iterator = arguments.makeIterator()
        func number(after flag: String) throws -> Int {
            guard let text = iterator.next(), let value = Int(text), value > 0 else {
                throw BenchmarkError.verification("\(flag) needs a positive number")
            }
            return value
        }
        while let argument = iterator.next() {
            switch argument {
            case "--quick":
                rows = 10_000
                lookups = 1_000
                repetitions = 3
            case "--rows": rows = try number(after: argument)
            case "--lookups": lookups = try number(after: argument)
            case "--repetitions": repetitions = try number(after: argument)
            case "--contender":
                guard let name = iterator.next() else { throw BenchmarkError.verification("--contender needs a name") }
                contenderNames.insert(name)
            case "--observation": observationOnly = true
            case "--relationships": relationshipsOnly = true
            case "--scaling": scalingOnly = true
            case "--queries": queriesOnly = true
            case "--structs": structsOnly = true
            case "--search": searchOnly = true
            case "--northwind-only": northwindOnly = true
            case "--northwind":
                guard let path = iterator.next() else { throw BenchmarkError.verification("--northwind needs the path of northwind.db.gz") }
                northwindPath = path
            case "--csv":
                guard let path = iterator.next() else { throw BenchmarkError.verification("--csv needs a file path") }
                csvPath = path
            case "--observers":
                observationOnly = true
                guard let text = iterator.next(), let count = Int(text), count >= 0 else {
                    throw BenchmarkError.verification("--observers needs a number")
                }
                profiledObservers = count
            case "--only":
                guard let name = iterator.next(), let kind = DatabaseKind(rawValue: name) else {
                    throw BenchmarkError.verification("--only needs file or memory")
                }
                kinds = [kind]
            default:
                throw BenchmarkError.verification("unknown option \(argument); use --quick, --rows N, --lookups N, --repetitions N, --only file|memory, --contender NAME, --observation, --relationships, --scaling, --queries, --structs, --search, --northwind-only, --northwind PATH, --csv PATH")
            }
        }
    }
}

/// Runs every contender through every scenario, interleaved, verifying each result.
struct Runner {
    let settings: Settings
    let contenders: [ContenderKind]

    struct Key: Hashable {
        let kind: DatabaseKind
        let scenario: Scenario
        let contender: String
    }

    func run(into report: inout Report) throws {
        let items = Item.generate(count: settings.rows)
        let updatedItems = Item.updated(items)
        var random = SplitMix(seed: 42)
        let lookupIDs = (0..<settings.lookups).map { _ in Int64(random.next() % UInt64(settings.rows)) + 1 }
        var expectedAll = Checksum()
        expectedAll.add(items)
        var expectedUpdated = Checksum()
        expectedUpdated.add(updatedItems)
        var expectedLookups = Checksum()
        for id in lookupIDs { expectedLookups.add(items[Int(id) - 1]) }

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("codablesqlite-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        for repetition in 0..<(settings.warmups + settings.repetitions) {
            let measured = repetition >= settings.warmups
            for kind in settings.kinds {
                // Rotate the order each repetition so no contender always runs first.
                let selected = settings.contenderNames.isEmpty ? contenders : contenders.filter { settings.contenderNames.contains($0.name) }
                let order = selected.indices.map { selected[($0 + repetition) % selected.count] }
                for contender in order {
                    let path = kind == .memory ? ":memory:" : folder.appendingPathComponent("\(contender.name)-\(repetition).sqlite").path
                    try autoreleasepool(invoking: {
                        let times = try measure(try contender.make(path), items: items, updatedItems: updatedItems, lookupIDs: lookupIDs,
                                                expected: (expectedAll, expectedLookups, expectedUpdated), name: contender.name)
                        if measured {
                            report.add(times.insert, Key(kind: kind, scenario: .insert, contender: contender.name))
                            report.add(times.fetchAll, Key(kind: kind, scenario: .fetchAll, contender: contender.name))
                            report.add(times.lookups, Key(kind: kind, scenario: .lookups, contender: contender.name))
                            report.add(times.update, Key(kind: kind, scenario: .update, contender: contender.name))
                            if let peak = times.peak, kind == .file { report.peaks[contender.name, default: []].append(peak) }
                        }
                    })
                    if kind == .file { removeDatabaseFiles(path) }
                }
            }
            print(measured ? "repetition \(repetition - settings.warmups + 1)/\(settings.repetitions) done" : "warm-up done")
        }
    }

    /// A–D on one contender's new database, each result verified; the records are made from the
    /// items before the timings.
    private func measure<C: Contender>(
        _ database: C, items: [Item], updatedItems: [Item], lookupIDs: [Int64],
        expected: (all: Checksum, lookups: Checksum, updated: Checksum), name: String
    ) throws -> (insert: Double, fetchAll: Double, lookups: Double, update: Double, peak: Int?) {
        let records = items.map(C.Fetched.init)
        let updatedRecords = updatedItems.map(C.Fetched.init)
        let insert = try measureSeconds { try database.insert(records) }

        var fetched: [C.Fetched] = []
        let (fetchAll, peak) = try Memory.measuringPeakGrowth { fetched = try database.fetchAll() }
        try verify(fetched, expected.all, "\(name) B")
        fetched = []

        var found: [C.Fetched] = []
        let lookups = try measureSeconds { found = try database.fetch(ids: lookupIDs) }
        try verify(found, expected.lookups, "\(name) C")
        found = []

        let update = try measureSeconds { try database.update(updatedRecords) }
        try verify(try database.fetchAll(), expected.updated, "\(name) D")
        return (insert, fetchAll, lookups, update, peak)
    }

    private func verify<Record: ItemRecord>(_ items: [Record], _ expected: Checksum, _ what: String) throws {
        var checksum = Checksum()
        checksum.add(items)
        guard checksum == expected else {
            throw BenchmarkError.verification("\(what): got \(checksum), expected \(expected)")
        }
    }
}

#if !canImport(ObjectiveC)
/// Linux has no autorelease pool; the call just runs the work.
func autoreleasepool<R>(invoking work: () throws -> R) rethrows -> R { try work() }
#endif

/// Seconds `work` takes.
func measureSeconds(_ work: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try work()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// A database file at a new path in the temporary folder.
func temporaryDatabasePath(_ name: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(name)-\(UUID().uuidString).sqlite").path
}

/// Removes a database file with its `-wal` and `-shm` files.
func removeDatabaseFiles(_ path: String) {
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
}

/// Resident memory from /proc (Linux); `nil` elsewhere.
enum Memory {
    /// Seconds `work` takes, and how much the peak resident size grew meanwhile (kB; `nil` where
    /// it cannot be read).
    static func measuringPeakGrowth(_ work: () throws -> Void) rethrows -> (seconds: Double, peakKilobytes: Int?) {
        resetPeak()
        let residentBefore = kilobytes("VmRSS")
        let seconds = try measureSeconds(work)
        return (seconds, kilobytes("VmHWM").flatMap { peak in residentBefore.map { peak - $0 } })
    }

    /// Returns freed memory to the system, then resets the peak resident size (VmHWM) to the current
    /// size, so the peak that follows measures what the next step allocates.
    static func resetPeak() {
        #if canImport(Glibc)
        _ = malloc_trim(0)
        #endif
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return }
        handle.write(Data("5".utf8))
        try? handle.close()
    }

    static func kilobytes(_ field: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.split(separator: " ").dropFirst().first ?? "")
        }
        return nil
    }
}
