import CodableSQLite
import Foundation

/// Scenario G's data: plain model structs and the same movies for every contender, in the SQLite
/// benchmark and in `Benchmarks/Postgres` (symlinked there). N movies with 5 actors each drawn
/// from a pool of 2N and, for three in four, a studio from a pool of 100.
enum MovieGraph {
    struct Actor: Codable, Model, Sendable { var id: String; var name: String }
    struct Studio: Codable, Model, Sendable { var id: Int64?; var name: String }
    struct Movie: Codable, UUIDModel, Sendable {
        let id: UUID
        var title: String
        var releaseDate: Date
        var studio: Studio?
        var cast: [Actor]
        var tags: [String]
    }

    /// `count` movies, from a fixed seed: other contenders' records are made from these.
    static func movies(count: Int) -> [Movie] {
        var random = SplitMix(seed: 42)
        return (0..<count).map { n in
            let studio = n % 4 == 0 ? nil : Studio(id: Int64(n % 100 + 1), name: "Studio \(n % 100)")
            let cast = (0..<5).map { _ in
                let actor = random.next() % UInt64(count * 2)
                return Actor(id: "actor\(actor)", name: "Actor \(actor)")
            }
            return Movie(
                id: UUID(uuid: random.uuidBytes()), title: "Movie \(n)",
                releaseDate: Date(timeIntervalSince1970: 946_684_800 + Double(n) * 3_600),
                studio: studio, cast: cast, tags: ["tag\(n % 5)", "genre\(n % 7)"])
        }
    }
}
