import Foundation

/// The sync protocol over HTTP: its routes and the bodies that are not a push's or a pull's.
/// The server's side is `SyncHTTPEndpoint` (CodableSyncServer), the device's `HTTPSyncTransport`
/// (CodableSyncClient); `openapi.yaml` (served by `todo serve` at `/sync/openapi.yaml`) documents
/// the same for clients in other languages.
///
/// Sendable: a namespace.
public enum SyncHTTP {
    /// The routes, under a prefix of the app's choosing (`/sync/push`, …).
    public enum Route: String, Sendable, CaseIterable, CustomStringConvertible {
        /// `POST` a ``SyncPush``, answered with a ``SyncPushResult``.
        case push
        /// `POST` a ``SyncPull``, answered with a ``SyncPullResult``.
        case pull
        /// `POST` ``WaitRequest``: answers ``WaitResult`` once the server may have changes after
        /// the version given, or after the timeout (long polling).
        case wait
        /// `POST` ``ShareRequest``: shares a row the account owns.
        case share
        /// `POST` ``ShareRequest``: ends a share of a row the account owns.
        case unshare
        /// `GET`: the token's account, `{"account": name}`.
        case account
        /// `GET`: the shares offered to the account and not accepted yet, `[SyncPendingShare]`
        /// (see `SyncHTTPEndpoint.sharesNeedAcceptance`).
        case offers
        /// `POST` ``ShareRequest`` (`account`: the offering owner): accepts an offered share.
        case accept
        /// `POST` ``ShareRequest`` (`account`: the offering owner): declines an offered share.
        case decline

        /// The HTTP method.
        public var method: String { self == .account || self == .offers ? "GET" : "POST" }
        public var description: String { rawValue }
    }

    /// The body of ``Route/wait``.
    package struct WaitRequest: Codable, Sendable {
        /// The version the device pulled last.
        package var after: Int64
        /// How long to wait at most, in seconds (1 to 60; 25 when absent).
        package var timeout: Double?
        package init(after: Int64, timeout: Double? = nil) {
            self.after = after
            self.timeout = timeout
        }
    }

    /// The answer of ``Route/wait``.
    package struct WaitResult: Codable, Sendable {
        /// Whether the server may have changes for the device (it pulls then).
        package var changed: Bool
        package init(changed: Bool) { self.changed = changed }
    }

    /// The body of ``Route/share`` and ``Route/unshare``.
    package struct ShareRequest: Codable, Sendable {
        package var table: String
        package var id: String
        /// The account to share with (or to stop sharing with).
        package var account: String
        /// `read` or `readWrite` (the default), for ``Route/share``.
        package var access: SyncAccess?
        package init(table: String, id: String, account: String, access: SyncAccess? = nil) {
            self.table = table
            self.id = id
            self.account = account
            self.access = access
        }
    }

    /// An error answer's body: `{"error": code, "message": …}` (the code is a ``SyncError/Code``'s
    /// name, or one of the HTTP layer's: `bodyTooLarge`, `requestTimeout`, `tooManyRequests`,
    /// `unavailable`, `serverError`).
    package struct Failure: Codable, Sendable, Hashable {
        /// A stable code.
        package let error: String
        /// What happened, in words.
        package let message: String
        package init(error: String, message: String) {
            self.error = error
            self.message = message
        }
    }
}

extension SyncHTTP.ShareRequest {
    /// The request, once its names are within the protocol's sizes (the share, unshare, accept
    /// and decline routes).
    package func validated() throws -> Self {
        guard table.utf8.count <= 255, id.utf8.count <= 1000, account.utf8.count <= 400 else {
            throw SyncError(.invalidArgument, "a share's table, id or account is longer than the protocol allows")
        }
        guard !(table + id + account).utf8.contains(0) else {
            throw SyncError(.invalidArgument, "a share's table, id or account holds a NUL character")
        }
        return self
    }
}

/// An account on a sync server: whose rows a device pulls, and which it may write. The server
/// knows it from the request (a bearer token, `Postgres.SyncServer.authenticate(token:)`),
/// never from the request's body.
///
/// ```swift
/// let account = try await syncServer.authenticate(token: bearerToken)
/// let answer = try await syncServer.transport(for: account).pull(request)
/// ```
///
/// Sendable: a plain value.
public struct SyncAccount: Codable, Sendable, Hashable, CustomStringConvertible {
    public let name: String
    public init(_ name: String) { self.name = name }
    public var description: String { name }
}

/// What a share lets its account do with the shared value and every row it links.
///
/// ```swift
/// try await syncServer.share(groceries, with: bob, access: .read, by: alice)
/// ```
///
/// Sendable: a plain enum.
public enum SyncAccess: String, Codable, Sendable, Hashable {
    /// Pull the rows; pushes that change them are refused (``SyncRefusal/Reason/forbidden``).
    case read
    /// Pull and change them.
    case readWrite
}

/// A share offered to an account and not accepted yet (`Postgres.SyncServer.offerShare(_:with:access:by:)`):
/// its rows reach the account only once it accepts.
///
/// ```swift
/// for offer in try await syncServer.pendingShares(for: bob) where offer.from == alice {
///     try await syncServer.acceptShare(table: offer.table, id: offer.id, from: offer.from, as: bob)
/// }
/// ```
///
/// Sendable: plain values.
public struct SyncPendingShare: Codable, Sendable, Hashable {
    /// The shared row's table.
    public let table: String
    /// The shared row's id, as devices write it (`UUID.uuidString`).
    public let id: String
    /// The account that offers it (the row's owner).
    public let from: SyncAccount
    /// What the share will allow.
    public let access: SyncAccess
    /// When it was offered.
    public let created: Date

    package init(table: String, id: String, from: SyncAccount, access: SyncAccess, created: Date) {
        self.table = table
        self.id = id
        self.from = from
        self.access = access
        self.created = created
    }
}
