#if Postgres
import CodablePostgres
import CodableSyncProtocol
import Foundation

/// A push on behalf of an account is authorized on what its saves will write, inside its
/// transaction, before anything is written:
///
/// 1. **The graph each change writes**: the change's row with its links, and every related value
///    the save creates (one the server does not have) with its links, at any depth. A related value
///    the server has is kept as it is (a graph save only creates missing ones), so what it links
///    is not written.
/// 2. **Owners first**: a row the push creates inside another account's value (an item added to a
///    list shared with the pusher) is that value's owner's, and so on down the graph; every other
///    row it creates is the pushing account's.
/// 3. **Each change's row**: it must be writable (owned, or shared read-write); a row no account
///    owns (written by server-side code) is read-only to every account, and never claimed.
/// 4. **Each link written** (one the stored row does not have already): to a row the push creates,
///    it must have its linking value's owner; to a row the server has, the account must be able to
///    write it and it must have the linking value's owner. A value may only hold its owner's rows,
///    so no push can carry a row into a structure that keeps it after a share ends, turn a
///    read-only share into write access, or claim a row another account (or the server) uses.
///
/// A change that fails any of it is refused alone as ``SyncRefusal/Reason/forbidden``, telling
/// nothing of the rows involved beyond their ids.
extension ServerPush {
    /// The most rows one change's graph may reach: a value nested deeper or wider is refused
    /// (its walk and its checks would be the server's cost, not the device's).
    static let maximumGraphRows = 10_000

    /// A link a change's save writes: from a row it writes to a related row.
    private struct Link {
        let from: SyncedModel.Row
        let to: SyncedModel.Row
    }

    /// Refuses the changes the account may not make (see the extension's overview), and records
    /// the rows each change creates with their owners (``claimed``, ``created``).
    mutating func authorize(_ changes: [Change]) async throws {
        guard let account else { return }
        // 1. Every row each change's value reaches, with the values that hold them.
        var graphs: [SyncedModel.Row: [(row: SyncedModel.Row, value: any Model)]] = [:]
        var rows: Set<SyncedModel.Row> = []
        for change in changes {
            rows.insert(change.row)
            guard refused[change.row] == nil, let value = change.value else { continue }
            var reached: [(row: SyncedModel.Row, value: any Model)] = [(change.row, value)]
            var seen: Set<SyncedModel.Row> = [change.row]
            var index = 0
            while index < reached.count {
                let (_, holder) = reached[index]
                index += 1
                guard let model = models.first(where: { $0.table == Swift.type(of: holder).tableName }) else { continue }
                for related in model.relatedValues(holder) where seen.insert(related.row).inserted {
                    reached.append(related)
                }
                if reached.count > Self.maximumGraphRows { break }
            }
            if reached.count > Self.maximumGraphRows {
                refuse(change, .forbidden, "\(change.model.name) \(change.id) holds more than \(Self.maximumGraphRows) related values")
                continue
            }
            graphs[change.row] = reached
            rows.formUnion(reached.map(\.row))
        }
        let scopes = ServerScopes(models: models)
        let access = try await scopes.access(tx, account: account, rows: rows.map { (serverRow($0).table, serverRow($0).id) })
        // Rows without an owner: the server has them (server-side code wrote them), or the push creates them.
        var existing: Set<SyncedModel.Row> = []
        for model in models {
            let ownerless = rows.filter { $0.table == model.table && access.owners[serverRow($0)] == nil }
            guard !ownerless.isEmpty else { continue }
            let found = try await scopes.existing(tx, model, ids: ownerless.map { serverRow($0).id })
            existing.formUnion(ownerless.filter { found.contains(serverRow($0).id) })
        }
        func owner(_ row: SyncedModel.Row) -> String? { access.owners[serverRow(row)] }
        /// Whether `row` is the push's to create: the server does not have it and no one owns it.
        func isNew(_ row: SyncedModel.Row) -> Bool { !existing.contains(row) && owner(row) == nil }

        // 2. The links each change's save writes: its own, and those of the values it creates.
        var links: [SyncedModel.Row: [Link]] = [:]
        for change in changes {
            guard let graph = graphs[change.row] else { continue }
            let values = Dictionary(graph.map { ($0.row, $0.value) }, uniquingKeysWith: { first, _ in first })
            var writtenRows: [SyncedModel.Row] = [change.row], index = 0
            var queued: Set<SyncedModel.Row> = [change.row]
            var changeLinks: [Link] = []
            while index < writtenRows.count {
                let from = writtenRows[index]
                index += 1
                guard let value = values[from], let model = models.first(where: { $0.table == from.table }) else { continue }
                for related in model.related(value) {
                    changeLinks.append(Link(from: from, to: related))
                    // A related value the server has is kept as it is: what it links is not written.
                    if isNew(related), queued.insert(related).inserted { writtenRows.append(related) }
                }
            }
            links[change.row] = changeLinks
            created[change.row] = Set(writtenRows.dropFirst())
        }

        // 3. Owners of the rows the push creates: a row created inside another account's value is
        // that account's (down the graph); the others are the pusher's.
        var owners: [SyncedModel.Row: String] = [:]
        func ownerOf(_ row: SyncedModel.Row) -> String? { owner(row) ?? owners[row] }
        var settled = false
        while !settled {
            settled = true
            for change in changes {
                for link in links[change.row] ?? [] where isNew(link.to) && owners[link.to] == nil {
                    if let from = ownerOf(link.from), from != account {
                        owners[link.to] = from
                        settled = false
                    }
                }
            }
        }
        for row in rows where isNew(row) && owners[row] == nil { owners[row] = account }

        /// A link to a row the push creates needs the same owner on both ends; to a row the server
        /// has, write access to it as well (never a row no account owns).
        func isAllowed(_ link: Link) -> Bool {
            isNew(link.to)
                ? ownerOf(link.to) == ownerOf(link.from)
                : access.inScope[serverRow(link.to)] == true && owner(link.to) != nil && owner(link.to) == ownerOf(link.from)
        }

        // 4. Each change's row, then each link its save writes.
        var refusedLinks: [SyncedModel.Row: Link] = [:]
        for change in changes {
            switch access.inScope[serverRow(change.row)] {
            case true? where owner(change.row) != nil:
                readable.insert(change.row)
            // Forbidden whatever else is wrong with the change (a value the server cannot
            // decode says nothing then of whether the row exists).
            case true?:
                readable.insert(change.row)
                refused[change.row] = (.forbidden, "\(change.model.name) \(change.id) was written by the server, not by an account: it is read-only to \(account)")
                continue
            case false?:
                readable.insert(change.row)
                refused[change.row] = (.forbidden, "\(change.model.name) \(change.id) is shared with \(account) read-only")
                continue
            case nil:
                guard isNew(change.row) else {
                    refused[change.row] = (.forbidden, "\(change.model.name) \(change.id) is not \(account)'s to change")
                    continue
                }
            }
            guard refused[change.row] == nil else { continue }
            if let link = (links[change.row] ?? []).first(where: { !isAllowed($0) }) { refusedLinks[change.row] = link }
        }
        // A link the stored row has already is not written by the save (an unchanged to-one to a
        // row the server linked, say): only the links the save adds are refused.
        for model in models {
            let suspects = changes.filter { $0.model.table == model.table && refusedLinks[$0.row] != nil && !isNew($0.row) }
            let stored = suspects.isEmpty ? [:] : try await model.serverValues(tx, suspects.map(\.id))
            for change in changes where change.model.table == model.table {
                guard var link = refusedLinks[change.row] else { continue }
                if let current = stored[change.id] {
                    let had = Set(model.related(current))
                    // Only links from the change's own row can be stored already.
                    let remaining = (links[change.row] ?? []).filter { candidate in
                        !(candidate.from == change.row && had.contains(candidate.to)) && !isAllowed(candidate)
                    }
                    guard let first = remaining.first else { continue }
                    link = first
                }
                refuse(change, .forbidden, """
                    \(change.model.name) \(change.id) links \(link.to.table) \(link.to.id)\(link.from == change.row ? "" : " through \(link.from.table) \(link.from.id)"), \
                    which \(account) may not link there: a value may link only rows its owner owns and the account can write
                    """)
            }
        }
        claimed = owners
    }
}
#endif
