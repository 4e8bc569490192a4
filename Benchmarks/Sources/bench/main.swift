#if Fluent
import FluentBench
#endif
import Foundation
import GRDBSQLite

// CodableSQLite benchmarks: the limit (hand-written C storing our bytes), raw C with Foundation,
// CodableSQLite, GRDB hand-written, GRDB Codable and Fluent, side by side.
//
//   swift run -c release --package-path Benchmarks bench            full run (100,000 items)
//   swift run -c release --package-path Benchmarks bench --quick    smoke run (10,000 items)
//
// Options: --rows N, --lookups N, --repetitions N, --only file|memory, --contender NAME (repeatable),
//          --observation (only scenario F, live queries), --relationships (only scenario G),
//          --scaling (only A and B at 10,000, 100,000 and 1,000,000 rows), --queries (only H),
//          --structs (only I), --search (only J), --northwind-only (only K; --northwind PATH: the
//          packed database, default ../shared/data/northwind.db.gz beside the repository),
//          --csv PATH (A–D and H as CSV, for Benchmarks/plot)
//
// Fluent and Generated (the generated coder, @RowCodable) are default traits of this package;
// `--disable-default-traits` builds without them (CI's smoke run does, to build no swift-nio and
// no swift-syntax in release).

var settings = Settings()
do {
    try settings.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    print("bench: \(error)")
    exit(2)
}

#if Generated
let generatedContenders = [
    ContenderKind(name: "CodableSQLite generated", make: { try CodableSQLiteContender<GeneratedItem>(path: $0) }, isBaseline: false, isOurs: false,
                  isGenerated: true),
]
#else
let generatedContenders: [ContenderKind] = []
#endif
#if Fluent
let fluentContenders = [ContenderKind(name: "Fluent", make: { try FluentContender(path: $0) }, isBaseline: false, isOurs: false)]
#else
let fluentContenders: [ContenderKind] = []
#endif
let contenders: [ContenderKind] = [
    ContenderKind(name: "limit", make: { try LimitC(path: $0) }, isBaseline: false, isOurs: false, isLimit: true),
    ContenderKind(name: "raw C with Foundation", make: { try RawC(path: $0) }, isBaseline: true, isOurs: false),
    ContenderKind(name: "CodableSQLite", make: { try CodableSQLiteContender<Item>(path: $0) }, isBaseline: false, isOurs: true),
    ContenderKind(name: "GRDB hand-written", make: { try GRDBHandWritten(path: $0) }, isBaseline: false, isOurs: false),
    ContenderKind(name: "GRDB Codable", make: { try GRDBCodable(path: $0) }, isBaseline: false, isOurs: false),
    ContenderKind(name: "CodableSQLite models", make: { try CodableSQLiteModelsContender(path: $0) }, isBaseline: false, isOurs: false,
                  isModels: true),
] + generatedContenders + fluentContenders

do {
    // The limit must store exactly CodableSQLite's bytes, or its times mean nothing.
    try LimitC.selfCheck(items: Item.generate(count: 2_000, seed: 7))
    if settings.scalingOnly {
        print(try ScalingBenchmark(settings: settings, contenders: contenders).run())
        exit(0)
    }
    if settings.relationshipsOnly {
        print(try RelationshipBenchmark(settings: settings).run())
        exit(0)
    }
    if settings.structsOnly {
        print(try StructsBenchmark(settings: settings).run())
        exit(0)
    }
    if settings.searchOnly {
        print(try SearchBenchmark(settings: settings).run())
        exit(0)
    }
    if settings.northwindOnly {
        print(try NorthwindBenchmark(settings: settings).run())
        exit(0)
    }
    var report = Report(settings: settings, contenders: contenders)
    if !settings.observationOnly && !settings.queriesOnly {
        try Runner(settings: settings, contenders: contenders).run(into: &report)
    }
    if let observers = settings.profiledObservers {
        print(try await ObservationBenchmark(settings: settings).profileThroughput(observers: observers))
    } else if settings.contenderNames.isEmpty && !settings.queriesOnly {
        // Not when profiling some contenders (valgrind does not run the async scenario F).
        print(try await ObservationBenchmark(settings: settings).run())
        print(try RelationshipBenchmark(settings: settings).run())
        print(try StructsBenchmark(settings: settings).run())
        print(try SearchBenchmark(settings: settings).run())
        print(try NorthwindBenchmark(settings: settings).run())
    }
    if !settings.observationOnly {
        try QueryBenchmark(settings: settings).run(into: &report)
        if let path = settings.csvPath { try report.csv.write(toFile: path, atomically: true, encoding: .utf8) }
        // A–D and H last, so that the run's last line is the worst ratio vs the limit.
        print(report)
    }
} catch {
    print("bench: \(error)")
    exit(1)
}
