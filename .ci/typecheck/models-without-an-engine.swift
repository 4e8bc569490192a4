// Must type-check: code written once against the backend-neutral model layer alone (the
// CodableModels product), with neither engine imported: models, filters, and functions over
// `some ModelStore` / `some ObservableModelStore` that run unchanged on SQLite and PostgreSQL.
import CodableModels
import Foundation

struct Note: Codable, UUIDModel { let id: UUID; var text: String; var archived: Bool; var created: Date }

func archiveOld(in db: some ModelStore, before date: Date) async throws -> Int {
    try await db.inTransaction { tx in
        var old = try await tx.get(with: Filter(\Note.created, is: .less(than: date)).and(\Note.archived, is: .equal(to: false)))
        for index in old.indices { old[index].archived = true }
        return try await tx.save(old).count
    }
}

func watchUnarchived(in db: some ObservableModelStore) async throws {
    for try await count in db.observe(count: Filter(\Note.archived, is: .equal(to: false))) {
        print(count)
    }
}

func matchUniqueViolation(_ error: any Error) -> Bool {
    (error as? ModelError)?.code == .uniqueViolation
}
