#if Postgres
import CodableSync
import Foundation
import Testing

/// Rows a device's models cannot decode: a newer app version wrote them.
@Suite("Sync: rows a device cannot decode", .serverShare, .needsPostgres, .serialized, .hangLimit(minutes: 3))
struct SyncUndecodableTests {
    /// This app version's job: it knows two priorities.
    #if Macros
    @RowCodable
    #endif
    struct Job: UUIDModel, Sendable, Equatable {
        enum Priority: String, Codable, Sendable { case low, high }
        let id: UUID
        var title: String
        var priority: Priority
    }

    /// The next app version's job, the same table: it also knows `urgent`.
    #if Macros
    @RowCodable
    #endif
    struct NewerJob: UUIDModel, Sendable, Equatable {
        enum Priority: String, Codable, Sendable { case low, high, urgent }
        static var tableName: String { "Job" }
        let id: UUID
        var title: String
        var priority: Priority
    }

    /// The server side runs the newer app version (its models read every row).
    static func endpoint(_ server: Postgres.Database) throws -> Postgres.SyncServer {
        try Postgres.SyncServer(database: server, models: [NewerJob.self])
    }

    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("sync-\(UUID().uuidString).sqlite").path
    }

    @Test("a row a device cannot decode is kept aside and reported; pulls go on; a newer app version applies it")
    func undecodableRowIsSetAside() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let path = Self.temporaryPath()
        let device = try SQLite.Database(path: path)
        let sync = try SQLite.Sync(local: device, transport: Self.endpoint(server), models: [Job.self])
        let plain = Job(id: UUID(), title: "plain", priority: .low)
        try await device.save(plain)
        try await sync.sync()

        // Server-side code of a newer app version writes a value this version cannot read, and
        // another that it can.
        let urgent = NewerJob(id: UUID(), title: "urgent", priority: .urgent)
        let later = Job(id: UUID(), title: "later", priority: .high)
        try await server.save(urgent)
        try await server.save(later)
        let states = sync.states
        try await sync.sync()   // threw before: the one row stopped every pull of the device
        #expect(try await device.get(Job.self, id: later.id) == later, "the pull did not go on")
        #expect(try await device.count(Job.self) == 2)
        let kept = try await sync.undecodableRows()
        #expect(kept.map(\.id) == [urgent.id.uuidString])
        #expect(kept.first?.model == "Job")
        #expect(kept.first?.error.contains("urgent") == true, "\(kept)")
        var reported: [SQLite.Sync.UndecodableRow] = []
        for await state in states {
            if case .undecodable(let row) = state { reported.append(row) }
            if case .idle = state { break }
        }
        #expect(reported.map(\.id) == [urgent.id.uuidString])

        // Later server changes still arrive, and the row is not reported again.
        let another = Job(id: UUID(), title: "another", priority: .low)
        try await server.save(another)
        try await sync.sync()
        #expect(try await device.get(Job.self, id: another.id) == another)
        #expect(try await sync.undecodableRows().count == 1)

        // The newer app version on the same file reads it at its first round.
        let newer = try SQLite.Sync(local: device, transport: Self.endpoint(server), models: [NewerJob.self])
        try await newer.sync()
        #expect(try await device.get(NewerJob.self, id: urgent.id) == urgent)
        #expect(try await newer.undecodableRows().isEmpty)
        #expect(try await device.count(NewerJob.self) == 4)
    }

    @Test("a row kept aside is replaced by its next readable change, and removed by its delete")
    func laterChangesReplaceAKeptRow() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let device = try SQLite.Database(path: Self.temporaryPath())
        let sync = try SQLite.Sync(local: device, transport: Self.endpoint(server), models: [Job.self])
        try await sync.sync()
        var first = NewerJob(id: UUID(), title: "first", priority: .urgent)
        let second = NewerJob(id: UUID(), title: "second", priority: .urgent)
        try await server.save([first, second])
        try await sync.sync()
        #expect(Set(try await sync.undecodableRows().map(\.id)) == [first.id.uuidString, second.id.uuidString])
        #expect(try await device.count(Job.self) == 0)

        first.priority = .high   // readable by this version now
        try await server.save(first)
        _ = try await server.delete(second)
        try await sync.sync()
        #expect(try await sync.undecodableRows().isEmpty)
        #expect(try await device.get(Job.self, id: first.id) == Job(id: first.id, title: "first", priority: .high))
        #expect(try await device.count(Job.self) == 1)
    }

    @Test("a device's stale copy of a row kept aside, edited and pushed, reports the server's value it overwrote")
    func editingAStaleCopyReportsTheOverwrite() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let device = try SQLite.Database(path: Self.temporaryPath())
        let sync = try SQLite.Sync(local: device, transport: Self.endpoint(server), models: [Job.self])
        var job = Job(id: UUID(), title: "shared", priority: .low)
        try await device.save(job)
        try await sync.sync()
        // The newer app version on the server makes it urgent: this device cannot read it.
        try await server.save(NewerJob(id: job.id, title: "shared", priority: .urgent))
        try await sync.sync()
        #expect(try await sync.undecodableRows().map(\.id) == [job.id.uuidString])
        #expect(try await device.get(Job.self, id: job.id) == job, "the device keeps its own copy meanwhile")
        // Editing that copy overwrites a change the device never saw: the sync says so.
        job.title = "edited on the old copy"
        try await device.save(job)
        var conflicts: [SQLite.Sync.Conflict] = []
        let states = sync.states
        try await sync.sync()
        for await state in states {
            if case .conflict(let conflict) = state { conflicts.append(conflict) }
            if case .idle = state { break }
        }
        #expect(conflicts.map(\.id) == [job.id.uuidString], "the overwrite of the urgent value was not reported")
        #expect(conflicts.first?.losingValue == nil)
        #expect(conflicts.first?.losingJSON?.contains("urgent") == true, "\(conflicts)")
        #expect(try await server.get(NewerJob.self, id: job.id)?.priority == .low)
        // The push's own value came back in the pull: nothing is kept aside any more.
        #expect(try await sync.undecodableRows().isEmpty)
    }

    @Test("a row the server's own model cannot decode stops no pull: it goes to the devices as stored, older ones keep it aside, a newer one reads it")
    func rowTheServerCannotDecode() async throws {
        let server = try await TestServer.shared.freshDatabase()
        // The server runs the older app version's model.
        let endpoint = try Postgres.SyncServer(database: server, models: [Job.self])
        let writer = try SQLite.Database(path: Self.temporaryPath()), reader = try SQLite.Database(path: Self.temporaryPath())
        let syncWriter = try SQLite.Sync(local: writer, transport: endpoint, models: [Job.self])
        let syncReader = try SQLite.Sync(local: reader, transport: endpoint, models: [Job.self])
        let plain = Job(id: UUID(), title: "plain", priority: .low)
        try await writer.save(plain)
        try await syncWriter.sync()
        // Server-side code of a newer app version writes a value the server's model cannot read.
        let urgent = NewerJob(id: UUID(), title: "urgent", priority: .urgent)
        try await server.save(urgent)
        let later = Job(id: UUID(), title: "later", priority: .high)
        try await writer.save(later)
        try await syncWriter.sync()   // its pull brings the urgent row too: threw before, for every device

        let states = try await SyncEvolutionTests.states(of: syncReader) { try await syncReader.sync() }
        #expect(try await reader.get(Job.self).map(\.title).sorted() == ["later", "plain"])
        #expect(states.contains { if case .undecodable(let row) = $0 { row.id == urgent.id.uuidString } else { false } }, "\(states)")
        #expect(try await syncReader.undecodableRows().map(\.id) == [urgent.id.uuidString])
        // A newer app version's device reads the row as the server stores it.
        let newer = try SQLite.Database(path: Self.temporaryPath())
        try await SQLite.Sync(local: newer, transport: endpoint, models: [NewerJob.self]).sync()
        #expect(try await newer.get(NewerJob.self, id: urgent.id) == urgent)
        #expect(try await newer.count(NewerJob.self) == 3)
        await server.close()
    }
}
#endif
