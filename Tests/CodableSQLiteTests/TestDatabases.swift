import Foundation
@testable import CodableSQLite

/// Databases for tests: each file is unique, because tests run in parallel.
enum TestDatabases {
    static func temporaryPath(_ name: String = "test") -> String {
        FileManager.default.temporaryDirectory
            .appendingPathComponent("codablesqlite-\(name)-\(UUID().uuidString).sqlite").path
    }

    static func file(_ name: String = "test") throws -> SQLite.Database {
        try SQLite.Database(path: temporaryPath(name))
    }

    static func memory() throws -> SQLite.Database {
        try SQLite.Database(path: ":memory:")
    }

    /// One in-memory and one WAL file database, for behaviour that must not differ.
    static func both() throws -> [SQLite.Database] {
        [try memory(), try file()]
    }

    /// Whether the tests run under ThreadSanitizer or AddressSanitizer: everything is several times
    /// slower, and with the whole suite running in parallel on two cores an event can take more
    /// than the usual wait to arrive (see ``poll(isolation:seconds:sourceLocation:failure:_:)``).
    static let isSanitized: Bool = {
        #if os(Linux)
        let process = dlopen(nil, RTLD_NOW)
        return dlsym(process, "__tsan_init") != nil || dlsym(process, "__asan_init") != nil
        #else
        return false
        #endif
    }()

    /// The process's resident memory in bytes, for tests that memory stays flat (0 where it
    /// cannot be read, or under AddressSanitizer, where it means nothing).
    static func residentBytes() -> Int {
        if isSanitized { return 0 }   // shadow memory and quarantines: resident size means nothing
        #if os(Linux)
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        #else
        return 0
        #endif
    }
}
