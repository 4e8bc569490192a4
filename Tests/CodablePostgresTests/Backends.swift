#if Postgres
import Foundation
import Testing
@testable import CodablePostgres

/// The model API both databases offer with the same spellings, so one test function runs against both.
protocol ModelStore: Sendable {
    @discardableResult func save<T: Model & Sendable>(_ value: T) async throws -> T
    @discardableResult func save<T: Model & Sendable>(_ values: [T]) async throws -> [T]
    func get<T: Model & Sendable>(_ type: T.Type) async throws -> [T]
    func get<T: Model & Sendable>(with filter: Filter<T>) async throws -> [T]
    func get<T: Model & Sendable>(_ type: T.Type, id: T.ID) async throws -> T? where T.ID: Sendable
    func count<T: Model & Sendable>(_ type: T.Type) async throws -> Int
    func count<T: Model & Sendable>(with filter: Filter<T>) async throws -> Int
    @discardableResult func delete<T: Model & Sendable>(_ value: T) async throws -> Bool
    @discardableResult func delete<T: Model & Sendable>(_ type: T.Type, id: T.ID) async throws -> Bool where T.ID: Sendable
    @discardableResult func delete<T: Model & Sendable>(_ values: [T]) async throws -> Int
    @discardableResult func delete<T: Model & Sendable>(with filter: Filter<T>) async throws -> Int
    func store<T: Encodable & Sendable>(_ value: T, forKey key: String) async throws
    func value<T: Decodable & Sendable>(_ type: T.Type, forKey key: String) async throws -> T?
    @discardableResult func removeValue(forKey key: String) async throws -> Bool
}

extension SQLite.Database: ModelStore {}
extension Postgres.Database: ModelStore {}

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
