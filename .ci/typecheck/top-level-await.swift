// expected-error: Top-level code (main.swift) that awaits gets this form even with await
// Swift 6 picks the synchronous overload in top-level code even where `await` is written; the
// message must name that cause rather than only ask for `await`.
import CodableSQLite
import Foundation

struct Person: Codable, UUIDModel, Sendable {
    var id: UUID
    var name: String
}

let db = try SQLite.Database(path: ":memory:")
try await db.save(Person(id: UUID(), name: "Ada"))
