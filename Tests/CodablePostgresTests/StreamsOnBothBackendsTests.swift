import CodableSQLite
import Foundation
import Testing

/// `values(with:batchSize:)`: a filter's values read a batch at a time, on both engines; the
/// synchronous `forEach(with:)` on SQLite.
@Suite("Queries: streams of a filter's values on SQLite and PostgreSQL")
struct StreamsOnBothBackendsTests {
    struct Reading: Codable, Model, Hashable, Sendable { var id: Int64?; var sensor: String; var value: Int }
    struct Tagged: Codable, UUIDModel, Hashable, Sendable { var id: UUID; var rank: Int }

    static func stored(_ db: some ModelStore, count: Int) async throws -> [Reading] {
        try await db.save((0..<count).map { Reading(id: nil, sensor: ["a", "b", "c"][$0 % 3], value: ($0 * 7_919) % 1_000) })
    }

    @Test("every value once, in the filter's order, whatever the batch size", arguments: await Backend.available)
    func wholeAndOrdered(_ backend: Backend) async throws {
        let db = try await backend.open()
        let saved = try await Self.stored(db, count: 1_234)
        for batchSize in [1, 100, 1_234, 5_000] {
            var seen: [Int64] = []
            for try await reading in db.values(with: Filter<Reading>(), batchSize: batchSize) { seen.append(reading.id ?? -1) }
            #expect(seen == saved.compactMap(\.id).sorted(), "\(backend), batches of \(batchSize)")
        }
        let predicate = #Predicate<Reading> { $0.sensor == "b" && $0.value > 500 }
        var matched: [Reading] = []
        for try await reading in db.values(with: Filter(predicate), batchSize: 37) { matched.append(reading) }
        #expect(Set(matched) == Set(try saved.filter(predicate)))
        #expect(matched.count == Set(matched.map(\.id)).count, "no value twice")

        // A sorted filter keeps its order, a paged one its page.
        let sorted = Filter(predicate, sortBy: [SortDescriptor(\.value, order: .reverse), SortDescriptor(\.id)])
        var ordered: [Reading] = []
        for try await reading in db.values(with: sorted, batchSize: 10) { ordered.append(reading) }
        #expect(ordered == (try saved.filter(predicate)).sorted(using: [SortDescriptor(\.value, order: .reverse), SortDescriptor(\.id)]))
        var paged: [Reading] = []
        for try await reading in db.values(with: sorted.limit(25, page: 2), batchSize: 10) { paged.append(reading) }
        #expect(paged == Array(ordered.dropFirst(25).prefix(25)))
    }

    @Test("UUID ids: batches after the last id seen cover every value", arguments: await Backend.available)
    func uuidKeys(_ backend: Backend) async throws {
        let db = try await backend.open()
        let values = (0..<300).map { Tagged(id: UUID(), rank: $0) }
        try await db.save(values)
        var ranks: [Int] = []
        for try await value in db.values(with: Filter<Tagged>(), batchSize: 7) { ranks.append(value.rank) }
        #expect(ranks.sorted() == Array(0..<300))
        #expect(ranks.count == 300)
    }

    @Test("leaving the loop stops the reading; a batch size under 1 throws; the database stays usable", arguments: await Backend.available)
    func stopsAndRefuses(_ backend: Backend) async throws {
        let db = try await backend.open()
        _ = try await Self.stored(db, count: 50)
        var taken = 0
        for try await _ in db.values(with: Filter<Reading>(), batchSize: 10) {
            taken += 1
            if taken == 15 { break }
        }
        #expect(taken == 15)
        let zero = db.values(with: Filter<Reading>(), batchSize: 0)
        await #expect(throws: ModelError.self) { for try await _ in zero {} }
        let refused = db.values(with: Filter(#Predicate<Reading> { $0.sensor.count > 1 }))
        await #expect(throws: ModelError.self) { for try await _ in refused {} }
        #expect(try await db.count(Reading.self) == 50)
    }

    @Test("SQLite's synchronous forEach reads the same batches")
    func synchronousForm() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("stream-\(UUID().uuidString).sqlite").path
        let db = try SQLite.Database(path: path)
        let saved = try db.save((0..<321).map { Reading(id: nil, sensor: "s\($0 % 2)", value: $0) })
        var seen: [Int] = []
        try db.forEach(with: Filter(#Predicate<Reading> { $0.sensor == "s1" }), batchSize: 16) { seen.append($0.value) }
        #expect(seen == saved.filter { $0.sensor == "s1" }.map(\.value))
        struct Stop: Error {}
        var calls = 0
        #expect(throws: Stop.self) {
            try db.forEach(with: Filter<Reading>(), batchSize: 16) { _ in
                calls += 1
                if calls == 20 { throw Stop() }
            }
        }
        #expect(calls == 20)
        #expect(throws: ModelError.self) { try db.forEach(with: Filter<Reading>(), batchSize: -1) { _ in } }
    }
}
