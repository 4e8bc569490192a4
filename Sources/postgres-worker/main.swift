// A second app instance for the PostgreSQL tests: saves values against a shared server while
// another process does the same, then prints what it counted.
//
//     postgres-worker URL COUNT LABEL          plain values
//     postgres-worker URL COUNT LABEL graph    films sharing performers and labels (relationships)
import Foundation

#if Postgres
import CodablePostgres

struct Visit: UUIDModel, Sendable {
    let id: UUID
    var worker: String
    var number: Int
}

/// The graph mode's models: every film links performers and a label that the other process's
/// films link too, in another order, so that both upsert the same rows at once.
struct Performer: Model, Sendable { var id: String; var name: String }
struct Label: Model, Sendable { var id: String; var name: String }
struct Film: UUIDModel, Sendable {
    let id: UUID
    var worker: String
    var number: Int
    var label: Label?
    var cast: [Performer]

    /// The performers of film `number` of `worker`: 40 of a pool of 100, from a place that
    /// depends on `number`, ascending for the first worker and descending for the second (so that
    /// the two lock the same rows in opposite orders unless the library orders them).
    static func cast(worker: String, number: Int) -> [Performer] {
        let pool = (0..<100).map { Performer(id: String(format: "p%03d", $0), name: "Performer \($0)") }
        let ordered = worker.hasPrefix("first") ? pool : pool.reversed()
        return (0..<40).map { ordered[(number * 7 + $0) % 100] }
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 4 || (arguments.count == 5 && arguments[4] == "graph"), let count = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: postgres-worker URL COUNT LABEL [graph]\n".utf8))
    exit(2)
}
let label = arguments[3]
do {
    let db = try await Postgres.Database(url: arguments[1])
    if arguments.count == 5 {
        // Half one at a time, half in batches of 5, all while the other process does the same.
        func film(_ number: Int) -> Film {
            let labels = ["l0", "l1", "l2"]
            let labelID = labels[(label.hasPrefix("first") ? number : 2 - number % 3) % 3]
            return Film(id: UUID(), worker: label, number: number, label: Label(id: labelID, name: "Label \(labelID)"),
                        cast: Film.cast(worker: label, number: number))
        }
        for number in 0..<count / 2 { try await db.save(film(number)) }
        var batch: [Film] = []
        for number in count / 2..<count {
            batch.append(film(number))
            if batch.count == 5 { try await db.save(batch); batch = [] }
        }
        try await db.save(batch)
        print("saved \(try await db.count(with: Filter(\Film.worker, is: .equal(to: label))))")
    } else {
        // Half one at a time, half in batches of 10, all while the other process does the same.
        for number in 0..<count / 2 {
            try await db.save(Visit(id: UUID(), worker: label, number: number))
        }
        var batch: [Visit] = []
        for number in count / 2..<count {
            batch.append(Visit(id: UUID(), worker: label, number: number))
            if batch.count == 10 { try await db.save(batch); batch = [] }
        }
        try await db.save(batch)
        print("saved \(try await db.count(with: Filter(\Visit.worker, is: .equal(to: label))))")
    }
    await db.close()
} catch {
    print("failed: \(error)")
    exit(1)
}
#else
FileHandle.standardError.write(Data("postgres-worker needs the Postgres trait: swift build --traits Postgres\n".utf8))
exit(2)
#endif
