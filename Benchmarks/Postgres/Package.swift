// swift-tools-version: 6.1
import PackageDescription

// The PostgreSQL benchmark: CodablePostgres against Fluent with fluent-postgres-driver, on a
// throwaway server. A package of its own, so that the main benchmark (built by CI) does not build
// postgres-nio and the PostgreSQL driver; run it with Benchmarks/Postgres/run.
let package = Package(
    name: "PostgresBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "CodableSQLite", path: "../..", traits: ["Postgres"]),
        .package(url: "https://github.com/vapor/fluent-kit", exact: "1.57.0"),
        .package(url: "https://github.com/vapor/fluent-postgres-driver", exact: "2.14.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        .executableTarget(
            name: "bench-postgres",
            dependencies: [
                .product(name: "CodablePostgres", package: "CodableSQLite"),
                .product(name: "CodableSync", package: "CodableSQLite"),
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
                .product(name: "PostgresNIO", package: "postgres-nio"),  // NIO's event loop group for Fluent, and the floor
            ],
            // FluentItem.swift and FluentRecord.swift are the SQLite benchmark's (symlinked), behind its Fluent
            // trait; FluentItem.swift imports internally, so every file here does.
            swiftSettings: [.define("Fluent"), .enableUpcomingFeature("InternalImportsByDefault")]
        )
    ]
)
