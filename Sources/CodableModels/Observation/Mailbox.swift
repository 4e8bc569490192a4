import Foundation

/// Where an observation leaves what it produced until its consumer asks for it: elements (the
/// newest only, or every one in order), then the end, with or without an error.
package final class Mailbox<Element: Sendable>: @unchecked Sendable {  // all state is guarded by `lock`
    package enum Policy {
        /// A slow consumer gets the newest element; older ones not yet taken are replaced.
        case newestOnly
        /// Every element, in order.
        case everyElement
    }

    private let lock = NSLock()
    private let policy: Policy
    private var elements: [Element] = []
    private var failure: (any Error)?
    private var closed = false
    private var waiter: CheckedContinuation<Element?, any Error>?

    package init(_ policy: Policy) {
        self.policy = policy
    }

    /// Whether the producer is done (the consumer may still have elements to take).
    package var isClosed: Bool { lock.withLock { closed } }

    /// Hands an element to the consumer, or keeps it for the consumer's next call.
    package func put(_ element: Element) {
        let waiting = lock.withLock { () -> CheckedContinuation<Element?, any Error>? in
            guard !closed else { return nil }
            if let waiter {
                self.waiter = nil
                return waiter
            }
            if policy == .newestOnly { elements.removeAll() }
            elements.append(element)
            return nil
        }
        waiting?.resume(returning: element)
    }

    /// Ends the mailbox: the consumer takes what is left, then gets `error`, or `nil`.
    /// - Returns: whether this call closed it (`false` when it was closed already).
    @discardableResult
    package func close(with error: (any Error)?) -> Bool {
        let (waiting, didClose) = lock.withLock { () -> (CheckedContinuation<Element?, any Error>?, Bool) in
            guard !closed else { return (nil, false) }
            closed = true
            let waiting = waiter
            waiter = nil
            if waiting == nil { failure = error }
            return (waiting, true)
        }
        if let waiting {
            if let error { waiting.resume(throwing: error) } else { waiting.resume(returning: nil) }
        }
        return didClose
    }

    /// The next element, waiting for one; `nil` once closed and empty, or when the calling task
    /// is cancelled, which also calls `onCancel`.
    package func take(onCancel: @escaping @Sendable () -> Void) async throws -> Element? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Element?, any Error>) in
                let ready = lock.withLock { () -> Result<Element?, any Error>? in
                    if !elements.isEmpty { return .success(elements.removeFirst()) }
                    if let failure {
                        self.failure = nil
                        return .failure(failure)
                    }
                    if closed || Task.isCancelled { return .success(nil) }
                    waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            onCancel()
        }
    }
}
