// swift-tools-version: 6.1
import PackageDescription

// Benchmarks live in their own package so that users of CodableSQLite never fetch GRDB or Fluent.
// Two default traits: Fluent (and the swift-nio it needs), and Generated (the contender through
// the generated coder, @RowCodable: CodableSQLite's Macros trait, whose release build of
// swift-syntax takes minutes). CI builds with them, as documented (the dependencies' builds are
// cached between its runs); `--disable-default-traits` builds neither contender.
let fluent: TargetDependencyCondition? = .when(traits: ["Fluent"])

let package = Package(
    name: "Benchmarks",
    platforms: [.macOS(.v13)],
    traits: [
        .trait(name: "Fluent", description: "The Fluent contender (fluent-kit on SQLite, with swift-nio)."),
        .trait(name: "Generated", description: "The generated coder's contender (@RowCodable: CodableSQLite's Macros trait, swift-syntax)."),
        .default(enabledTraits: ["Fluent", "Generated"]),
    ],
    dependencies: [
        .package(name: "CodableSQLite", path: "..", traits: [.trait(name: "Macros", condition: .when(traits: ["Generated"]))]),
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
                .target(name: "FluentBench", condition: fluent),
            ]
        ),
        // The Fluent contender, on its own: fluent-sqlite-driver brings sqlite-nio's SQLite, whose
        // header one Swift module cannot see beside the system's (GRDB's and CodableSQLite's). With
        // library evolution, `bench` loads nothing of what it imports internally (imports are
        // hidden from clients only in a resilient module).
        .target(
            name: "FluentBench",
            dependencies: [
                .product(name: "FluentKit", package: "fluent-kit", condition: fluent),
                .product(name: "FluentSQLiteDriver", package: "fluent-sqlite-driver", condition: fluent),
            ],
            swiftSettings: [.unsafeFlags(["-enable-library-evolution"])]
        ),
        // Single scenarios for instruction counts with callgrind (see its main.swift).
        .executableTarget(
            name: "scenarios",
            dependencies: [.product(name: "CodableSQLite", package: "CodableSQLite"), .product(name: "GRDBSQLite", package: "GRDB.swift")]),
    ]
)
