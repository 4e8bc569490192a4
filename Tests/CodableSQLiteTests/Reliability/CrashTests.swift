import Foundation
import Testing
@testable import CodableSQLite

/// Kills a real writer process (Sources/crash-writer) with SIGKILL at random moments, again and
/// again on the same WAL file, and checks that every write it reported as committed survived,
/// whole.
@Suite("Reliability: a killed process loses no committed write")
struct CrashTests {
    /// The crash-writer executable, built next to the test bundle.
    private var writerPath: String? {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL,
            Bundle.main.bundleURL.deletingLastPathComponent(),
        ].map { $0.appendingPathComponent("crash-writer").path }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test func sixtyKillsLoseNothing() async throws {
        let executable = try #require(writerPath, "crash-writer was not built next to the tests")
        let path = TestDatabases.temporaryPath("crash")
        var reported: [Int] = []
        var generator = SystemRandomNumberGenerator()
        for run in 0..<60 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = [path, String(run * 100_000)]
            let output = Pipe()
            let errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            // Kill it at a random moment: one run in four while it opens the file or migrates,
            // the others once it writes (however fast this build of it is: sanitizers slow it down).
            var text = ""
            if run % 4 != 0 {
                let deadline = Date().addingTimeInterval(20)
                while !text.contains("\n"), Date() < deadline, process.isRunning {
                    text += String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
                }
            }
            try await Task.sleep(nanoseconds: UInt64.random(in: 2_000_000...60_000_000, using: &generator))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            text += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let failure = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(process.terminationReason == .uncaughtSignal, "run \(run) ended by itself: \(failure)")
            #expect(failure.isEmpty, "run \(run): \(failure)")
            reported += text.split(separator: "\n").compactMap { Int($0) }
        }
        #expect(reported.count > 60, "the writer reported only \(reported.count) writes")
        try verify(path: path, reported: reported)
    }

    /// Every reported write is in the database, whole; no half transaction; no half migration.
    private func verify(path: String, reported: [Int]) throws {
        let db = try SQLite.Database(path: path)
        #expect(try db.checkIntegrity() == [])
        // Every reported write is there, whole.
        let parts = Dictionary(grouping: try db.read("SELECT number FROM parts").compactMap { $0["number"]?.intValue }, by: { $0 }).mapValues(\.count)
        #expect(parts.values.allSatisfy { $0 == 3 }, "a transaction was half applied")
        let entries = Dictionary(uniqueKeysWithValues: try db.read("SELECT number, text FROM \"Entry\"").compactMap { row -> (Int, String)? in
            guard let number = row["number"]?.intValue, let text = row["text"]?.stringValue else { return nil }
            return (number, text)
        })
        for number in reported {
            switch number % 5 {
            case 0, 4: #expect(parts[number] == 3, "write \(number) is missing")
            case 1: #expect(entries[number] == String(repeating: "e", count: number % 300), "write \(number) is missing")
            case 2: #expect(entries[number] == "v2", "write \(number) is missing")
            default: #expect(entries[number] == "in a transaction", "write \(number) is missing")
            }
        }
        // Each migration ran whole and is recorded, or neither.
        let recorded = Set(try SQLite.Migrator().appliedMigrations(in: db))
        for step in 0..<40 {
            let exists = try db.tables().contains("step\(step)")
            #expect(exists == recorded.contains("step \(step)"), "step \(step): table \(exists), recorded \(recorded.contains("step \(step)"))")
            if exists {
                #expect(try db.read("SELECT count(*) AS n FROM step\(step)")[0]["n"] == .integer(200))
            }
        }
    }
}
