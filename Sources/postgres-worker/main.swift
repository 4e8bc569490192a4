// A second app instance for the PostgreSQL tests: saves values against a shared server while
// another process does the same, then prints what it counted.
//
//     postgres-worker URL COUNT LABEL
import Foundation

#if Postgres
import CodablePostgres

struct Visit: UUIDModel, Sendable {
    let id: UUID
    var worker: String
    var number: Int
}

let arguments = CommandLine.arguments
guard arguments.count == 4, let count = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: postgres-worker URL COUNT LABEL\n".utf8))
    exit(2)
}
do {
    let db = try await Postgres.Database(url: arguments[1])
    // Half one at a time, half in batches of 10, all while the other process does the same.
    for number in 0..<count / 2 {
        try await db.save(Visit(id: UUID(), worker: arguments[3], number: number))
    }
    var batch: [Visit] = []
    for number in count / 2..<count {
        batch.append(Visit(id: UUID(), worker: arguments[3], number: number))
        if batch.count == 10 { try await db.save(batch); batch = [] }
    }
    try await db.save(batch)
    let mine = try await db.count(with: Filter(\Visit.worker, is: .equal(to: arguments[3])))
    print("saved \(mine)")
    await db.close()
} catch {
    print("failed: \(error)")
    exit(1)
}
#else
FileHandle.standardError.write(Data("postgres-worker needs the Postgres trait: swift build --traits Postgres\n".utf8))
exit(2)
#endif
