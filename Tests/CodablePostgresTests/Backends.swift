import Foundation
import Testing
import CodableSQLite
#if Postgres
@testable import CodablePostgres
#endif

/// Where a test's models are stored.
enum Backend: String, Sendable, CustomTestStringConvertible {
    case sqlite, postgres

    var testDescription: String { rawValue }

    /// Whether the tests run under a sanitizer, where everything (password authentication of a new
    /// connection included) is several times slower: latency bounds allow for it.
    static let isSanitized: Bool = {
        #if os(Linux)
        let process = dlopen(nil, RTLD_NOW)
        return ["__tsan_init", "__asan_init"].contains { (name: String) in dlsym(process, name) != nil }
        #else
        return false
        #endif
    }()

    /// Whether the tests run under AddressSanitizer (whose leak check runs at exit).
    static let isAddressSanitized: Bool = {
        #if os(Linux)
        return dlsym(dlopen(nil, RTLD_NOW), "__asan_init") != nil
        #else
        return false
        #endif
    }()

    /// SQLite always; PostgreSQL when a throwaway server can be started (else the PostgreSQL
    /// suites report themselves skipped, with the reason).
    static var available: [Backend] {
        get async {
            #if Postgres
            await TestServer.shared.isAvailable ? [.sqlite, .postgres] : [.sqlite]
            #else
            [.sqlite]  // without the Postgres trait the shared suite runs on SQLite alone
            #endif
        }
    }

    /// A new, empty database (a WAL file for SQLite, its own database on the server for PostgreSQL),
    /// as the protocol both engines' databases adopt.
    func open() async throws -> any ObservableModelStore {
        switch self {
        case .sqlite:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("both-\(UUID().uuidString).sqlite").path
            return try SQLite.Database(path: path)
        case .postgres:
            #if Postgres
            return try await TestServer.shared.freshDatabase()
            #else
            throw PostgresNotBuilt()
            #endif
        }
    }

    /// Runs `body` with PostgreSQL's large saves written `count` values per statement (see
    /// `Session.chunkSize`), so that a test crosses statements with few values.
    static func withSmallStatements<R>(of count: Int, _ body: () async throws -> R) async rethrows -> R {
        #if Postgres
        try await Postgres.Session.$chunkSize.withValue(count, operation: body)
        #else
        try await body()
        #endif
    }

    /// Whether `error` is the unique-constraint failure of this backend.
    func isUniqueViolation(_ error: any Error) -> Bool {
        switch self {
        case .sqlite: (error as? SQLite.Error)?.code == .constraint
        case .postgres:
            #if Postgres
            (error as? Postgres.Error)?.sqlState == "23505"
            #else
            false
            #endif
        }
    }
}

/// Whether `body` throws a ``ModelError`` with this code.
func throwsModelError(_ code: ModelError.Code, _ body: () async throws -> Void) async -> Bool {
    do {
        try await body()
        return false
    } catch let error as ModelError {
        return error.code == code
    } catch {
        return false
    }
}

/// Thrown when a test asks for PostgreSQL in a build without the engine.
struct PostgresNotBuilt: Error {}

extension Trait where Self == TimeLimitTrait {
    /// The limit after which a test counts as hung: `minutes`, or five times that under a
    /// sanitizer, where the whole suite runs several times slower on two cores and synchronous
    /// tests hold the cooperative pool's threads for a minute at a time.
    static func hangLimit(minutes: Int) -> Self {
        .timeLimit(.minutes(Backend.isSanitized ? minutes * 5 : minutes))
    }
}

/// At most ``limit`` tests of the suites marked `.serverShare` run at once.
///
/// Each such test opens its own database on the server, two or three connection pools and a
/// listening connection. Started all at once (Swift Testing starts every test of the suite
/// together), they put a few hundred connection handshakes and some thousand statements on NIO's
/// two event-loop threads and the machine's two cores within seconds, and a first observation,
/// which needs a table, its triggers, a listening connection and a read, waited 3–6 s for its turn
/// (over 10 s with a build running beside): the "observers' stall" (RELIABILITY.md).
///
/// Swift Testing counts the time a test waits for its slot toward the test's time limit, so the
/// suites that take slots have a hang limit of 3 minutes (a whole plain run takes about 22 s).
///
/// `TEST_SERVER_SHARE=0` lifts the limit, which reproduces the stall's long waits
/// (`Scripts/repeat-tests` prints them).
struct ServerShare: TestTrait, SuiteTrait, TestScoping {
    static let limit: Int = {
        let value = ProcessInfo.processInfo.environment["TEST_SERVER_SHARE"].flatMap { Int($0) } ?? 6
        return value > 0 ? value : Int.max
    }()
    private static let slots = Slots(limit)

    var isRecursive: Bool { true }

    func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self   // each test case takes a slot; a suite as a whole does not
    }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        await Self.slots.take()
        do {
            try await function()
        } catch {
            await Self.slots.give()
            throw error
        }
        await Self.slots.give()
    }

    /// A counting semaphore for tasks, first come first served.
    private actor Slots {
        private var free: Int
        private var waiting: [CheckedContinuation<Void, Never>] = []

        init(_ count: Int) { free = count }

        func take() async {
            if free > 0 {
                free -= 1
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }

        func give() {
            if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
        }
    }
}

extension Trait where Self == ServerShare {
    /// Runs the suite's tests at most ``ServerShare/limit`` at a time with the other server suites'.
    static var serverShare: Self { ServerShare() }
}

/// How long a test waits for something that normally takes milliseconds (a commit reaching an
/// observer): 10 s, three times that under a sanitizer, where everything runs several times
/// slower. Waits are woken by the event they wait for, so the limit is only ever reached by a
/// failure.
enum TestWait {
    static let seconds: Double = 10

    static func scaled(_ seconds: Double) -> Double {
        Backend.isSanitized ? seconds * 3 : seconds
    }

    /// Prints a wait that took over 2 s (`Scripts/repeat-tests` collects these lines), so that a
    /// slowdown is seen long before it fails a test.
    static func report(since start: ContinuousClock.Instant, at location: SourceLocation) {
        let waited = ContinuousClock.now - start
        guard waited > .seconds(2) else { return }
        let seconds = Double(waited.components.seconds) + Double(waited.components.attoseconds) / 1e18
        print("slow wait: \(String(format: "%.1f", seconds)) s at \(location.fileName):\(location.line)")
    }
}

/// A small deterministic generator (SplitMix64), so a failing sequence can be replayed.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
