// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "CodableSQLite",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .macCatalyst(.v16)],
    products: [
        .library(name: "CodableSQLite", targets: ["CodableSQLite"]),
        // The same models on a PostgreSQL server (see Sources/CodablePostgres).
        .library(name: "CodablePostgres", targets: ["CodablePostgres"]),
        .executable(name: "todo", targets: ["todo"]),
    ],
    dependencies: [
        // Only the example program uses it; CodableSQLite itself depends on nothing but SQLite.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // Only CodablePostgres uses it: the PostgreSQL client of the Swift server ecosystem.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(name: "CodableSQLite", dependencies: ["CSQLite"]),
        .target(
            name: "CodablePostgres",
            dependencies: [
                "CodableSQLite",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),  // its errors, to report them clearly
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "todo",
            dependencies: [
                "CodableSQLite",
                "CodablePostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The soak test, outside `swift test`: swift run -c release soak [seconds].
        .executableTarget(name: "soak", dependencies: ["CodableSQLite", "CHeapUsage"]),
        .target(name: "CHeapUsage"),
        // A helper the crash test runs and kills (not a product).
        .executableTarget(name: "crash-writer", dependencies: ["CodableSQLite"]),
        // A helper the PostgreSQL tests run as a second app instance (not a product).
        .executableTarget(name: "postgres-worker", dependencies: ["CodablePostgres"]),
        .testTarget(name: "CodableSQLiteTests", dependencies: ["CodableSQLite", "crash-writer"]),
        .testTarget(name: "CodablePostgresTests", dependencies: ["CodablePostgres", "postgres-worker"]),
    ]
)
