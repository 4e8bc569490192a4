import Foundation

// The bounds of every number and size the sync's wire types carry, checked on both sides: the
// server checks a request before it reads anything for it, a device checks an answer before it
// applies anything of it. (Foundation only, and no other sync file but the wire types and
// `SyncError`: Fuzz/run compiles it with them.)

/// The sizes the sync protocol allows.
package enum SyncLimits {
    /// A device id, a push token, an account name (Unicode scalars).
    package static let name = 200
    /// A table name.
    package static let table = 255
    /// A row id.
    package static let id = 1_000
    /// A pushed value (UTF-8 bytes).
    package static let value = 4 << 20
    /// The entries of a change's `fields` or `keys`.
    package static let keys = 10_000
    /// One property name among a change's `fields` or `keys`.
    package static let key = 1_000
    /// A server epoch.
    package static let epoch = 1_000
    /// A refusal's reason name.
    package static let reason = 200
    /// A refusal's message (UTF-8 bytes).
    package static let message = 1 << 20
    /// The links to deleted rows one push answer may name.
    package static let droppedLinks = 1_000_000

    /// The length of `text` in Unicode scalars, counted only up to `limit + 1` (a hostile string
    /// costs no more than the bound to measure).
    package static func length(_ text: String, upTo limit: Int) -> Int {
        var count = 0
        for _ in text.unicodeScalars {
            count += 1
            if count > limit { break }
        }
        return count
    }

    /// Throws `error(message)` when `text` is empty (if it must not be), longer than `limit`, or
    /// holds a NUL character (names, ids and tokens are text PostgreSQL stores, which has none).
    package static func check(
        _ text: String, _ what: @autoclosure () -> String, atMost limit: Int, nonEmpty: Bool = false,
        _ error: (String) -> SyncError
    ) throws {
        if nonEmpty, text.isEmpty { throw error("\(what()) is empty") }
        if length(text, upTo: limit) > limit { throw error("\(what()) is longer than \(limit) characters") }
        if text.utf8.contains(0) { throw error("\(what()) holds a NUL character") }
    }
}

extension SyncPush {
    /// The most changes one push may carry (500, a device's default batch): a push holds the
    /// server's log lock while it is applied, so its size bounds how long other accounts wait
    /// (sync-bench: another account's round takes at most 0.9 s while one account floods). A
    /// device sends at most its `batchSize` or this, whichever is less.
    public static let maximumChanges = 500

    /// Checks every number and size of this push against the protocol's bounds, before the server
    /// reads anything for it: a device id and a token of 1 to 200 characters, at most
    /// ``maximumChanges`` changes, each with a table name of 1 to 255 characters, an id of at most
    /// 1,000, an outbox entry (`seq`) of 1 or more, a base version of 0 or more, a value of at most
    /// 4 MiB (UTF-8), and at most 10,000 `fields` and `keys`.
    ///
    /// ```swift
    /// let push = try JSONDecoder().decode(SyncPush.self, from: body)
    /// try push.validate()   // before the server reads anything for it
    /// ```
    ///
    /// - Throws: `SyncError.Code.invalidArgument`, naming the field (and the change, by
    ///   its index).
    package func validate() throws {
        let refuse = { (message: String) in SyncError(.invalidArgument, "the push is refused: \(message)") }
        try SyncLimits.check(device, "its device id", atMost: SyncLimits.name, nonEmpty: true, refuse)
        try SyncLimits.check(token, "its token", atMost: SyncLimits.name, nonEmpty: true, refuse)
        if let acknowledged { try SyncLimits.check(acknowledged, "its acknowledged token", atMost: SyncLimits.name, refuse) }
        guard changes.count <= Self.maximumChanges else {
            throw refuse("it has \(changes.count) changes, more than \(Self.maximumChanges)")
        }
        for (index, change) in changes.enumerated() {
            let refuseChange = { (message: String) in refuse("change \(index): \(message)") }
            try SyncLimits.check(change.table, "its table", atMost: SyncLimits.table, nonEmpty: true, refuseChange)
            try SyncLimits.check(change.id, "its id", atMost: SyncLimits.id, nonEmpty: true, refuseChange)
            guard let seq = change.seq else { throw refuseChange("it has no seq") }
            guard seq >= 1 else { throw refuseChange("its seq is \(seq), not 1 or more") }
            if let version = change.version, version < 0 { throw refuseChange("its version is \(version), not 0 or more") }
            if let value = change.value, value.utf8.count > SyncLimits.value {
                throw refuseChange("its value is \(value.utf8.count) bytes, more than \(SyncLimits.value)")
            }
            for (name, list) in [("fields", change.fields), ("keys", change.keys)] {
                guard let list else { continue }
                guard list.count <= SyncLimits.keys else { throw refuseChange("it has \(list.count) \(name), more than \(SyncLimits.keys)") }
                for key in list { try SyncLimits.check(key, "one of its \(name)", atMost: SyncLimits.key, refuseChange) }
            }
        }
    }
}

extension SyncPull {
    /// Checks this pull's numbers and sizes, before the server reads anything for it: a device id
    /// of 1 to 200 characters, a version (`after`) of 0 or more, a limit of 1 or more (the server
    /// caps it), an epoch of at most 1,000 characters, a known horizon of 0 or more.
    ///
    /// ```swift
    /// let pull = try JSONDecoder().decode(SyncPull.self, from: body)
    /// try pull.validate()
    /// ```
    ///
    /// - Throws: `SyncError.Code.invalidArgument`, naming the field.
    package func validate() throws {
        let refuse = { (message: String) in SyncError(.invalidArgument, "the pull is refused: \(message)") }
        try SyncLimits.check(device, "its device id", atMost: SyncLimits.name, nonEmpty: true, refuse)
        guard after >= 0 else { throw refuse("its version (after) is \(after), not 0 or more") }
        guard limit >= 1 else { throw refuse("its limit is \(limit), not 1 or more") }
        if let epoch { try SyncLimits.check(epoch, "its epoch", atMost: SyncLimits.epoch, refuse) }
        if let horizon, horizon < 0 { throw refuse("its known horizon is \(horizon), not 0 or more") }
    }
}

extension SyncPullResult {
    /// Checks a server's answer to a pull of the changes after `after` before a device applies
    /// anything of it: a version of 0 or more; at most `limit` changes (or
    /// ``SyncPush/maximumChanges``, whichever is more), each with a version (when it has one) of
    /// 1 or more, a table name of 1 to 255 characters and an id of 1 to 1,000; an
    /// epoch of at most 1,000 characters; a horizon of 0 or more. ``SQLite/Sync`` checks every
    /// answer so; a transport may check it sooner.
    ///
    /// ```swift
    /// let answer = try await transport.pull(request)
    /// try answer.validate(after: request.after, limit: request.limit)
    /// ```
    ///
    /// - Throws: `SyncError.Code.invalidAnswer`, naming the field (and the change, by its
    ///   index).
    package func validate(after: Int64, limit: Int = SyncPush.maximumChanges) throws {
        let refuse = { (message: String) in SyncError(.invalidAnswer, "the server's answer to a pull after version \(after) is refused: \(message)") }
        guard version >= 0 else { throw refuse("its version is \(version), not 0 or more") }
        let most = max(limit, SyncPush.maximumChanges)
        guard changes.count <= most else { throw refuse("it has \(changes.count) changes, more than \(most)") }
        if let horizon, horizon < 0 { throw refuse("its horizon is \(horizon), not 0 or more") }
        if let epoch { try SyncLimits.check(epoch, "its epoch", atMost: SyncLimits.epoch, nonEmpty: true, refuse) }
        for (index, change) in changes.enumerated() {
            let refuseChange = { (message: String) in refuse("change \(index): \(message)") }
            try SyncLimits.check(change.table, "its table", atMost: SyncLimits.table, nonEmpty: true, refuseChange)
            try SyncLimits.check(change.id, "its id", atMost: SyncLimits.id, nonEmpty: true, refuseChange)
            // (Not bounded by the answer's version: servers before this check could answer a
            // version below their changes' when versions gained a digit; the device pulls those
            // again, which is harmless.)
            if let changeVersion = change.version, changeVersion < 1 {
                throw refuseChange("its version is \(changeVersion), not 1 or more")
            }
        }
    }
}

extension SyncPushResult {
    /// Checks a server's answer to `push` before a device applies anything of it: its conflicts
    /// and refusals name only rows the push carried (a server cannot make the device touch any
    /// other row), and are no more than its changes; a new device id has 1 to 200 characters; reasons, messages
    /// and the links it dropped are of bounded sizes. ``SQLite/Sync`` checks every answer so; a
    /// transport may check it sooner.
    ///
    /// ```swift
    /// let answer = try await transport.push(push)
    /// try answer.validate(for: push)
    /// ```
    ///
    /// - Throws: `SyncError.Code.invalidAnswer`, naming the field (and the entry, by its
    ///   index).
    package func validate(for push: SyncPush) throws {
        let refuse = { (message: String) in SyncError(.invalidAnswer, "the server's answer to a push is refused: \(message)") }
        if let device { try SyncLimits.check(device, "its device id", atMost: SyncLimits.name, nonEmpty: true, refuse) }
        let pushed = Set(push.changes.map { SyncRow(table: $0.table, id: $0.id) })
        guard conflicts.count <= push.changes.count, refused.count <= push.changes.count else {
            throw refuse("it has \(conflicts.count) conflicts and \(refused.count) refusals for \(push.changes.count) changes")
        }
        for (index, conflict) in conflicts.enumerated() where !pushed.contains(SyncRow(table: conflict.table, id: conflict.id)) {
            throw refuse("conflict \(index) names a row the push did not carry")
        }
        for (index, refusal) in refused.enumerated() {
            let refuseEntry = { (message: String) in refuse("refusal \(index): \(message)") }
            guard pushed.contains(SyncRow(table: refusal.table, id: refusal.id)) else { throw refuseEntry("it names a row the push did not carry") }
            try SyncLimits.check(refusal.reason.name, "its reason", atMost: SyncLimits.reason, nonEmpty: true, refuseEntry)
            guard refusal.message.utf8.count <= SyncLimits.message else {
                throw refuseEntry("its message is more than \(SyncLimits.message) bytes")
            }
        }
        guard droppedLinks.count <= SyncLimits.droppedLinks else {
            throw refuse("it names \(droppedLinks.count) dropped links, more than \(SyncLimits.droppedLinks)")
        }
        for (index, link) in droppedLinks.enumerated() {
            let refuseEntry = { (message: String) in refuse("dropped link \(index): \(message)") }
            guard pushed.contains(SyncRow(table: link.table, id: link.id)) else { throw refuseEntry("it names a row the push did not carry") }
            try SyncLimits.check(link.relatedTable, "its related table", atMost: SyncLimits.table, nonEmpty: true, refuseEntry)
            try SyncLimits.check(link.relatedID, "its related id", atMost: SyncLimits.id, nonEmpty: true, refuseEntry)
        }
    }
}

/// A row as the wire types name it.
private struct SyncRow: Hashable {
    let table: String
    let id: String
}
