// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "CodableSQLite",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .macCatalyst(.v16)],
    products: [
        .library(name: "CodableSQLite", targets: ["CodableSQLite"]),
        .executable(name: "todo", targets: ["todo"]),
    ],
    dependencies: [
        // Only the example program uses it; the library itself depends on nothing but SQLite.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(name: "CodableSQLite", dependencies: ["CSQLite"]),
        .executableTarget(
            name: "todo",
            dependencies: [
                "CodableSQLite",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The soak test, outside `swift test`: swift run -c release soak [seconds].
        .executableTarget(name: "soak", dependencies: ["CodableSQLite", "CHeapUsage"]),
        .target(name: "CHeapUsage"),
        // A helper the crash test runs and kills (not a product).
        .executableTarget(name: "crash-writer", dependencies: ["CodableSQLite"]),
        .testTarget(name: "CodableSQLiteTests", dependencies: ["CodableSQLite", "crash-writer"]),
    ]
)
