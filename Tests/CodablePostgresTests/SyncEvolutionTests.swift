#if Postgres
import CodableSync
import Foundation
import Testing

/// Sync across app versions, migrations, several syncs of one file, lost answers, and a server
/// whose history changed (restored from a backup, tombstones forgotten).
@Suite("Sync: schema evolution, several syncs of a file, starting over", .serverShare, .needsPostgres, .serialized, .hangLimit(minutes: 3))
struct SyncEvolutionTests {
    typealias Note = SyncTests.Note
    typealias Folder = SyncTests.Folder
    static let models: [any (Model & Sendable).Type] = [Note.self, Folder.self]

    /// This app version's task.
    #if Macros
    @RowCodable
    #endif
    struct Chore: UUIDModel, Sendable, Equatable {
        let id: UUID
        var title: String
    }

    /// The next app version's task, the same table: it adds a property.
    #if Macros
    @RowCodable
    #endif
    struct NewerChore: UUIDModel, Sendable, Equatable {
        static var tableName: String { "Chore" }
        let id: UUID
        var title: String
        var priority: Int?
    }

    static func path() -> String { SyncTransportTests.temporaryPath() }

    static func states(of sync: SQLite.Sync, during round: () async throws -> Void) async throws -> [SQLite.Sync.State] {
        try await SyncRefusalTests.states(of: sync, during: round)
    }

    @Test("an older app's push keeps the fields a newer model added; the newer app can still clear them")
    func olderAppKeepsNewerFields() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let newer = try SQLite.Database(path: Self.path()), older = try SQLite.Database(path: Self.path())
        // The server runs the newer app version (behind its API, as every device's server).
        let endpoint = try Postgres.SyncServer(database: server, models: [NewerChore.self])
        let syncNewer = try SQLite.Sync(local: newer, transport: endpoint, models: [NewerChore.self])
        let syncOlder = try SQLite.Sync(local: older, transport: endpoint, models: [Chore.self])
        let chore = NewerChore(id: UUID(), title: "water plants", priority: 3)
        try await newer.save(chore)
        try await syncNewer.sync()
        try await syncOlder.sync()
        #expect(try await older.get(Chore.self, id: chore.id) == Chore(id: chore.id, title: "water plants"))
        try await older.save(Chore(id: chore.id, title: "water all plants"))
        try await syncOlder.sync()
        #expect(try await server.get(NewerChore.self, id: chore.id) == NewerChore(id: chore.id, title: "water all plants", priority: 3))
        try await syncNewer.sync()
        #expect(try await newer.get(NewerChore.self, id: chore.id)?.priority == 3)
        // The newer app knows the field: setting it to nil is a change like any other.
        try await newer.save(NewerChore(id: chore.id, title: "water all plants", priority: nil))
        try await syncNewer.sync()
        #expect(try await server.get(NewerChore.self, id: chore.id)?.priority == nil)
        await server.close()
    }

    @Test("an app and its widget sync one file with different models: neither drops the other's changes")
    func twoSyncsOfOneFile() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let local = try SQLite.Database(path: Self.path())
        let widget = try SQLite.Sync(local: local, server: server, models: [Note.self])
        let app = try SQLite.Sync(local: local, server: server, models: Self.models)
        try await app.sync()
        try await widget.sync()
        let note = Note(id: UUID(), text: "in a folder", done: false)
        try await local.save(Folder(id: UUID(), name: "Inbox", notes: [note]))
        try await widget.sync()
        #expect(try await server.get(Note.self) == [note])
        #expect(try await local.read("SELECT count(*) AS n FROM codablesync_outbox WHERE tbl = 'Folder'").first?["n"]?.int64Value ?? 0 > 0)
        try await app.sync()
        #expect(try await server.get(Folder.self).first?.notes == [note])
        #expect(try await local.read("SELECT count(*) AS n FROM codablesync_outbox").first?["n"]?.int64Value == 0)
        // Pulls: the widget's pass over the folders another device made; the app still gets them.
        let other = try SQLite.Database(path: Self.path())
        let syncOther = try SQLite.Sync(local: other, server: server, models: Self.models)
        let elsewhere = Folder(id: UUID(), name: "made elsewhere", notes: [Note(id: UUID(), text: "its note", done: true)])
        try await other.save(elsewhere)
        try await syncOther.sync()
        try await widget.sync()
        #expect(try await local.get(Note.self, id: elsewhere.notes[0].id) == elsewhere.notes[0])
        #expect(try await local.get(Folder.self, id: elsewhere.id) == nil)
        try await app.sync()
        #expect(try await local.get(Folder.self, id: elsewhere.id) == elsewhere)
        // Each keeps its own device id and pushes: a lost answer of one is not the other's.
        #expect(try await widget.deviceID != app.deviceID)
        await server.close()
    }

    /// Applies pushes, and loses the answer of the first one.
    final class LosesFirstAnswer: SyncTransport, @unchecked Sendable {  // `lost` is guarded by `lock`
        struct Lost: Error {}
        let server: Postgres.SyncServer
        private let lock = NSLock()
        private var lost = false
        init(server: Postgres.SyncServer) { self.server = server }
        func push(_ push: SyncPush) async throws -> SyncPushResult {
            let answer = try await server.push(push)
            if lock.withLock({ let first = !lost; lost = true; return first }) { throw Lost() }
            return answer
        }
        func pull(_ pull: SyncPull) async throws -> SyncPullResult { try await server.pull(pull) }
    }

    @Test("a push sent again after a lost answer goes whole, whatever the batch size is now: nothing of it is applied twice")
    func resendWithSmallerBatch() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let endpoint = try Postgres.SyncServer(database: server, models: Self.models)
        let pathA = Self.path()
        let a = try SQLite.Database(path: pathA), b = try SQLite.Database(path: Self.path())
        let syncB = try SQLite.Sync(local: b, server: server, models: Self.models)
        let notes = (0..<4).map { Note(id: UUID(), text: "note \($0)", done: false) }
        try await a.save(notes)
        let first = try SQLite.Sync(local: a, transport: LosesFirstAnswer(server: endpoint), models: Self.models, batchSize: 10)
        await #expect(throws: LosesFirstAnswer.Lost.self) { try await first.sync() }
        // Meanwhile B edits the last note.
        try await syncB.sync()
        var edited = notes[3]
        edited.text = "edited on B"
        try await b.save(edited)
        try await syncB.sync()
        // A again, with smaller batches: its push goes again whole, is recognised, and changes nothing.
        let again = try SQLite.Sync(local: a, server: server, models: Self.models, batchSize: 2)
        let conflicts = try await SyncTransportTests.conflicts(of: again) { try await again.sync() }
        #expect(conflicts.isEmpty, "\(conflicts)")
        #expect(try await server.get(Note.self, id: edited.id) == edited)
        #expect(try await a.get(Note.self, id: edited.id) == edited)
        await server.close()
    }

    @Test("a migration that rebuilds a synced table is not a storm of local changes, and the triggers come back")
    func tableRebuildIsNoLocalChange() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let a = try SQLite.Database(path: Self.path()), b = try SQLite.Database(path: Self.path())
        let syncA = try SQLite.Sync(local: a, server: server, models: Self.models)
        let syncB = try SQLite.Sync(local: b, server: server, models: Self.models)
        let note = Note(id: UUID(), text: "v1", done: false)
        try await a.save(note)
        try await syncA.sync()
        try await syncB.sync()
        // A's migration rebuilds the table (its triggers go with it).
        var migrator = SQLite.Migrator()
        migrator.registerMigration("rebuild Note") { db in
            let create = try db.read("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'Note'").first?["sql"]?.stringValue ?? ""
            let renamed = create.replacingOccurrences(of: #"CREATE TABLE "Note""#, with: #"CREATE TABLE "Note_new""#)
            _ = try db.execute(raw: """
                \(renamed);
                INSERT INTO "Note_new" SELECT * FROM "Note";
                DROP TABLE "Note";
                ALTER TABLE "Note_new" RENAME TO "Note";
                """)
        }
        try migrator.migrate(a)
        // B edits the note meanwhile; A's next round must not overwrite it with A's copy.
        let fromB = Note(id: note.id, text: "B's edit", done: true)
        try await b.save(fromB)
        try await syncB.sync()
        let conflicts = try await SyncTransportTests.conflicts(of: syncA) { try await syncA.sync() }
        #expect(conflicts.isEmpty)
        #expect(try await server.get(Note.self, id: note.id) == fromB)
        #expect(try await a.get(Note.self, id: note.id) == fromB)
        // The triggers are back: A's next edit travels.
        let fromA = Note(id: note.id, text: "A's edit", done: true)
        try await a.save(fromA)
        try await syncA.sync()
        #expect(try await server.get(Note.self, id: note.id) == fromA)
        await server.close()
    }

    @Test("a server restored from a backup is noticed: devices pull everything again and upload what it lost")
    func restoredServer() async throws {
        let url = try await TestServer.shared.freshDatabaseURL()
        let a = try SQLite.Database(path: Self.path()), b = try SQLite.Database(path: Self.path())
        let before = Note(id: UUID(), text: "before the backup", done: false)
        let afterA = Note(id: UUID(), text: "after the backup, from A", done: false)
        let afterB = Note(id: UUID(), text: "after the backup, from B", done: false)
        do {
            let server = try await Postgres.Database(url: url)
            let syncA = try SQLite.Sync(local: a, server: server, models: Self.models)
            let syncB = try SQLite.Sync(local: b, server: server, models: Self.models)
            try await a.save(before)
            try await syncA.sync()
            try await syncB.sync()
            await server.close()
        }
        let backup = try await TestServer.shared.copyOfDatabase(at: url)
        do {
            let server = try await Postgres.Database(url: url)
            let syncA = try SQLite.Sync(local: a, server: server, models: Self.models)
            let syncB = try SQLite.Sync(local: b, server: server, models: Self.models)
            try await a.save(afterA)
            try await syncA.sync()
            try await b.save(afterB)
            try await syncB.sync()
            try await syncA.sync()
            await server.close()
        }
        // The server comes back from the backup: it has only the first note.
        let restored = try await Postgres.Database(url: backup)
        let syncA = try SQLite.Sync(local: a, server: restored, models: Self.models)
        let syncB = try SQLite.Sync(local: b, server: restored, models: Self.models)
        let states = try await Self.states(of: syncA) { try await syncA.sync() }
        #expect(states.contains { if case .startingOver(.serverRestored) = $0 { true } else { false } }, "\(states)")
        try await syncB.sync()
        try await syncA.sync()
        try await syncB.sync()
        let byID = { (x: Note, y: Note) in x.id.uuidString < y.id.uuidString }
        let expected = [before, afterA, afterB].sorted(by: byID)
        #expect(try await restored.get(Note.self).sorted(by: byID) == expected)
        #expect(try await a.get(Note.self).sorted(by: byID) == expected)
        #expect(try await b.get(Note.self).sorted(by: byID) == expected)
        // Settled: the next round starts nothing over.
        let calm = try await Self.states(of: syncA) { try await syncA.sync() }
        #expect(!calm.contains { if case .startingOver = $0 { true } else { false } })
        await restored.close()
    }

    @Test("a server restored from a file-system snapshot (its log behind a device's version) is noticed by that device")
    func serverBehindADevice() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let a = try SQLite.Database(path: Self.path()), b = try SQLite.Database(path: Self.path())
        let syncA = try SQLite.Sync(local: a, server: server, models: Self.models)
        let syncB = try SQLite.Sync(local: b, server: server, models: Self.models)
        let first = Note(id: UUID(), text: "in the snapshot", done: false), lost = Note(id: UUID(), text: "after it", done: false)
        try await a.save(first)
        try await syncA.sync()
        try await a.save(lost)
        try await syncA.sync()
        try await syncB.sync()
        // Back to the snapshot: the later note, its log entry and the log's counter are gone.
        try await server.inTransaction { tx in
            try await tx.execute("SET LOCAL session_replication_role = replica")
            try await tx.execute(#"DELETE FROM "Note" WHERE "text" = 'after it'"#)
            try await tx.execute("DELETE FROM codablesync_changes WHERE version > (SELECT min(version) FROM codablesync_changes)")
            try await tx.execute("SELECT setval('codablesync_changes_version_seq', (SELECT max(version) FROM codablesync_changes))")
        }
        #expect(try await server.get(Note.self, id: lost.id) == nil)
        let states = try await Self.states(of: syncB) { try await syncB.sync() }
        #expect(states.contains { if case .startingOver(.serverRestored) = $0 { true } else { false } }, "\(states)")
        try await syncB.sync()
        #expect(try await server.get(Note.self, id: lost.id) == lost)
        try await syncA.sync()
        #expect(try await a.get(Note.self).count == 2)
        await server.close()
    }

    @Test("a device offline past the tombstone horizon starts over: the rows deleted meanwhile go, its own changes stay")
    func offlinePastTheHorizon() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let endpoint = try Postgres.SyncServer(database: server, models: Self.models)
        let a = try SQLite.Database(path: Self.path()), b = try SQLite.Database(path: Self.path())
        let syncA = try SQLite.Sync(local: a, transport: endpoint, models: Self.models)
        let syncB = try SQLite.Sync(local: b, transport: endpoint, models: Self.models)
        let gone = Note(id: UUID(), text: "deleted while B is away", done: false), kept = Note(id: UUID(), text: "kept", done: false)
        let folder = Folder(id: UUID(), name: "Inbox", notes: [gone, kept])
        try await a.save(folder)
        try await syncA.sync()
        try await syncB.sync()
        _ = try await a.delete(gone)
        try await syncA.sync()
        #expect(try await endpoint.compact(deletedBefore: Date().addingTimeInterval(60)) == 1)
        #expect(try await endpoint.compact(deletedBefore: Date().addingTimeInterval(60)) == 0)
        // An app from before start-overs is told, not answered "nothing new".
        let old = await #expect(throws: SyncError.self) { _ = try await endpoint.pull(SyncPull(device: "old", after: 1, limit: 10)) }
        #expect(old?.code == .startOverNeeded)
        let madeOffline = Note(id: UUID(), text: "made by B offline", done: false)
        try await b.save(madeOffline)
        // B's stale folder still holds the deleted note, and is pushed before B's pull sees the
        // horizon: the tombstone is forgotten, and still the note does not come back.
        var renamed = folder
        renamed.name = "Renamed by B"
        try await b.save(renamed)
        let states = try await Self.states(of: syncB) { try await syncB.sync() }
        #expect(states.contains { if case .startingOver(.offlineTooLong) = $0 { true } else { false } }, "\(states)")
        #expect(try await b.get(Note.self, id: gone.id) == nil)
        #expect(try await b.get(Note.self, id: madeOffline.id) == madeOffline)
        #expect(try await server.get(Note.self, id: madeOffline.id) == madeOffline)
        #expect(try await server.get(Note.self, id: gone.id) == nil)
        #expect(try await server.get(Folder.self, id: folder.id) == Folder(id: folder.id, name: "Renamed by B", notes: [kept]))
        #expect(try await b.get(Folder.self, id: folder.id) == Folder(id: folder.id, name: "Renamed by B", notes: [kept]))
        // A, up to date, is past the horizon: it goes on as usual.
        let calm = try await Self.states(of: syncA) { try await syncA.sync() }
        #expect(!calm.contains { if case .startingOver = $0 { true } else { false } })
        #expect(try await a.get(Note.self, id: madeOffline.id) == madeOffline)
        await server.close()
    }

    @Test("a start over that takes many pulls keeps the rows this device pushed itself: every page brings them")
    func startOverInManyPullsKeepsOwnPushes() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let endpoint = try Postgres.SyncServer(database: server, models: Self.models)
        let a = try SQLite.Database(path: Self.path()), b = try SQLite.Database(path: Self.path())
        let syncA = try SQLite.Sync(local: a, transport: endpoint, models: Self.models)
        // One change a page: B's start over takes a pull for each row.
        let syncB = try SQLite.Sync(local: b, transport: endpoint, models: Self.models, batchSize: 1)
        try await a.save(Note(id: UUID(), text: "the log's first entry", done: false))
        try await syncA.sync()
        // B's own pushes: the log marks them as B's, and B's ordinary pulls leave them out.
        let mine = Note(id: UUID(), text: "made by B", done: false)
        try await b.save(Folder(id: UUID(), name: "B's", notes: [mine]))
        try await syncB.sync()
        let gone = Note(id: UUID(), text: "deleted while B is away", done: false)
        try await a.save(gone)
        try await syncA.sync()
        try await syncB.sync()
        _ = try await a.delete(gone)
        try await syncA.sync()
        #expect(try await endpoint.compact(deletedBefore: Date().addingTimeInterval(60)) == 1)
        let states = try await Self.states(of: syncB) { try await syncB.sync() }
        #expect(states.contains { if case .startingOver(.offlineTooLong) = $0 { true } else { false } }, "\(states)")
        #expect(try await b.get(Note.self, id: mine.id) == mine, "B's own note is still on B")
        #expect(try await b.get(Note.self, id: gone.id) == nil)
        let byID = { (notes: [Note]) in notes.sorted { $0.id.uuidString < $1.id.uuidString } }
        #expect(byID(try await b.get(Note.self)) == byID(try await server.get(Note.self)))
        let folders = { (folders: [Folder]) in folders.sorted { $0.id.uuidString < $1.id.uuidString } }
        #expect(folders(try await b.get(Folder.self)) == folders(try await server.get(Folder.self)))
        // And B's next ordinary pulls leave its own pushes out again.
        var renamed = try #require(try await b.get(Folder.self).first)
        renamed.name = "renamed by B"
        try await b.save(renamed)
        let pulled = try await Self.states(of: syncB) { try await syncB.sync() }
        #expect(!pulled.contains { if case .pulling = $0 { true } else { false } }, "\(pulled)")
        await server.close()
    }

    @Test("when the newest changes were deletes a compaction forgot, a new device's pulls end past the horizon: it never starts over")
    func newDeviceAfterACompactionOfTheNewestChanges() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let endpoint = try Postgres.SyncServer(database: server, models: Self.models)
        let a = try SQLite.Database(path: Self.path())
        let syncA = try SQLite.Sync(local: a, transport: endpoint, models: Self.models)
        let kept = Note(id: UUID(), text: "kept", done: false), gone = Note(id: UUID(), text: "gone", done: false)
        try await a.save([kept, gone])
        try await syncA.sync()
        _ = try await a.delete(gone)
        try await syncA.sync()
        #expect(try await endpoint.compact(deletedBefore: Date().addingTimeInterval(60)) == 1)
        // A new device pulling a row a page, and one pulling everything at once.
        for batchSize in [1, 500] {
            let c = try SQLite.Database(path: Self.path())
            let syncC = try SQLite.Sync(local: c, transport: endpoint, models: Self.models, batchSize: batchSize)
            for _ in 0..<2 {
                let states = try await Self.states(of: syncC) { try await syncC.sync() }
                #expect(!states.contains { if case .startingOver = $0 { true } else { false } }, "\(states)")
            }
            #expect(try await c.get(Note.self) == [kept])
        }
        await server.close()
    }

    /// A server from before `SyncPull.horizon` and `restarting`: it never hears them.
    struct OlderServer: SyncTransport {
        let server: Postgres.SyncServer
        func push(_ push: SyncPush) async throws -> SyncPushResult { try await server.push(push) }
        func pull(_ pull: SyncPull) async throws -> SyncPullResult {
            var older = pull
            older.horizon = nil
            older.restarting = nil
            return try await server.pull(older)
        }
    }

    @Test("a start over through a server from before the pull's horizon deletes nothing it has not received: it waits, and ends once the server is updated")
    func startOverThroughAnOlderServer() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let endpoint = try Postgres.SyncServer(database: server, models: Self.models)
        let a = try SQLite.Database(path: Self.path()), b = try SQLite.Database(path: Self.path())
        let syncA = try SQLite.Sync(local: a, transport: endpoint, models: Self.models)
        try await a.save(Note(id: UUID(), text: "the log's first entry", done: false))
        try await syncA.sync()
        let b0 = try SQLite.Sync(local: b, transport: endpoint, models: Self.models, batchSize: 1)
        let mine = Note(id: UUID(), text: "made by B", done: false)
        try await b.save(mine)
        try await b0.sync()
        let gone = Note(id: UUID(), text: "deleted while B is away", done: false)
        try await a.save(gone)
        try await syncA.sync()
        try await b0.sync()
        _ = try await a.delete(gone)
        try await syncA.sync()
        #expect(try await endpoint.compact(deletedBefore: Date().addingTimeInterval(60)) == 1)
        let older = try SQLite.Sync(local: b, transport: OlderServer(server: endpoint), models: Self.models, batchSize: 1)
        for _ in 0..<2 { try await older.sync() }
        #expect(try await b.get(Note.self, id: mine.id) == mine, "nothing deleted that the pages did not bring")
        let updated = try SQLite.Sync(local: b, transport: endpoint, models: Self.models, batchSize: 1)
        try await updated.sync()
        let byID = { (notes: [Note]) in notes.sorted { $0.id.uuidString < $1.id.uuidString } }
        #expect(byID(try await b.get(Note.self)) == byID(try await server.get(Note.self)))
        #expect(try await b.get(Note.self, id: gone.id) == nil)
        await server.close()
    }

    /// Runs `hook` once, before the pull numbered `at` (from 1) goes to the server.
    actor PullHook: SyncTransport {
        let server: Postgres.SyncServer
        let at: Int
        let hook: @Sendable () async throws -> Void
        var pulls = 0
        init(server: Postgres.SyncServer, at: Int, hook: @escaping @Sendable () async throws -> Void) {
            self.server = server
            self.at = at
            self.hook = hook
        }
        func push(_ push: SyncPush) async throws -> SyncPushResult { try await server.push(push) }
        func pull(_ pull: SyncPull) async throws -> SyncPullResult {
            pulls += 1
            if pulls == at { try await hook() }
            return try await server.pull(pull)
        }
    }

    @Test("a compaction in the middle of a start over that forgets the delete of a row already received makes it begin again: the row goes")
    func compactionDuringAStartOver() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let endpoint = try Postgres.SyncServer(database: server, models: Self.models)
        let a = try SQLite.Database(path: Self.path()), b = try SQLite.Database(path: Self.path())
        let syncA = try SQLite.Sync(local: a, transport: endpoint, models: Self.models)
        let first = Note(id: UUID(), text: "first, received on the start over's first page", done: false)
        try await a.save(first)
        try await syncA.sync()
        for index in 0..<4 { try await a.save(Note(id: UUID(), text: "note \(index)", done: false)) }
        try await syncA.sync()
        // B syncs, goes away; a delete it never pulls is forgotten: B must start over.
        let setUp = try SQLite.Sync(local: b, transport: endpoint, models: Self.models)
        try await setUp.sync()
        let away = Note(id: UUID(), text: "deleted while B is away", done: false)
        try await a.save(away)
        try await syncA.sync()
        _ = try await a.delete(away)
        try await syncA.sync()
        #expect(try await endpoint.compact(deletedBefore: Date().addingTimeInterval(60)) == 1)
        // B's start over, one row a page: after its first page (which brings `first`), `first` is
        // deleted and that delete forgotten at once.
        let deleteFirst: @Sendable () async throws -> Void = {
            _ = try await a.delete(first)
            try await syncA.sync()
            _ = try await endpoint.compact(deletedBefore: Date().addingTimeInterval(60))
        }
        // Pull 1 sees the horizon and starts over; pull 2 is its first page; before pull 3.
        let hooked = PullHook(server: endpoint, at: 3, hook: deleteFirst)
        let syncB = try SQLite.Sync(local: b, transport: hooked, models: Self.models, batchSize: 1)
        let states = try await Self.states(of: syncB) { try await syncB.sync() }
        let startOvers = states.filter { if case .startingOver(.offlineTooLong) = $0 { true } else { false } }
        #expect(startOvers.count == 2, "the start over begins again: \(states)")
        #expect(try await b.get(Note.self, id: first.id) == nil, "the row deleted meanwhile is gone")
        let byID = { (notes: [Note]) in notes.sorted { $0.id.uuidString < $1.id.uuidString } }
        #expect(byID(try await b.get(Note.self)) == byID(try await server.get(Note.self)))
        await server.close()
    }

    @Test("past the retention: an old copy of a device's file starts over under a new device id, keeping its change; an old push delivered again is refused and changes nothing")
    func pushesOlderThanTheRetention() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let endpoint = try Postgres.SyncServer(database: server, models: Self.models)
        let original = try SQLite.Database(path: Self.path())
        let syncOriginal = try SQLite.Sync(local: original, transport: endpoint, models: Self.models)
        let first = Note(id: UUID(), text: "first", done: false)
        try await original.save(first)
        try await syncOriginal.sync()
        // A copy of the file now (a backup), and an old push as the network could deliver again.
        let copyPath = Self.path()
        try await original.backup(to: copyPath)
        let oldPush = SyncPush(device: try await syncOriginal.deviceID, token: UUID().uuidString, acknowledged: nil, changes: [])
        // The original goes on: its later pushes, answered; then the server forgets older pushes.
        var edited = first
        for text in ["second", "third"] {
            edited.text = text
            try await original.save(edited)
            try await syncOriginal.sync()
        }
        _ = try await endpoint.compact(deletedBefore: Date().addingTimeInterval(60))

        // The copy wakes up with a change of its own, over a value long overwritten.
        let copy = try SQLite.Database(path: copyPath)
        // One change a page: the copy's start over takes a pull for each row.
        let syncCopy = try SQLite.Sync(local: copy, transport: endpoint, models: Self.models, batchSize: 1)
        #expect(try await syncCopy.deviceID == syncOriginal.deviceID)
        let fromCopy = Note(id: UUID(), text: "made on the copy", done: false)
        try await copy.save(fromCopy)
        let states = try await Self.states(of: syncCopy) { try await syncCopy.sync() }
        #expect(states.contains { if case .startingOver(.forgotten) = $0 { true } else { false } }, "\(states)")
        #expect(try await syncCopy.deviceID != syncOriginal.deviceID, "the copy goes on under a new device id")
        try await syncCopy.sync()
        #expect(try await copy.get(Note.self, id: first.id)?.text == "third", "the copy has the server's values")
        #expect(try await server.get(Note.self, id: fromCopy.id) == fromCopy, "the copy's own change reached the server")
        #expect(try await copy.get(Note.self, id: fromCopy.id) == fromCopy, "and stayed on the copy")
        #expect(try await server.get(Note.self, id: first.id)?.text == "third", "nothing old came back")

        // An old push of the original (its acknowledged push long forgotten) delivered again.
        var stale = oldPush
        stale.acknowledged = UUID().uuidString
        stale.changes = [SyncChange(table: Note.tableName, id: first.id.uuidString,
                                    value: String(decoding: try JSONEncoder().encode(first), as: UTF8.self), seq: 1, version: 0)]
        let refused = await #expect(throws: SyncError.self) { _ = try await endpoint.push(stale) }
        #expect(refused?.code == .startOverNeeded)
        #expect(refused?.message.contains("retention") == true, "\(String(describing: refused))")
        #expect(try await server.get(Note.self, id: first.id)?.text == "third")
        // The original is not disturbed.
        try await syncOriginal.sync()
        #expect(try await original.get(Note.self, id: fromCopy.id) == fromCopy)
        await server.close()
    }
}
#endif
