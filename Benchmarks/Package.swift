// swift-tools-version: 6.1
import PackageDescription

// Benchmarks live in their own package so that users of CodableSQLite never fetch GRDB or Fluent.
// Fluent (and the swift-nio it needs) is a default trait: CI's smoke run builds without it
// (`--disable-default-traits`), the full run with it.
let fluent: TargetDependencyCondition? = .when(traits: ["Fluent"])

let package = Package(
    name: "Benchmarks",
    platforms: [.macOS(.v13)],
    traits: [
        .trait(name: "Fluent", description: "The Fluent contender (fluent-kit on SQLite, with swift-nio)."),
        .default(enabledTraits: ["Fluent"]),
    ],
    dependencies: [
        .package(name: "CodableSQLite", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/vapor/fluent-kit", exact: "1.57.0"),
        .package(url: "https://github.com/vapor/fluent-sqlite-driver", exact: "4.9.0"),
    ],
    targets: [
        .executableTarget(
            name: "bench",
            dependencies: [
                .product(name: "CodableSQLite", package: "CodableSQLite"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "FluentKit", package: "fluent-kit", condition: fluent),
                .product(name: "FluentSQLiteDriver", package: "fluent-sqlite-driver", condition: fluent),
            ]
        ),
        // Single scenarios for instruction counts with callgrind (see its main.swift).
        .executableTarget(name: "scenarios", dependencies: [.product(name: "CodableSQLite", package: "CodableSQLite")]),
    ]
)
