#if Postgres
import Foundation
import Testing
@testable import CodablePostgres

/// Where a test's models are stored.
enum Backend: String, Sendable, CustomTestStringConvertible {
    case sqlite, postgres

    var testDescription: String { rawValue }

    /// SQLite always; PostgreSQL when a throwaway server can be started (else the PostgreSQL
    /// suites report themselves skipped, with the reason).
    static var available: [Backend] {
        get async { await TestServer.shared.isAvailable ? [.sqlite, .postgres] : [.sqlite] }
    }

    /// A new, empty database (a WAL file for SQLite, its own database on the server for PostgreSQL).
    func open() async throws -> any ModelStore {
        switch self {
        case .sqlite:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("both-\(UUID().uuidString).sqlite").path
            return try SQLite.Database(path: path)
        case .postgres:
            return try await TestServer.shared.freshDatabase()
        }
    }

    /// Whether `error` is the unique-constraint failure of this backend.
    func isUniqueViolation(_ error: any Error) -> Bool {
        switch self {
        case .sqlite: (error as? SQLite.Error)?.code == .constraint
        case .postgres: (error as? Postgres.Error)?.sqlState == "23505"
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
#endif
