// The sync soak's two halves (Scripts/sync-soak runs them: devices it kills and restarts at
// random, and a server it restarts, then the check). Each device process reaches PostgreSQL with
// a sync server of its own (as many server processes on one database as devices, none with a
// global lock), and the first enforces a retention of 5 s (compaction every 2 s):
//
//     sync-soak device URL PATH SECONDS NUMBER   a device: edits and syncs until killed or done
//     sync-soak check URL PATH...                 syncs every device, then checks they all converged
//
// A device makes notes and edits and deletes its own (each in one local transaction with its
// record in `soak_made`, a table sync does not know), and makes, renames, refills and deletes
// folders of anyone's notes, while `run()` syncs. The check: every device equals the server,
// every outbox is empty, and every note a device made and kept is on the server with its maker's
// last edit count (nothing lost, no stale value), and no note its maker deleted is anywhere
// (not even when another device's folder, changed concurrently, still held it). The `check:` line
// counts both: "… N deleted of which M came back, L lost …".
import Foundation

#if Postgres
import CodableSync

struct SoakNote: UUIDModel, Sendable, Equatable {
    let id: UUID
    var device: Int
    var text: String
    var edits: Int
}

struct SoakFolder: UUIDModel, Sendable, Equatable {
    let id: UUID
    var name: String
    var notes: [SoakNote]
}

let models: [any (Model & Sendable).Type] = [SoakNote.self, SoakFolder.self]

func connect(_ url: String) async -> Postgres.Database {
    while true {
        if let server = try? await Postgres.Database(url: url) { return server }
        try? await Task.sleep(for: .milliseconds(200))
    }
}

/// What this device made: every note, whether it deleted it, and its last edit count.
func made(_ db: SQLite.Database) async throws -> [(id: String, deleted: Bool, edits: Int64)] {
    try await db.read("SELECT id, deleted, edits FROM soak_made").compactMap { row in
        guard let id = row["id"]?.stringValue, let deleted = row["deleted"]?.int64Value, let edits = row["edits"]?.int64Value else { return nil }
        return (id, deleted != 0, edits)
    }
}

func device(url: String, path: String, seconds: Double, number: Int) async throws {
    let db = try SQLite.Database(path: path)
    _ = try await db.execute(raw: "CREATE TABLE IF NOT EXISTS soak_made (id TEXT PRIMARY KEY, deleted INTEGER NOT NULL, edits INTEGER NOT NULL)")
    let server = await connect(url)
    let sync = try SQLite.Sync(local: db, server: server, models: models, batchSize: 50, pollInterval: .milliseconds(300))
    let running = Task { try await sync.run() }
    // The server's retention, enforced meanwhile (by the first device's process, as a server of
    // a fleet would): tombstones and pushes older than 5 s go every 2 s, so devices killed for
    // a while start over, and old pushes are forgotten while their devices sync.
    let compacting = Task {
        guard number == 1 else { return }
        try await Postgres.SyncServer(database: server, models: models).enforceRetention(.seconds(5), every: .seconds(2))
    }
    defer { compacting.cancel() }
    var random = SystemRandomNumberGenerator()
    let deadline = ContinuousClock.now + .seconds(seconds)
    var step = 0
    while ContinuousClock.now < deadline {
        step += 1
        let choice = Int.random(in: 0..<10, using: &random)
        // Every step reads and writes in one transaction, as a careful app would: saving a folder
        // saves the notes inside it too, so a copy read before a pull applied a newer value would
        // write the older one back (a change of this device's, which sync would then spread).
        try await db.inTransaction { tx in
            var random = SystemRandomNumberGenerator()
            let mine = try await tx.get(with: Filter(\SoakNote.device, is: .equal(to: number)))
            switch choice {
            case 0, 1, 2:
                let note = SoakNote(id: UUID(), device: number, text: "made by \(number) at \(step)", edits: 0)
                try await tx.save(note)
                _ = try await tx.write("INSERT INTO soak_made VALUES (:id, 0, 0)", arguments: ["id": .text(note.id.uuidString)])
            case 3, 4, 5:
                if var note = mine.randomElement(using: &random) {
                    note.edits += 1
                    note.text = "edited by \(number) at \(step)"
                    try await tx.save(note)
                    _ = try await tx.write("UPDATE soak_made SET edits = :edits WHERE id = :id",
                                           arguments: ["id": .text(note.id.uuidString), "edits": .integer(Int64(note.edits))])
                }
            case 6:
                if let note = mine.randomElement(using: &random) {
                    _ = try await tx.delete(note)
                    _ = try await tx.write("UPDATE soak_made SET deleted = 1 WHERE id = :id", arguments: ["id": .text(note.id.uuidString)])
                }
            case 7, 8:
                let notes = try await tx.get(SoakNote.self)
                if var folder = try await tx.get(SoakFolder.self).randomElement(using: &random), random.next() % 2 == 0 {
                    folder.name = "renamed by \(number) at \(step)"
                    folder.notes = Array(notes.shuffled(using: &random).prefix(3))
                    try await tx.save(folder)
                } else {
                    try await tx.save(SoakFolder(id: UUID(), name: "folder of \(number) at \(step)", notes: Array(notes.shuffled(using: &random).prefix(2))))
                }
            default:
                if let folder = try await tx.get(SoakFolder.self).randomElement(using: &random) { _ = try await tx.delete(folder) }
            }
        }
        try await Task.sleep(for: .milliseconds(Int.random(in: 5...40, using: &random)))
    }
    running.cancel()
    _ = await running.result
    await server.close()
    print("device \(number): \(step) steps")
}

func check(url: String, paths: [String]) async throws -> Bool {
    let server = await connect(url)
    let devices = try paths.map { try SQLite.Database(path: $0) }
    let syncs = try devices.map { try SQLite.Sync(local: $0, server: server, models: models) }
    for _ in 0..<2 {
        for sync in syncs { try await sync.sync() }
    }
    var ok = true
    func fail(_ message: String) { print("FAIL: \(message)"); ok = false }
    let notes = try await server.get(SoakNote.self).sorted { $0.id.uuidString < $1.id.uuidString }
    let folders = try await server.get(SoakFolder.self).sorted { $0.id.uuidString < $1.id.uuidString }
    let onServer = Dictionary(notes.map { ($0.id.uuidString, $0) }, uniquingKeysWith: { first, _ in first })
    var kept = 0, deleted = 0, cameBack = 0, lost = 0, edits: Int64 = 0
    for (index, db) in devices.enumerated() {
        if try await db.get(SoakNote.self).sorted(by: { $0.id.uuidString < $1.id.uuidString }) != notes { fail("device \(index)'s notes differ from the server's") }
        let local = try await db.get(SoakFolder.self).sorted { $0.id.uuidString < $1.id.uuidString }
        if local.map(\.id) != folders.map(\.id) || local.map(\.name) != folders.map(\.name) || local.map({ $0.notes.map(\.id) }) != folders.map({ $0.notes.map(\.id) }) {
            fail("device \(index)'s folders differ from the server's")
        }
        let outbox = try await db.read("SELECT count(*) AS n FROM codablesync_outbox").first?["n"]?.int64Value ?? -1
        if outbox != 0 { fail("device \(index)'s outbox holds \(outbox) entries") }
        for note in try await made(db) {
            if note.deleted {
                deleted += 1
                if onServer[note.id] != nil {
                    cameBack += 1
                    fail("note \(note.id), deleted by device \(index), came back")
                }
            } else if let value = onServer[note.id] {
                kept += 1
                edits += note.edits
                if Int64(value.edits) != note.edits {
                    lost += 1
                    fail("note \(note.id) of device \(index) has \(value.edits) edits on the server, \(note.edits) on its device")
                }
            } else {
                lost += 1
                fail("note \(note.id), made and kept by device \(index), is not on the server")
            }
        }
    }
    if notes.count != kept + cameBack { fail("the server has \(notes.count) notes; the devices kept \(kept), and \(cameBack) deleted ones came back") }
    print("check: \(devices.count) devices, \(notes.count) notes (\(kept) kept with \(edits) edits, \(deleted) deleted of which \(cameBack) came back, \(lost) lost), \(folders.count) folders: \(ok ? "converged" : "FAILED")")
    await server.close()
    return ok
}

let arguments = CommandLine.arguments
if arguments.count == 6, arguments[1] == "device", let seconds = Double(arguments[4]), let number = Int(arguments[5]) {
    try await device(url: arguments[2], path: arguments[3], seconds: seconds, number: number)
} else if arguments.count >= 4, arguments[1] == "check" {
    exit(try await check(url: arguments[2], paths: Array(arguments[3...])) ? 0 : 1)
} else {
    print("usage: sync-soak device URL PATH SECONDS NUMBER | sync-soak check URL PATH...  (see Scripts/sync-soak)")
    exit(2)
}
#else
print("sync-soak needs the Postgres trait: swift run --traits Postgres sync-soak …, or Scripts/sync-soak")
exit(1)
#endif
