import Foundation

/// What a device's ``SQLite/Sync`` says to the server: a push of its changes, a pull of everyone
/// else's. Every request and answer is `Codable`, so the server can sit behind an app's own API.
///
/// ``Postgres/SyncServer`` is the implementation that talks to PostgreSQL: a server-side app
/// serves it over HTTP, and the device implements this protocol with HTTP calls to that API:
///
/// ```swift
/// // On the server (any HTTP framework): the same model types, the same SyncServer.
/// let syncServer = try Postgres.SyncServer(database: postgres, models: [Note.self, Folder.self])
/// router.post("sync/push") { request in try await syncServer.push(request.decode(SyncPush.self)) }
/// router.post("sync/pull") { request in try await syncServer.pull(request.decode(SyncPull.self)) }
///
/// // On the device: the protocol's two calls, as requests to that API.
/// struct NotesAPI: SyncTransport {
///     func push(_ push: SyncPush) async throws -> SyncPushResult { try await post("sync/push", push) }
///     func pull(_ pull: SyncPull) async throws -> SyncPullResult { try await post("sync/pull", pull) }
/// }
/// let sync = try SQLite.Sync(local: db, transport: NotesAPI(), models: [Note.self, Folder.self])
/// ```
///
/// The server decides everything about ordering and conflicts; a transport only carries the
/// requests. It must carry them whole: a push that fails on the way is sent again (the server
/// recognises a push it has applied already, by its token).
public protocol SyncTransport: Sendable {
    /// Applies a device's changes in one server transaction; says which other writers' changes
    /// they overwrote, and which it refused for good (``SyncPushResult``).
    func push(_ push: SyncPush) async throws -> SyncPushResult
    /// The changes after a version, oldest first, in one batch (``Postgres/SyncServer`` sends
    /// 10,000 at most, whatever the limit asked).
    func pull(_ pull: SyncPull) async throws -> SyncPullResult
    /// Signals (whatever they carry) when the server may have new changes, so a running device
    /// pulls at once rather than at its next `pollInterval`; `nil` when the
    /// transport cannot tell (the default). ``Postgres/SyncServer`` listens with
    /// `LISTEN`/`NOTIFY`.
    func serverChanges() async throws -> AsyncThrowingStream<Void, any Error>?
}

extension SyncTransport {
    /// No signals: devices pull every `pollInterval` and after their own commits.
    public func serverChanges() async throws -> AsyncThrowingStream<Void, any Error>? { nil }
}

/// The JSON form of the values changes carry: the model's `Codable` form, with non-finite floats
/// as strings (plain JSON has no NaN), the same on both sides.
package enum SyncJSON {
    package static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return encoder
    }

    package static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return decoder
    }
}

/// One changed row, as pushes and pulls carry it.
package struct SyncChange: Codable, Sendable, Hashable {
    /// The model's table name (`Model.tableName`), the same on every device and the server.
    package var table: String
    /// The row's id, as text (a UUID in upper case, as `UUID.uuidString` writes it).
    package var id: String
    /// The row's value, its model's `Codable` form as JSON text (relationships included), or
    /// `nil` for a delete.
    package var value: String?
    /// In a push: the device's outbox entry of the change, counted up per device (a retried push
    /// skips the entries the server has applied). `nil` in a pull.
    package var seq: Int64?
    /// In a push: the server version the device had pulled when the change was made; another
    /// writer's change to the row after it is a conflict. In a pull: the change's version.
    package var version: Int64?
    /// In a push: the properties the device changed (coding keys; a to-many relationship by its
    /// property name), for ``SyncMergeable`` models' merges; `nil` when all of them may have (a
    /// new row). `nil` in a pull.
    package var fields: [String]?
    /// In a push: the keys the device's model has (its `Codable` form's). A key of the server's
    /// row that the device's model lacks (a newer app version added the property) keeps the
    /// server's value, rather than being erased by an older app's push. `nil`: the value is
    /// taken whole. `nil` in a pull.
    package var keys: [String]?

    package init(
        table: String, id: String, value: String?, seq: Int64? = nil, version: Int64? = nil, fields: [String]? = nil, keys: [String]? = nil
    ) {
        self.table = table
        self.id = id
        self.value = value
        self.seq = seq
        self.version = version
        self.fields = fields
        self.keys = keys
    }
}

/// A device's changes, oldest outbox entries first, the latest change of each row once.
public struct SyncPush: Codable, Sendable, Hashable {
    /// The device's id (made once per database file; made again when the file turns out to be a
    /// copy, see ``SyncPushResult/device``).
    package var device: String
    /// This push's id, the same when it is sent again after its answer was lost.
    package var token: String
    /// The token of the device's last push that the server answered, `nil` before its first.
    package var acknowledged: String?
    package var changes: [SyncChange]
    /// The device keeps changes the server refuses (``SyncPushResult/refused``) and applies the
    /// rest; `nil` (an app version from before refusals): a refusal fails the whole push, as it
    /// did then, rather than be dropped unseen.
    package var keepsRefused: Bool?

    package init(device: String, token: String, acknowledged: String?, changes: [SyncChange], keepsRefused: Bool? = true) {
        self.device = device
        self.token = token
        self.acknowledged = acknowledged
        self.changes = changes
        self.keepsRefused = keepsRefused
    }
}

/// The server's answer to a ``SyncPush``, one outcome per change: every change is applied (in one
/// transaction) except those in `refused`; `conflicts` names the applied ones that met
/// another writer's change, `droppedLinks` the links to deleted rows the server left out.
public struct SyncPushResult: Codable, Sendable, Hashable {
    /// Rows where this push met another writer's change.
    package var conflicts: [SyncConflict]
    /// The id the device is from now on, when it is not the one it sent: the server knows a
    /// later push from that id than the device does, so the database file is a copy (or a
    /// restored backup) of another device's. This push's changes are the new id's.
    package var device: String?
    /// Changes the server refused for good, each with its reason; the others are applied.
    package var refused: [SyncRefusal]
    /// Links of pushed values to rows another writer deleted, which the server dropped.
    package var droppedLinks: [SyncDroppedLink]

    package init(conflicts: [SyncConflict] = [], device: String? = nil, refused: [SyncRefusal] = [], droppedLinks: [SyncDroppedLink] = []) {
        self.conflicts = conflicts
        self.device = device
        self.refused = refused
        self.droppedLinks = droppedLinks
    }

    private enum CodingKeys: String, CodingKey { case conflicts, device, refused, droppedLinks }

    /// Answers without `refused` and `droppedLinks` (a server, or an answer kept, from before
    /// they existed) have none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        conflicts = try container.decode([SyncConflict].self, forKey: .conflicts)
        device = try container.decodeIfPresent(String.self, forKey: .device)
        refused = try container.decodeIfPresent([SyncRefusal].self, forKey: .refused) ?? []
        droppedLinks = try container.decodeIfPresent([SyncDroppedLink].self, forKey: .droppedLinks) ?? []
    }
}

/// A row where a push met another writer's change.
package struct SyncConflict: Codable, Sendable, Hashable {
    package var table: String
    package var id: String
    /// The value that lost (JSON), `nil` when the change that lost was a delete. For a refused
    /// delete, the row as the server keeps it.
    package var value: String?
    /// The push's delete lost: other rows still refer to the row, so the server kept it.
    package var lostHere: Bool
    /// The two changes were merged (``SyncMergeable``): the row is neither side's value.
    package var merged: Bool

    package init(table: String, id: String, value: String?, lostHere: Bool = false, merged: Bool = false) {
        self.table = table
        self.id = id
        self.value = value
        self.lostHere = lostHere
        self.merged = merged
    }
}

/// A request for the changes after `after`.
public struct SyncPull: Codable, Sendable, Hashable {
    /// The device asking (for the server's own bookkeeping or authorization).
    package var device: String
    /// The version the device pulled last (0 at first).
    package var after: Int64
    /// How many changes at most.
    package var limit: Int
    /// The server epoch the device pulled ``after`` from (``SyncPullResult/epoch``), `nil` before
    /// it knows one.
    package var epoch: String?
    /// The device starts over when the answer says so (``SyncPullResult/horizon``,
    /// ``SyncPullResult/ahead``); a device that cannot (`nil`) gets an error instead of an answer
    /// it would take for "nothing new".
    package var startsOver: Bool?
    /// The ``SyncPullResult/horizon`` of the last answer the device applied (`nil` before it
    /// knows one). A device is behind the horizon (it must start over) only when the horizon
    /// moved past its `after` since: a device paging through the log from version 0 (new, or
    /// starting over) is below a horizon that was already there when it began, and that is
    /// not being behind. `nil`: behind whenever `after` is below the horizon.
    package var horizon: Int64?
    /// `true` on every pull of a start over, from its first page (from version 0) to its last:
    /// the device pulls every row again, and then deletes (or uploads) the local rows the pages
    /// did not bring, so its own pushes are not left out (after version 0 they are otherwise:
    /// the device has them).
    package var restarting: Bool?

    package init(
        device: String, after: Int64, limit: Int, epoch: String? = nil, startsOver: Bool? = nil, horizon: Int64? = nil, restarting: Bool? = nil
    ) {
        self.device = device
        self.after = after
        self.limit = limit
        self.epoch = epoch
        self.startsOver = startsOver
        self.horizon = horizon
        self.restarting = restarting
    }
}

/// Changed rows as they are now (a changed row that is gone is a delete), with their versions.
public struct SyncPullResult: Codable, Sendable, Hashable {
    package var changes: [SyncChange]
    /// The version the device has once it applied ``changes``.
    package var version: Int64
    /// Whether more changes follow this version.
    package var more: Bool
    /// The server's history (see `Postgres.SyncServer`): when it is not the one a device pulled
    /// from before (a server restored from a backup, a promoted replica), the device pulls
    /// everything again and uploads the rows the server lacks. `nil`: not told.
    package var epoch: String?
    /// The newest version whose tombstone the server forgot (`Postgres.SyncServer.compact`): a
    /// device that pulled last before it pulls everything again, and deletes the rows the server
    /// no longer has. `nil`: none forgotten.
    package var horizon: Int64?
    /// The device pulled further than the server's log has ever gone: the server went back in
    /// time (a snapshot restored), and the device pulls everything again and uploads its rows.
    package var ahead: Bool?

    package init(changes: [SyncChange], version: Int64, more: Bool, epoch: String? = nil, horizon: Int64? = nil, ahead: Bool? = nil) {
        self.changes = changes
        self.version = version
        self.more = more
        self.epoch = epoch
        self.horizon = horizon
        self.ahead = ahead
    }
}
