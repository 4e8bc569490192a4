import Foundation
import Testing
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

    /// The process's resident memory in bytes, for tests that memory stays flat; `nil` where it
    /// cannot be read (off Linux) or means nothing (under a sanitizer: shadow memory, quarantines).
    static func residentBytes() -> Int? {
        if isSanitized { return nil }
        #if os(Linux)
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        #else
        return nil
        #endif
    }

    /// Expects resident memory to have grown by less than `limit` bytes from `before` to `after`
    /// (two ``residentBytes()`` readings); where it cannot be measured, the test ends as skipped
    /// with the reason (so this must be the test's last check) rather than passing a check it did
    /// not make.
    static func expectResidentGrowth(since before: Int?, below limit: Int, measuredAt after: Int?, sourceLocation: SourceLocation = #_sourceLocation) throws {
        guard let before, let after else {
            try Test.cancel("resident memory cannot be measured here (a sanitizer, or not Linux): the memory check was not made",
                            sourceLocation: sourceLocation)
        }
        #expect(after - before < limit, "resident memory grew by \(after - before) bytes", sourceLocation: sourceLocation)
    }
}
