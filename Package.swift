// swift-tools-version: 6.1
import CompilerPluginSupport
import PackageDescription

// CodableSQLite depends on nothing but the system's SQLite. The PostgreSQL engine (the
// `CodablePostgres` product), the sync server (`CodableSyncServer`, `CodableSync`) and everything they need
// (postgres-nio, swift-nio, swift-log, …) are used only when a client enables the `Postgres` trait; without it SwiftPM resolves, fetches and
// builds none of them:
//
//     .package(url: "https://github.com/…/CodableSQLite", from: "…", traits: ["Postgres"])
//
// Here: `swift build --traits Postgres`, `swift test --traits Postgres`.
let postgres: TargetDependencyCondition? = .when(traits: ["Postgres"])
// The sync server on Hummingbird (`todo serve`, the CodableSyncHummingbird product): the `Server`
// trait, which enables `Postgres`. Without it nothing of Hummingbird is resolved or built.
let server: TargetDependencyCondition? = .when(traits: ["Server"])
// Generated row coding (`@RowCodable`): the `Macros` trait. Without it nothing of swift-syntax is
// resolved or built, and types decode through plain Codable.
let macros: TargetDependencyCondition? = .when(traits: ["Macros"])

let package = Package(
    name: "CodableSQLite",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .macCatalyst(.v16)],
    products: [
        .library(name: "CodableSQLite", targets: ["CodableSQLite"]),
        // The model layer alone, for code written once for both engines (`some ModelStore`).
        .library(name: "CodableModels", targets: ["CodableModels"]),
        // The same models on a PostgreSQL server (see Sources/CodablePostgres); empty without the trait.
        .library(name: "CodablePostgres", targets: ["CodablePostgres"]),
        // A device's side of sync (an app's SQLite file kept in step with a sync server over HTTP):
        // CodableSQLite and Foundation only, no trait needed.
        .library(name: "CodableSyncClient", targets: ["CodableSyncClient"]),
        // The sync server on PostgreSQL (accounts, scopes, the HTTP endpoint); empty without the
        // Postgres trait.
        .library(name: "CodableSyncServer", targets: ["CodableSyncServer"]),
        // Both sides in one import, and a device that reaches PostgreSQL directly; empty without
        // the Postgres trait.
        .library(name: "CodableSync", targets: ["CodableSync"]),
        // The sync server's HTTP routes mounted on a Hummingbird 2 router; empty without the Server trait.
        .library(name: "CodableSyncHummingbird", targets: ["CodableSyncHummingbird"]),
        .executable(name: "todo", targets: ["todo"]),
    ],
    traits: [
        .trait(
            name: "Postgres",
            description: "The PostgreSQL engine: the CodablePostgres product, on postgres-nio."),
        .trait(
            name: "Server",
            description: "The sync server over HTTP on Hummingbird 2: CodableSyncHummingbird and `todo serve`.",
            enabledTraits: ["Postgres"]),
        .trait(
            name: "Macros",
            description: "@RowCodable: row decoding and encoding generated per type (swift-syntax), used by the coders and models."),
    ],
    dependencies: [
        // Only the PostgreSQL engine uses these, and only with the Postgres trait.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Only the sync server uses it, and only with the Server trait (its own traits off: no
        // swift-configuration).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        // Only the @RowCodable macro uses it, and only with the Macros trait.
        .package(url: "https://github.com/swiftlang/swift-syntax", "600.0.1"..<"700.0.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // Backend-neutral: Model, Filter, ModelStore, the storage contract, the SQL builder's
        // dialect seam, live-query sequences. Neither SQLite nor NIO.
        .target(name: "CodableModels", dependencies: [.target(name: "CodableSQLiteMacros", condition: macros)]),
        // The compiler plugin behind @RowCodable (the declarations are in CodableModels); a stub
        // without the Macros trait.
        .macro(
            name: "CodableSQLiteMacros",
            dependencies: [
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax", condition: macros),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax", condition: macros),
            ]
        ),
        .target(name: "CodableSQLite", dependencies: ["CodableModels", "CSQLite"]),
        .target(
            name: "CodablePostgres",
            dependencies: [
                "CodableModels",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: postgres),
                .product(name: "Logging", package: "swift-log", condition: postgres),
            ]
        ),
        // Sync in three roles (Sources/CodableSync*): the protocol both sides speak (its messages,
        // their bounds, errors, the synced models' description), the device, the server.
        .target(name: "CodableSyncProtocol", dependencies: ["CodableModels"]),
        .target(name: "CodableSyncClient", dependencies: ["CodableSQLite", "CodableSyncProtocol"]),
        .target(
            name: "CodableSyncServer",
            dependencies: [
                "CodableSyncProtocol", .target(name: "CodablePostgres", condition: postgres),
                // The server's audit log (SyncAudit).
                .product(name: "Logging", package: "swift-log", condition: postgres),
            ],
            // The protocol's OpenAPI document, compiled in (SyncHTTPEndpoint.openAPIDocument): no bundle to find at run time.
            resources: [.embedInCode("openapi.yaml")]
        ),
        // Both sides, for code that is both (tests, tools) and devices that reach PostgreSQL directly.
        .target(
            name: "CodableSync",
            dependencies: ["CodableSyncClient", .target(name: "CodableSyncServer", condition: postgres)]
        ),
        // SyncHTTPEndpoint's routes on a Hummingbird router (CodableSyncServer has the endpoint itself).
        .target(
            name: "CodableSyncHummingbird",
            dependencies: [
                .target(name: "CodableSyncServer", condition: server),
                .product(name: "Hummingbird", package: "hummingbird", condition: server),
                // HTTPServerBuilder, for the sync server's HTTP/1.1 timeouts.
                .product(name: "HummingbirdCore", package: "hummingbird", condition: server),
            ]
        ),
        // The main job's example program; `--postgres` needs the trait (swift run --traits Postgres todo …),
        // `todo serve` the Server trait.
        .executableTarget(
            name: "todo",
            dependencies: [
                "CodableSQLite", "CodableSyncClient", .target(name: "CodablePostgres", condition: postgres),
                .target(name: "CodableSync", condition: postgres), .target(name: "CodableSyncHummingbird", condition: server),
                // todo serve's audit log on standard error.
                .product(name: "Logging", package: "swift-log", condition: postgres),
            ]
        ),
        // The soak test, outside `swift test`: swift run -c release soak [seconds].
        .executableTarget(name: "soak", dependencies: ["CodableSQLite", "CHeapUsage"]),
        .target(name: "CHeapUsage"),
        // The sync soak's devices and check (Scripts/sync-soak runs them; not a product).
        .executableTarget(name: "sync-soak", dependencies: [.target(name: "CodableSync", condition: postgres)]),
        // The sync server's measurements over HTTP (BENCHMARKS.md; not a product):
        // swift run -c release --traits Server sync-bench --postgres URL.
        .executableTarget(
            name: "sync-bench",
            dependencies: [.target(name: "CodableSync", condition: server), .target(name: "CodableSyncHummingbird", condition: server)]
        ),
        // A helper the crash test runs and kills (not a product).
        .executableTarget(name: "crash-writer", dependencies: ["CodableSQLite"]),
        // A helper the PostgreSQL tests run as a second app instance (not a product).
        .executableTarget(name: "postgres-worker", dependencies: ["CodablePostgres"]),
        .testTarget(name: "CodableSQLiteTests", dependencies: ["CodableSQLite", "CodableSyncClient", "crash-writer"]),
        .testTarget(
            name: "CodablePostgresTests",
            dependencies: [
                "CodableSQLite", "CodablePostgres", "CodableSync", "CodableSyncClient", "CodableSyncServer", "postgres-worker",
                .target(name: "CodableSyncHummingbird", condition: server),
            ]
        ),
    ]
)
