import Foundation
import GRDBSQLite

// CodableSQLite benchmarks: raw C, CodableSQLite, GRDB hand-written and GRDB Codable, side by side.
//
//   swift run -c release --package-path Benchmarks bench            full run (100,000 items)
//   swift run -c release --package-path Benchmarks bench --quick    smoke run (10,000 items)
//
// Options: --rows N, --lookups N, --repetitions N, --only file|memory, --contender NAME (repeatable),
//          --observation (only scenario F, live queries), --relationships (only scenario G),
//          --scaling (only A and B at 10,000, 100,000 and 1,000,000 rows)

var settings = Settings()
do {
    try settings.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    print("bench: \(error)")
    exit(2)
}

let contenders: [ContenderKind] = [
    ContenderKind(name: "raw C", make: { try RawC(path: $0) }, isBaseline: true, isOurs: false),
    ContenderKind(name: "CodableSQLite", make: { try CodableSQLiteContender(path: $0) }, isBaseline: false, isOurs: true),
    ContenderKind(name: "GRDB hand-written", make: { try GRDBHandWritten(path: $0) }, isBaseline: false, isOurs: false),
    ContenderKind(name: "GRDB Codable", make: { try GRDBCodable(path: $0) }, isBaseline: false, isOurs: false),
    ContenderKind(name: "CodableSQLite models", make: { try CodableSQLiteModelsContender(path: $0) }, isBaseline: false, isOurs: false,
                  isModels: true),
]

do {
    if settings.scalingOnly {
        print(try ScalingBenchmark(settings: settings, contenders: contenders).run())
        exit(0)
    }
    if settings.relationshipsOnly {
        print(try RelationshipBenchmark(settings: settings).run())
        exit(0)
    }
    if !settings.observationOnly {
        let report = try Runner(settings: settings, contenders: contenders).run()
        print(report)
    }
    if let observers = settings.profiledObservers {
        print(try await ObservationBenchmark(settings: settings).profileThroughput(observers: observers))
    } else if settings.contenderNames.isEmpty {
        // Not when profiling some contenders of A–D (valgrind does not run the async scenario F).
        print(try await ObservationBenchmark(settings: settings).run())
        print(try RelationshipBenchmark(settings: settings).run())
    }
} catch {
    print("bench: \(error)")
    exit(1)
}
