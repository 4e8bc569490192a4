#if Postgres
import CodableSync
import Foundation
import Testing

/// Changes the server refuses for good, unique values two devices take, and deletes against stale
/// copies of graphs: one row never holds back the others, nobody stalls, nothing comes back.
@Suite("Sync: refused changes, unique clashes, deletes against stale graphs", .serverShare, .needsPostgres, .serialized, .hangLimit(minutes: 3))
struct SyncRefusalTests {
    typealias Note = SyncTests.Note
    typealias Folder = SyncTests.Folder

    /// A user whose email is unique.
    #if Macros
    @RowCodable
    #endif
    struct Member: UUIDModel, Sendable, Equatable {
        let id: UUID
        var email: String
        static var indexes: [ModelIndex<Member>] { [.unique(\.email)] }
    }

    static let models: [any (Model & Sendable).Type] = [Note.self, Folder.self, Member.self]

    static func device(_ server: Postgres.Database) throws -> (SQLite.Database, SQLite.Sync) {
        let local = try SQLite.Database(path: SyncTransportTests.temporaryPath())
        return (local, try SQLite.Sync(local: local, server: server, models: models))
    }

    /// The states `sync` publishes during one round.
    static func states(of sync: SQLite.Sync, during round: () async throws -> Void) async throws -> [SQLite.Sync.State] {
        let states = sync.states
        try await round()
        var found: [SQLite.Sync.State] = []
        for await state in states {
            found.append(state)
            if case .idle = state { break }
        }
        return found
    }

    static func refusals(in states: [SQLite.Sync.State]) -> [SQLite.Sync.RefusedChange] {
        states.compactMap { if case .refused(let change) = $0 { change } else { nil } }
    }

    @Test("a change a CHECK constraint refuses is refused alone, kept with its reason, and resolved by an edit; the rest syncs on")
    func checkConstraintRefusesOneChange() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let (a, syncA) = try Self.device(server), (b, syncB) = try Self.device(server)
        try await syncA.sync()
        // The server's owner adds a rule the app does not know.
        try await server.execute(#"ALTER TABLE "Note" ADD CONSTRAINT note_text_short CHECK (length("text") <= 20)"#)
        let tooLong = Note(id: UUID(), text: "a note far longer than the server allows", done: false)
        let fine = Note(id: UUID(), text: "short", done: false)
        try await a.save(tooLong)
        try await a.save(fine)
        let states = try await Self.states(of: syncA) { try await syncA.sync() }
        let refused = Self.refusals(in: states)
        #expect(refused.map(\.id) == [tooLong.id.uuidString])
        #expect(refused.first?.reason == .checkViolation)
        #expect(refused.first?.message.contains("note_text_short") == true, "\(refused)")
        #expect(try await server.get(Note.self, id: fine.id) == fine)
        #expect(try await server.get(Note.self, id: tooLong.id) == nil)
        // Kept on the device, listed with its value, and not sent again by itself.
        #expect(try await a.get(Note.self, id: tooLong.id) == tooLong)
        let listed = try await syncA.refusedChanges()
        #expect(listed.map(\.id) == [tooLong.id.uuidString])
        #expect(listed.first?.value as? Note == tooLong)
        #expect(listed.first?.serverValue == nil)
        #expect(Self.refusals(in: try await Self.states(of: syncA) { try await syncA.sync() }).isEmpty)

        // The device goes on: later changes of its own go up, others' come down.
        var edited = fine
        edited.done = true
        try await a.save(edited)
        let fromB = Note(id: UUID(), text: "from B", done: false)
        try await b.save(fromB)
        try await syncB.sync()
        try await syncA.sync()
        #expect(try await server.get(Note.self, id: fine.id) == edited)
        #expect(try await a.get(Note.self, id: fromB.id) == fromB)

        // An edit of another row is refused, naming it; the refusal stays.
        let wrong = await #expect(throws: SyncError.self) { try await syncA.resolve(try #require(listed.first), .edit(fine)) }
        #expect(wrong?.code == .invalidArgument)
        #expect(wrong.map { ModelError.Code(of: $0) } == .invalidArgument, "one code to match on every layer")
        #expect(wrong?.message.contains(fine.id.uuidString) == true, "\(String(describing: wrong))")
        #expect(try await syncA.refusedChanges().count == 1)
        // Resolved by an edit the server accepts.
        let shorter = Note(id: tooLong.id, text: "shortened", done: false)
        try await syncA.resolve(try #require(listed.first), .edit(shorter))
        try await syncA.sync()
        try await syncB.sync()
        #expect(try await syncA.refusedChanges().isEmpty)
        #expect(try await server.get(Note.self, id: tooLong.id) == shorter)
        #expect(try await b.get(Note.self, id: tooLong.id) == shorter)
        await server.close()
    }

    @Test("a value too large for the server's column is refused; drop returns the row to the server's value, retry sends it again")
    func tooLargeDropAndRetry() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let (a, syncA) = try Self.device(server)
        let kept = Note(id: UUID(), text: "on the server", done: false)
        try await a.save(kept)
        try await syncA.sync()
        try await server.execute(#"ALTER TABLE "Note" ALTER COLUMN "text" TYPE varchar(16)"#)
        var grown = kept
        grown.text = "grown beyond sixteen characters"
        let new = Note(id: UUID(), text: "new and also far too long", done: true)
        try await a.save(grown)
        try await a.save(new)
        try await syncA.sync()
        let refused = try await syncA.refusedChanges().sorted { $0.id < $1.id }
        #expect(Set(refused.map(\.id)) == [kept.id.uuidString, new.id.uuidString])
        #expect(refused.allSatisfy { $0.reason == .tooLarge }, "\(refused)")
        #expect(refused.first { $0.id == kept.id.uuidString }?.serverValue as? Note == kept)
        // A pull leaves a refused row alone, and keeps its server value current.
        var serverEdit = kept
        serverEdit.done = true
        try await server.save(serverEdit)
        try await syncA.sync()
        #expect(try await a.get(Note.self, id: kept.id) == grown)
        let current = try await syncA.refusedChanges()
        #expect(current.first { $0.id == kept.id.uuidString }?.serverValue as? Note == serverEdit)

        // Drop: back to the server's value; a new row goes.
        for change in current { try await syncA.resolve(change, .drop) }
        #expect(try await a.get(Note.self, id: kept.id) == serverEdit)
        #expect(try await a.get(Note.self, id: new.id) == nil)
        #expect(try await syncA.refusedChanges().isEmpty)
        try await syncA.sync()
        #expect(try await server.get(Note.self, id: kept.id) == serverEdit)
        #expect(try await server.get(Note.self, id: new.id) == nil)
        let resolvedTwice = await #expect(throws: SyncError.self) { try await syncA.resolve(try #require(current.first), .drop) }
        #expect(resolvedTwice?.code == .invalidArgument)

        // Retry, once the server's owner widened the column.
        let long = Note(id: UUID(), text: "long again, and refused again", done: false)
        try await a.save(long)
        try await syncA.sync()
        let again = try #require(try await syncA.refusedChanges().first)
        try await server.execute(#"ALTER TABLE "Note" ALTER COLUMN "text" TYPE text"#)
        try await syncA.resolve(again, .retry)
        try await syncA.sync()
        #expect(try await syncA.refusedChanges().isEmpty)
        #expect(try await server.get(Note.self, id: long.id) == long)
        await server.close()
    }

    @Test("two devices offline take the same unique value: the later one's change is refused and makes room; nobody stalls")
    func uniqueClashBetweenDevices() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let (a, syncA) = try Self.device(server), (b, syncB) = try Self.device(server)
        let first = Member(id: UUID(), email: "ann@example.com"), second = Member(id: UUID(), email: "ann@example.com")
        try await a.save(first)
        try await b.save(second)
        let noteOfB = Note(id: UUID(), text: "B's other change", done: false)
        try await b.save(noteOfB)
        try await syncA.sync()
        let states = try await Self.states(of: syncB) { try await syncB.sync() }
        let refused = Self.refusals(in: states)
        #expect(refused.map(\.id) == [second.id.uuidString])
        #expect(refused.first?.reason == .uniqueClash)
        // B's other change went up; the server's member came down, and B's made room for it.
        #expect(try await server.get(Note.self, id: noteOfB.id) == noteOfB)
        #expect(try await b.get(Member.self) == [first])
        let listed = try #require(try await syncB.refusedChanges().first)
        #expect(listed.value as? Member == second)
        try await syncA.sync()
        try await syncB.sync()
        #expect(try await a.get(Member.self) == [first])
        // The app fixes it.
        let fixed = Member(id: second.id, email: "ann.b@example.com")
        try await syncB.resolve(listed, .edit(fixed))
        try await syncB.sync()
        try await syncA.sync()
        #expect(Set(try await server.get(Member.self).map(\.email)) == ["ann@example.com", "ann.b@example.com"])
        #expect(try await a.get(Member.self, id: second.id) == fixed)
        #expect(try await syncB.refusedChanges().isEmpty)
        await server.close()
    }

    @Test("a device's delete and a save that takes the freed unique value apply in its order, on the server and on other devices")
    func deleteThenSaveOfUniqueValue() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let (a, syncA) = try Self.device(server), (b, syncB) = try Self.device(server)
        let old = Member(id: UUID(), email: "desk@example.com")
        try await a.save(old)
        try await syncA.sync()
        try await syncB.sync()
        _ = try await a.delete(old)
        let new = Member(id: UUID(), email: "desk@example.com")
        try await a.save(new)
        let states = try await Self.states(of: syncA) { try await syncA.sync() }
        #expect(Self.refusals(in: states).isEmpty)
        #expect(try await server.get(Member.self) == [new])
        try await syncB.sync()
        #expect(try await b.get(Member.self) == [new])
        #expect(try await syncB.undecodableRows().isEmpty)
        await server.close()
    }

    @Test("a note one device deleted is not created again by another device's stale folder, on the server or on a pulling device")
    func deleteWinsOverStaleGraph() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let (a, syncA) = try Self.device(server), (b, syncB) = try Self.device(server)
        let gone = Note(id: UUID(), text: "deleted by A", done: false), stays = Note(id: UUID(), text: "stays", done: false)
        var folder = Folder(id: UUID(), name: "Inbox", notes: [gone, stays])
        try await a.save(folder)
        try await syncA.sync()
        try await syncB.sync()
        _ = try await a.delete(gone)
        try await syncA.sync()
        // B has not pulled: it renames its copy of the folder, which still holds the note.
        var renamed = try #require(try await b.get(Folder.self, id: folder.id))
        renamed.name = "Renamed by B"
        try await b.save(renamed)
        let states = try await Self.states(of: syncB) { try await syncB.sync() }
        let dropped = states.compactMap { if case .linkDropped(let link) = $0 { link } else { nil } }
        #expect(dropped == [SyncDroppedLink(table: Folder.tableName, id: folder.id.uuidString, relatedTable: Note.tableName, relatedID: gone.id.uuidString)])
        #expect(try await server.get(Note.self, id: gone.id) == nil)
        #expect(try await server.get(Folder.self, id: folder.id) == Folder(id: folder.id, name: "Renamed by B", notes: [stays]))
        try await syncA.sync()
        for db in [a, b] {
            #expect(try await db.get(Note.self, id: gone.id) == nil)
            #expect(try await db.get(Folder.self, id: folder.id)?.notes == [stays])
        }

        // On a pulling device: B deletes a note and, before its push, pulls A's folder that now
        // holds it.
        let third = Note(id: UUID(), text: "third", done: false)
        try await a.save(third)
        try await syncA.sync()
        try await syncB.sync()
        _ = try await b.delete(third)
        folder = Folder(id: folder.id, name: "Renamed by A", notes: [stays, third])
        try await a.save(folder)
        try await syncA.sync()
        // B pulls only (its push fails on the way): the folder comes without the deleted note.
        let pullOnly = try SQLite.Sync(local: b, transport: PullOnly(server: Postgres.SyncServer(database: server, models: Self.models)), models: Self.models)
        await #expect(throws: PullOnly.Refused.self) { try await pullOnly.sync() }
        #expect(try await b.get(Folder.self, id: folder.id) == Folder(id: folder.id, name: "Renamed by A", notes: [stays]))
        #expect(try await b.get(Note.self, id: third.id) == nil)
        try await syncB.sync()
        try await syncA.sync()
        for db in [a, b] {
            #expect(try await db.get(Note.self, id: third.id) == nil)
            #expect(try await db.get(Folder.self, id: folder.id) == Folder(id: folder.id, name: "Renamed by A", notes: [stays]))
        }
        #expect(try await server.get(Note.self, id: third.id) == nil)
        await server.close()
    }

    /// A transport whose pushes never arrive (a proxy that drops them): only pulls go through.
    struct PullOnly: SyncTransport {
        struct Refused: Error {}
        let server: Postgres.SyncServer
        func push(_ push: SyncPush) async throws -> SyncPushResult { throw Refused() }
        func pull(_ pull: SyncPull) async throws -> SyncPullResult { try await server.pull(pull) }
    }

    @Test("a hostile or older client's undecodable value is refused alone; the push's other changes are applied")
    func undecodablePushedValueIsRefusedAlone() async throws {
        let server = try await TestServer.shared.freshDatabase()
        let endpoint = try Postgres.SyncServer(database: server, models: Self.models)
        let good = Note(id: UUID(), text: "good", done: false), bad = UUID(), other = UUID()
        let answer = try await endpoint.push(SyncPush(device: UUID().uuidString, token: UUID().uuidString, acknowledged: nil, changes: [
            SyncChange(table: Note.tableName, id: bad.uuidString, value: #"{"id":"\#(bad)","text":7}"#, seq: 1),
            SyncChange(table: Note.tableName, id: other.uuidString, value: #"{"id":"\#(good.id)","text":"x","done":false}"#, seq: 2),
            SyncChange(table: Note.tableName, id: good.id.uuidString, value: String(decoding: try JSONEncoder().encode(good), as: UTF8.self), seq: 3)]))
        #expect(Set(answer.refused.map(\.id)) == [bad.uuidString, other.uuidString])
        #expect(answer.refused.allSatisfy { $0.reason == .undecodable })
        #expect(answer.refused.first { $0.id == other.uuidString }?.message.contains(good.id.uuidString) == true)
        #expect(try await server.get(Note.self) == [good])
        // An app from before refusals would drop a refused change unseen: its push is refused whole.
        let fromOldApp = Note(id: UUID(), text: "from an old app", done: false)
        let whole = await #expect(throws: SyncError.self) {
            _ = try await endpoint.push(SyncPush(device: UUID().uuidString, token: UUID().uuidString, acknowledged: nil, changes: [
                SyncChange(table: Note.tableName, id: bad.uuidString, value: #"{"id":"\#(bad)","text":7}"#, seq: 1),
                SyncChange(table: Note.tableName, id: fromOldApp.id.uuidString, value: String(decoding: try JSONEncoder().encode(fromOldApp), as: UTF8.self), seq: 2),
            ], keepsRefused: nil))
        }
        #expect(whole?.code == .changeRefused)
        #expect(try await server.get(Note.self, id: fromOldApp.id) == nil)
        await server.close()
    }
}
#endif
