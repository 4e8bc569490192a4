#if Postgres
import CodableSync
import Foundation
import Testing

/// SQLite.Sync through its Codable protocol (as an app's own API carries it), and the cases where
/// two writers meet in ways a plain push or pull does not show.
@Suite("Sync: the transport, copies, refused deletes", .serverShare, .needsPostgres, .serialized, .hangLimit(minutes: 3))
struct SyncTransportTests {
    typealias Note = SyncTests.Note
    typealias Folder = SyncTests.Folder

    /// A comment cannot exist without its note (a non-optional to-one).
    #if Macros
    @RowCodable
    #endif
    struct Comment: UUIDModel, Sendable, Equatable {
        let id: UUID
        var note: Note
        var text: String
    }

    static let models: [any (Model & Sendable).Type] = [Note.self, Folder.self, Comment.self]

    /// Merged field by field (SyncMergeable's default).
    #if Macros
    @RowCodable
    #endif
    struct Card: UUIDModel, SyncMergeable, Sendable, Equatable {
        let id: UUID
        var title: String
        var done: Bool
        var note: String?
    }

    /// Merged by a merge of its own: the union of both sides' names.
    #if Macros
    @RowCodable
    #endif
    struct Labels: Model, SyncMergeable, Sendable, Equatable {
        var id: String
        var names: [String]
        static func merge(_ device: Labels, with server: Labels, changed: Set<String>?) throws -> Labels {
            Labels(id: device.id, names: Array(Set(device.names).union(server.names)).sorted())
        }
    }

    /// What an app's HTTP API does: every request and answer goes through JSON, and the server
    /// side is a `Postgres.SyncServer` of its own. `beforePull` runs before each pull is sent.
    struct JSONTransport: SyncTransport {
        let server: Postgres.SyncServer
        var beforePull: @Sendable () async throws -> Void = {}

        func push(_ push: SyncPush) async throws -> SyncPushResult {
            let request = try JSONDecoder().decode(SyncPush.self, from: JSONEncoder().encode(push))
            return try JSONDecoder().decode(SyncPushResult.self, from: JSONEncoder().encode(try await server.push(request)))
        }

        func pull(_ pull: SyncPull) async throws -> SyncPullResult {
            try await beforePull()
            let request = try JSONDecoder().decode(SyncPull.self, from: JSONEncoder().encode(pull))
            return try JSONDecoder().decode(SyncPullResult.self, from: JSONEncoder().encode(try await server.pull(request)))
        }
    }

    /// Keeps every push a device sent and its answer, as a retrying HTTP client or a proxy could,
    /// to send them again later.
    final class RecordingTransport: SyncTransport, @unchecked Sendable {  // `sent` is guarded by `lock`
        let server: Postgres.SyncServer
        private let lock = NSLock()
        private var sent: [(push: SyncPush, answer: SyncPushResult)] = []

        init(server: Postgres.SyncServer) { self.server = server }

        var pushes: [(push: SyncPush, answer: SyncPushResult)] { lock.withLock { sent } }

        func push(_ push: SyncPush) async throws -> SyncPushResult {
            let answer = try await server.push(push)
            lock.withLock { sent.append((push, answer)) }
            return answer
        }

        func pull(_ pull: SyncPull) async throws -> SyncPullResult {
            try await server.pull(pull)
        }
    }

    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("sync-\(UUID().uuidString).sqlite").path
    }

    /// The conflicts `sync` reports during one `round`.
    static func conflicts(of sync: SQLite.Sync, during round: () async throws -> Void) async throws -> [SQLite.Sync.Conflict] {
        let states = sync.states
        try await round()
        var found: [SQLite.Sync.Conflict] = []
        for await state in states {
            if case .conflict(let conflict) = state { found.append(conflict) }
            if case .idle = state { break }
        }
        return found
    }

    @Test("a push that arrives again later, in any order, changes nothing and gets its first answer")
    func latePushReplayChangesNothing() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let endpoint = try Postgres.SyncServer(database: server, models: Self.models)
        let recorder = RecordingTransport(server: endpoint)
        let a = try SQLite.Database(path: Self.temporaryPath())
        let syncA = try SQLite.Sync(local: a, transport: recorder, models: Self.models)
        var note = Note(id: UUID(), text: "first", done: false)
        try await a.save(note)
        try await syncA.sync()
        note.text = "second"
        try await a.save(note)
        try await syncA.sync()
        let kept = Note(id: UUID(), text: "kept", done: true)
        try await a.save(kept)
        _ = try await a.delete(note)
        try await syncA.sync()
        let recorded = recorder.pushes
        try #require(recorded.count == 3)

        // The pushes again, late and out of order (a proxy's retries): each gets the answer it got
        // the first time, and none changes anything.
        for index in [0, 1, 0, 2, 1] {
            let answer = try await endpoint.push(recorded[index].push)
            #expect(answer == recorded[index].answer, "push \(index + 1) sent again")
        }
        #expect(try await server.get(Note.self, id: note.id) == nil, "a deleted note came back")
        #expect(try await server.get(Note.self, id: kept.id) == kept)
        // Nothing new for a device that pulls everything, nor for A.
        let b = try SQLite.Database(path: Self.temporaryPath())
        try await SQLite.Sync(local: b, transport: endpoint, models: Self.models).sync()
        #expect(try await b.get(Note.self, id: note.id) == nil)
        #expect(try await b.get(Note.self, id: kept.id) == kept)
        try await syncA.sync()
        #expect(try await a.get(Note.self, id: note.id) == nil)
        #expect(try await a.count(Note.self) == 1)
        // A keeps its identity: its next push is applied as its own, not as a copy's.
        var edited = kept
        edited.text = "edited after the replays"
        try await a.save(edited)
        try await syncA.sync()
        #expect(recorder.pushes.last?.answer.device == nil, "the device was taken for a copy")
        #expect(try await server.get(Note.self, id: kept.id) == edited)
    }

    @Test("devices behind a JSON API converge like direct ones; bad requests are refused whole, naming what is wrong")
    func jsonTransport() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let endpoint = try Postgres.SyncServer(database: server, models: Self.models)
        let a = try SQLite.Database(path: Self.temporaryPath()), b = try SQLite.Database(path: Self.temporaryPath())
        let syncA = try SQLite.Sync(local: a, transport: JSONTransport(server: endpoint), models: Self.models)
        let syncB = try SQLite.Sync(local: b, transport: JSONTransport(server: endpoint), models: Self.models)
        let note = Note(id: UUID(), text: "through JSON, with a \"quote\" and é", done: true)
        try await a.save(Folder(id: UUID(), name: "Inbox", notes: [note]))
        try await a.save(Comment(id: UUID(), note: note, text: "a comment"))
        try await syncA.sync()
        try await syncB.sync()
        #expect(try await b.get(Folder.self).first?.notes == [note])
        #expect(try await b.get(Comment.self).first?.note == note)
        #expect(try await syncA.deviceID != syncB.deviceID)

        // Requests an API could receive from a broken or hostile client: refused, nothing applied.
        let device = try await syncA.deviceID
        let unknown = await #expect(throws: SyncError.self) {
            _ = try await endpoint.push(SyncPush(device: device, token: UUID().uuidString, acknowledged: nil, changes: [
                SyncChange(table: "Nope", id: "x", value: nil, seq: 1)]))
        }
        #expect(unknown?.code == .invalidArgument)
        #expect(unknown?.message.contains("Nope") == true)
        // A value that is not its row's, or not its model's JSON: that change alone is refused.
        let otherID = UUID()
        let mismatched = try await endpoint.push(SyncPush(device: device, token: UUID().uuidString, acknowledged: nil, changes: [
            SyncChange(table: Note.tableName, id: otherID.uuidString, value: #"{"id":"\#(note.id)","text":"x","done":false}"#, seq: 9)]))
        #expect(mismatched.refused.map(\.reason) == [.undecodable])
        #expect(mismatched.refused.first?.message.contains(otherID.uuidString) == true, "\(mismatched)")
        let malformed = try await endpoint.push(SyncPush(device: device, token: UUID().uuidString, acknowledged: nil, changes: [
            SyncChange(table: Note.tableName, id: note.id.uuidString, value: #"{"id":"\#(note.id)","text":7}"#, seq: 10)]))
        #expect(malformed.refused.map(\.id) == [note.id.uuidString])
        #expect(malformed.refused.first?.serverValue.map { try? JSONDecoder().decode(Note.self, from: Data($0.utf8)) } == note)
        let limit = await #expect(throws: SyncError.self) { _ = try await endpoint.pull(SyncPull(device: device, after: 0, limit: 0)) }
        #expect(limit?.code == .invalidArgument)
        #expect(try await server.get(Note.self, id: note.id) == note)
        #expect(try await server.get(Note.self, id: otherID) == nil)
        // Still in step afterwards.
        var edited = note
        edited.text = "edited on B"
        try await b.save(edited)
        try await syncB.sync()
        try await syncA.sync()
        #expect(try await a.get(Note.self, id: note.id) == edited)
        await server.close()
    }

    @Test("a server change a pull left alone for a local edit is reported when that edit's push overwrites it")
    func skippedChangeIsAConflict() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let endpoint = try Postgres.SyncServer(database: server, models: Self.models)
        let a = try SQLite.Database(path: Self.temporaryPath()), b = try SQLite.Database(path: Self.temporaryPath())
        let syncA = try SQLite.Sync(local: a, transport: JSONTransport(server: endpoint), models: Self.models)
        let note = Note(id: UUID(), text: "v1", done: false)
        try await a.save(note)
        try await syncA.sync()
        // B edits the note between its push and its pull: the pull leaves A's newer change alone.
        let fromA = Note(id: note.id, text: "A's edit", done: false)
        let fromB = Note(id: note.id, text: "B's edit", done: true)
        let editOnce = Locked(true)
        let syncB = try SQLite.Sync(local: b, transport: JSONTransport(server: endpoint, beforePull: {
            guard editOnce.withLock({ flag in defer { flag = false }; return flag }) else { return }
            try await a.save(fromA)
            try await syncA.sync()
            try await b.save(fromB)
        }), models: Self.models)
        try await syncB.sync()
        #expect(try await b.get(Note.self, id: note.id) == fromB, "the pending edit stays")
        let conflicts = try await Self.conflicts(of: syncB) { try await syncB.sync() }
        #expect(conflicts.map(\.id) == [note.id.uuidString])
        #expect(conflicts.first?.losingValue as? Note == fromA, "A's edit lost, and says so")
        try await syncA.sync()
        #expect(try await a.get(Note.self, id: note.id) == fromB)
        await server.close()
    }

    @Test("a copy of a device's file (or a restored backup) gets a new device id; its changes are neither dropped nor taken for the original's")
    func copiedFile() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let original = try SQLite.Database(path: Self.temporaryPath())
        let syncOriginal = try SQLite.Sync(local: original, server: server, models: Self.models)
        try await original.save(Note(id: UUID(), text: "first", done: false))
        try await syncOriginal.sync()
        let copyPath = Self.temporaryPath()
        try await original.backup(to: copyPath)
        let copy = try SQLite.Database(path: copyPath)
        let syncCopy = try SQLite.Sync(local: copy, server: server, models: Self.models)
        #expect(try await syncCopy.deviceID == syncOriginal.deviceID)

        // Both write one note (the same outbox entry number on each); the original pushes first.
        let fromOriginal = Note(id: UUID(), text: "on the original", done: false)
        let fromCopy = Note(id: UUID(), text: "on the copy", done: false)
        try await original.save(fromOriginal)
        try await copy.save(fromCopy)
        try await syncOriginal.sync()
        try await syncCopy.sync()
        #expect(try await server.get(Note.self, id: fromCopy.id) == fromCopy, "the copy's change was not taken for one the server had")
        #expect(try await syncCopy.deviceID != syncOriginal.deviceID)
        try await syncOriginal.sync()
        #expect(try await original.get(Note.self, id: fromCopy.id) == fromCopy)
        #expect(try await copy.get(Note.self, id: fromOriginal.id) == fromOriginal)

        // From now on they are two devices: each one's edit of the same note conflicts with the other's.
        var edited = fromOriginal
        edited.text = "original again"
        try await original.save(edited)
        try await syncOriginal.sync()
        var mine = fromOriginal
        mine.text = "copy's edit"
        try await copy.save(mine)
        let conflicts = try await Self.conflicts(of: syncCopy) { try await syncCopy.sync() }
        #expect(conflicts.first?.losingValue as? Note == edited)
        await server.close()
    }

    @Test("a delete of a row that another device's new row refers to loses, on the server and on the device, and everyone converges")
    func refusedDeletes() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let a = try SQLite.Database(path: Self.temporaryPath()), b = try SQLite.Database(path: Self.temporaryPath())
        let syncA = try SQLite.Sync(local: a, server: server, models: Self.models)
        let syncB = try SQLite.Sync(local: b, server: server, models: Self.models)
        let first = Note(id: UUID(), text: "deleted on A, commented on B", done: false)
        let second = Note(id: UUID(), text: "the same, the other way round", done: false)
        try await a.save([first, second])
        try await syncA.sync()
        try await syncB.sync()

        // B comments and pushes first; A's delete reaches the server after: the server keeps the
        // note, A is told its delete lost, and gets the note back.
        _ = try await a.delete(first)
        let comment = Comment(id: UUID(), note: first, text: "still needed")
        try await b.save(comment)
        try await syncB.sync()
        let conflicts = try await Self.conflicts(of: syncA) { try await syncA.sync() }
        #expect(conflicts.map(\.id) == [first.id.uuidString])
        #expect(conflicts.first?.lostHere == true)
        #expect(try await a.get(Note.self, id: first.id) == first)
        #expect(try await a.get(Comment.self, id: comment.id) == comment)

        // A's delete reaches the server first, and B comments between its push and its pull: B
        // keeps the note (its comment needs it) and pushes it back.
        _ = try await a.delete(second)
        try await syncA.sync()
        let late = Comment(id: UUID(), note: second, text: "written while the delete travelled")
        let commentOnce = Locked(true)
        let syncLate = try SQLite.Sync(local: b, transport: JSONTransport(server: Postgres.SyncServer(database: server, models: Self.models), beforePull: {
            guard commentOnce.withLock({ flag in defer { flag = false }; return flag }) else { return }
            try await b.save(late)
        }), models: Self.models)
        try await syncLate.sync()
        #expect(try await b.get(Note.self, id: second.id) == second)
        try await syncLate.sync()
        try await syncA.sync()
        #expect(try await server.get(Note.self, id: second.id) == second)
        #expect(try await a.get(Comment.self, id: late.id) == late)
        for store in [a, b] as [SQLite.Database] {
            #expect(Set(try await store.get(Note.self).map(\.id)) == Set(try await server.get(Note.self).map(\.id)))
            #expect(Set(try await store.get(Comment.self).map(\.id)) == [comment.id, late.id])
        }
        await server.close()
    }

    @Test("one sync of a database file at a time, whichever instance or process asks")
    func oneSyncPerFile() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let path = Self.temporaryPath()
        let first = try SQLite.Sync(local: SQLite.Database(path: path), server: server, models: Self.models, pollInterval: .seconds(600))
        let second = try SQLite.Sync(local: SQLite.Database(path: path), server: server, models: Self.models)
        // The first one holds the file once its first round is done.
        let states = first.states
        let running = Task { try await first.run() }
        for await state in states {
            if case .idle = state { break }
        }
        let refused = await #expect(throws: SyncError.self) { try await second.sync() }
        #expect(refused?.code == .alreadyRunning)
        #expect(refused?.message.contains(path) == true, "\(String(describing: refused))")
        running.cancel()
        _ = await running.result
        try await second.sync()   // free again
        await server.close()
    }

    @Test("a SyncMergeable model's concurrent edits are merged on the server: field by field by default, or by its own merge")
    func mergeableModels() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let models: [any (Model & Sendable).Type] = [Card.self, Labels.self]
        let a = try SQLite.Database(path: Self.temporaryPath()), b = try SQLite.Database(path: Self.temporaryPath())
        let syncA = try SQLite.Sync(local: a, server: server, models: models)
        let syncB = try SQLite.Sync(local: b, server: server, models: models)
        let card = Card(id: UUID(), title: "v1", done: false, note: "a note")
        try await a.save(card)
        try await a.save(Labels(id: "shared", names: ["start"]))
        try await syncA.sync()
        try await syncB.sync()

        // Offline: A retitles the card and clears its note, B ticks it; both add a label.
        var onA = card
        onA.title = "A's title"
        onA.note = nil
        try await a.save(onA)
        var onB = card
        onB.done = true
        try await b.save(onB)
        try await a.save(Labels(id: "shared", names: ["from A", "start"]))
        try await b.save(Labels(id: "shared", names: ["from B", "start"]))
        try await syncB.sync()
        let conflicts = try await Self.conflicts(of: syncA) { try await syncA.sync() }
        #expect(Set(conflicts.map(\.id)) == [card.id.uuidString, "shared"])
        #expect(conflicts.filter { !$0.wasMerged }.isEmpty)
        #expect(conflicts.first { $0.id == card.id.uuidString }?.losingValue as? Card == onB)
        try await syncB.sync()
        let merged = Card(id: card.id, title: "A's title", done: true, note: nil)
        for store in [server as any ModelStore, a, b] {
            #expect(try await store.get(Card.self, id: card.id) == merged)
            #expect(try await store.get(Labels.self, id: "shared")?.names == ["from A", "from B", "start"])
        }
        await server.close()
    }

    @Test("many rows travel in many batches, both ways", arguments: [(batchSize: 7, rows: 150), (500, 1_203)])
    func manyBatches(batchSize: Int, rows: Int) async throws {
        let server = try await TestServer.shared.freshDatabase()
        let a = try SQLite.Database(path: Self.temporaryPath()), b = try SQLite.Database(path: Self.temporaryPath())
        let syncA = try SQLite.Sync(local: a, server: server, models: Self.models, batchSize: batchSize)
        let syncB = try SQLite.Sync(local: b, server: server, models: Self.models, batchSize: batchSize)
        var notes = (0..<rows).map { Note(id: UUID(), text: "note \($0)", done: $0 % 2 == 0) }
        try await a.save(notes)
        try await syncA.sync()
        try await syncB.sync()
        #expect(try await server.count(Note.self) == notes.count)
        #expect(try await b.count(Note.self) == notes.count)
        for index in notes.indices where index % 3 == 0 { notes[index].text += " (edited on B)" }
        try await b.save(notes)
        try await syncB.sync()
        try await syncA.sync()
        let byID = { (x: Note, y: Note) in x.id.uuidString < y.id.uuidString }
        #expect(try await a.get(Note.self).sorted(by: byID) == notes.sorted(by: byID))
        await server.close()
    }

    @Test("deletes that depend on each other go through whatever the models' order, and a pulled delete waits for the rest of the pull")
    func dependentDeletes() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let a = try SQLite.Database(path: Self.temporaryPath()), b = try SQLite.Database(path: Self.temporaryPath())
        let syncA = try SQLite.Sync(local: a, server: server, models: Self.models)
        // One change per pull: the batches end wherever the test needs.
        let syncB = try SQLite.Sync(local: b, server: server, models: Self.models, batchSize: 1)
        let first = Note(id: UUID(), text: "first", done: false), second = Note(id: UUID(), text: "second", done: false)
        var comment = Comment(id: UUID(), note: first, text: "on the first note")
        try await a.save(comment)
        try await a.save(second)
        try await syncA.sync()
        try await syncB.sync()

        // The comment moves to the second note, the first note goes, the comment changes again:
        // the log now has the delete before the comment's (latest) change. B's pull meets the
        // delete while its own comment still refers to the note; once the comment's change is
        // applied, the delete goes through: nothing is pushed back.
        comment.note = second
        try await a.save(comment)
        _ = try await a.delete(first)
        comment.text = "edited again"
        try await a.save(comment)
        try await syncA.sync()
        let conflicts = try await Self.conflicts(of: syncB) { try await syncB.sync() }
        #expect(conflicts.isEmpty)
        #expect(try await b.get(Note.self, id: first.id) == nil)
        #expect(try await b.get(Comment.self, id: comment.id) == comment)
        #expect(try await b.read("SELECT count(*) AS n FROM codablesync_outbox").first?["n"]?.int64Value == 0)
        #expect(try await server.get(Note.self, id: first.id) == nil)

        // A deletes a comment and its note in one push (notes come first in the models): both go,
        // on the server and on B.
        _ = try await a.delete(comment)
        _ = try await a.delete(second)
        let fromA = try await Self.conflicts(of: syncA) { try await syncA.sync() }
        #expect(fromA.isEmpty)
        #expect(try await server.count(Note.self) == 0)
        #expect(try await server.count(Comment.self) == 0)
        try await syncB.sync()
        #expect(try await b.count(Note.self) == 0)
        #expect(try await b.count(Comment.self) == 0)
        await server.close()
    }
}
#endif
