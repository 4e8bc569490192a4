import CodableSyncProtocol
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The server has no event stream (an older server: 404): the device long-polls instead.
struct EventsUnavailable: Error {}

extension HTTPSyncTransport {
    /// Listens to the server's event stream (`GET …/events?after=VERSION`, server-sent events)
    /// until it ends, calling `onChange` for each `changed` event. Throws ``EventsUnavailable``
    /// when the server has no such route, what a refused request means otherwise (as the other
    /// routes' answers do), or ``Failure`` when the stream breaks or goes silent past a minute
    /// (the server says something every 30 s at most).
    func listenForEvents(_ onChange: @escaping @Sendable () -> Void) async throws {
        let origin = try checkedOrigin()
        var components = URLComponents(url: server.appendingPathComponent("events"), resolvingAgainstBaseURL: false)
        components?.queryItems = [URLQueryItem(name: "after", value: String(lastVersion.value.version))]
        guard let url = components?.url else { throw EventsUnavailable() }
        // The interval allowed between two pieces of the answer: keep-alives come every 30 s at most.
        var request = URLRequest(url: url, timeoutInterval: 60)
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        let running = RunningRequest()
        let connection = connection, server = server
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let task = connection.session.dataTask(with: request)
                let listener = EventListener(origin: origin, server: server, onChange: onChange, continuation)
                connection.collector.listeners.withLock { $0[task.taskIdentifier] = listener }
                running.start(task)
            }
        } onCancel: {
            running.cancel()
        }
    }
}

/// One event stream's parser, fed by the session's delegate: splits the answer into events (a
/// blank line ends one), calls back for each `changed` one, and ends the listening call once.
///
/// Sendable: its state is behind a lock.
final class EventListener: Sendable {
    private struct State {
        var buffer = Data()
        var continuation: CheckedContinuation<Void, any Error>?
        /// Why the stream is refused, once it is.
        var refusal: (any Error)?
    }

    /// The most one event may take before its blank line (the server's are a few dozen bytes).
    static let maximumEventSize = 64 << 10

    private let state: Locked<State>
    private let origin: Origin
    private let server: URL
    private let onChange: @Sendable () -> Void

    init(origin: Origin, server: URL, onChange: @escaping @Sendable () -> Void, _ continuation: CheckedContinuation<Void, any Error>) {
        state = Locked(State(continuation: continuation))
        self.origin = origin
        self.server = server
        self.onChange = onChange
    }

    /// Takes a piece of the answer; `false` when the stream is refused (the caller cancels it).
    func receive(_ data: Data, response: URLResponse?) -> Bool {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        var changes = 0
        let accepted = state.withLock { state -> Bool in
            guard state.refusal == nil else { return false }
            guard status == 200, Origin(response?.url) == origin else {
                state.refusal = refusal(status: status, body: data)
                return false
            }
            state.buffer.append(data)
            while let end = Self.eventEnd(in: state.buffer) {
                let event = String(decoding: state.buffer[state.buffer.startIndex..<end.lowerBound], as: UTF8.self)
                state.buffer.removeSubrange(state.buffer.startIndex..<end.upperBound)
                if event.split(whereSeparator: \.isNewline).contains(where: { $0.trimmingCharacters(in: .whitespaces) == "event: changed" }) {
                    changes += 1
                }
            }
            guard state.buffer.count <= Self.maximumEventSize else {
                state.refusal = SyncError(.invalidAnswer, "the sync server's event stream sent an event over \(Self.maximumEventSize) bytes: refused")
                return false
            }
            return true
        }
        for _ in 0..<changes { onChange() }
        return accepted
    }

    /// The stream ended: by the server, the network, a refusal or cancellation.
    func end(_ error: (any Error)?, response: URLResponse?) {
        let (continuation, refusal) = state.withLock { state in
            defer { state.continuation = nil }
            return (state.continuation, state.refusal)
        }
        guard let continuation else { return }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        if let refusal {
            continuation.resume(throwing: refusal)
        } else if response != nil, status != 200 {
            continuation.resume(throwing: self.refusal(status: status, body: Data()))
        } else if let error {
            continuation.resume(throwing: HTTPSyncTransport.Failure(
                status: nil, message: "the sync server's event stream at \(server.absoluteString) broke: \(error.localizedDescription)"))
        } else {
            continuation.resume()
        }
    }

    /// The range of the first event's end (`\n\n`, or `\r\n\r\n`) in `buffer`.
    private static func eventEnd(in buffer: Data) -> Range<Data.Index>? {
        let lf = buffer.firstRange(of: Data("\n\n".utf8)), crlf = buffer.firstRange(of: Data("\r\n\r\n".utf8))
        switch (lf, crlf) {
        case let (lf?, crlf?): return lf.lowerBound <= crlf.lowerBound ? lf : crlf
        case let (lf, crlf): return lf ?? crlf
        }
    }

    /// What an answer other than a stream means: no such route (an older server), or what the
    /// other routes' refusals mean.
    private func refusal(status: Int, body: Data) -> any Error {
        let failure = try? JSONDecoder().decode(SyncHTTP.Failure.self, from: body.prefix(1 << 20))
        let message = String((failure?.message ?? "").prefix(2_000))
        switch status {
        case 404, 405: return EventsUnavailable()
        case 401: return SyncError(.unauthorized, "the sync server refused the token: \(message)")
        case 403: return SyncError(.forbidden, message)
        case 200: return SyncError(.invalidAnswer, "the sync server's event stream was redirected away from \(origin): refused")
        default: return HTTPSyncTransport.Failure(status: status, message: "the sync server refused the event stream: \(message)")
        }
    }
}
