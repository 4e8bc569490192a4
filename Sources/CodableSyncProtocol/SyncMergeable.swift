import CodableModels
import Foundation

/// A synced model whose concurrent changes are merged, rather than the last writer's value
/// replacing the row whole.
///
/// When a device's push reaches the server after another writer changed the same row, the
/// server calls ``merge(_:with:changed:)`` and keeps what it returns; every device then pulls
/// that value. The default merges field by field: the properties the device changed come from
/// the device, every other property keeps the server's value. So an edit of a note's text on one
/// device and of its `done` flag on another both survive:
///
/// ```swift
/// struct Note: UUIDModel, SyncMergeable { let id: UUID; var text: String; var done: Bool }
/// ```
///
/// Or write the merge yourself:
///
/// ```swift
/// struct Tags: Model, SyncMergeable {
///     var id: String
///     var names: Set<String>
///     static func merge(_ device: Tags, with server: Tags, changed: Set<String>?) throws -> Tags {
///         Tags(id: device.id, names: device.names.union(server.names))
///     }
/// }
/// ```
///
/// The merge runs on the server (in ``Postgres/SyncServer``, in the push's transaction), so the
/// server's build must have the same conformance. The overwritten value is still reported on
/// the pushing device's ``SQLite/Sync/states`` as a ``SQLite/Sync/Conflict`` whose
/// ``SQLite/Sync/Conflict/wasMerged`` is `true`.
public protocol SyncMergeable: Model {
    /// The value to keep when `device`'s change reaches the server after another writer changed
    /// the row to `server`.
    ///
    /// - Parameter changed: the properties the device changed since its last answered push
    ///   (their coding keys; a to-many relationship by its property name), or `nil` when it does
    ///   not know them (it made the row here).
    static func merge(_ device: Self, with server: Self, changed: Set<String>?) throws -> Self
}

extension SyncMergeable {
    /// Field by field: the properties in `changed` from `device`, the others from `server`; all of
    /// `device` when `changed` is `nil`. Works on the values' `Codable` forms (their top-level
    /// keys).
    public static func merge(_ device: Self, with server: Self, changed: Set<String>?) throws -> Self {
        guard let changed else { return device }
        let encoder = SyncJSON.encoder()
        guard var merged = try JSONSerialization.jsonObject(with: encoder.encode(server)) as? [String: Any],
              let mine = try JSONSerialization.jsonObject(with: encoder.encode(device)) as? [String: Any] else {
            throw SyncError(.mergeFailed, """
                \(Self.self) cannot be merged field by field: its Codable form is not an object with a key per property. \
                Implement SyncMergeable.merge(_:with:changed:).
                """)
        }
        for key in changed {
            merged[key] = mine[key]   // a key the device's value lacks (a nil optional) is removed
        }
        return try SyncJSON.decoder().decode(Self.self, from: JSONSerialization.data(withJSONObject: merged))
    }

    /// The merge, for values the sync engine holds as `any Model`.
    package static func mergeAny(_ device: any Model, with server: any Model, changed: Set<String>?) throws -> any Model {
        guard let device = device as? Self, let server = server as? Self else {
            throw SyncError(.mergeFailed, "\(Self.self).merge was given a \(type(of: device)) and a \(type(of: server))")
        }
        return try merge(device, with: server, changed: changed)
    }
}
