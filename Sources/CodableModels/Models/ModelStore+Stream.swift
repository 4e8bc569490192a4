import Foundation

/// How a stream reads a filter's values in batches (``ModelStore/values(with:batchSize:)``), the
/// same on every engine: a filter without sorts or a page is read in id order, each batch after
/// the last id seen (a keyset: every batch costs the same, however far the stream has gone); a
/// sorted or paged one is read by pages of its order (each batch skips the rows before it).
package struct StreamBatches<T: Model>: Sendable {
    let filter: Filter<T>
    let batchSize: Int
    /// Where the next batch starts: after this id (keyset), or at this offset into the order.
    private var lastID: StoredValue?
    private var offset = 0
    private(set) var isFinished = false

    package init(filter: Filter<T>, batchSize: Int) {
        self.filter = filter
        self.batchSize = batchSize
    }

    private var usesKeys: Bool { filter.sorts.isEmpty && filter.paging == nil }

    /// The filter of the next batch, or `nil` when the stream has ended.
    package func next() throws -> Filter<T>? {
        if let error = filter.error { throw error }
        guard batchSize > 0 else {
            throw ModelError(.invalidArgument, T.self, "a stream's batch size is \(batchSize); it must be 1 or more")
        }
        guard !isFinished else { return nil }
        let id = ColumnReference(column: ModelReflection.idName, jsonPath: [])
        if usesKeys {
            var next = filter
            if let lastID {
                let after = FilterTree.condition(id, .compare(">", lastID))
                next.tree = next.tree.map { .and($0, after) } ?? after
            }
            next.sorts = [(id, true)]
            next.paging = (batchSize, 0)
            return next
        }
        // Within the filter's own page, if it has one.
        let window = filter.paging ?? (count: Int.max, offset: 0)
        let remaining = window.count - offset
        guard remaining > 0 else { return nil }
        var next = filter
        let (start, overflow) = window.offset.addingReportingOverflow(offset)
        next.paging = (min(batchSize, remaining), overflow ? Int.max : start)
        return next
    }

    /// Takes note of a batch read with ``next()``'s filter.
    package mutating func read(_ batch: [T]) throws {
        offset += batch.count
        if batch.count < batchSize { isFinished = true }
        if usesKeys, let last = batch.last {
            lastID = try ValueEncoder.value(for: last.id, at: .root, options: EncodingOptions())
        }
    }
}

/// The values a filter matches, read a batch at a time as they are iterated: memory holds one
/// batch, however many values match (``ModelStore/values(with:batchSize:)``).
///
/// Sendable: yes.
public struct ModelValues<T: Model & Sendable>: AsyncSequence, Sendable {
    public typealias Element = T
    /// The store's `get(with:)`.
    let read: @Sendable (Filter<T>) async throws -> [T]
    let batches: StreamBatches<T>

    /// Reads the next batch when the current one is used up.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let read: @Sendable (Filter<T>) async throws -> [T]
        var batches: StreamBatches<T>
        var buffer: [T] = []
        var index = 0

        /// The next value, reading the next batch first when needed; `nil` after the last.
        public mutating func next() async throws -> T? {
            while index == buffer.count {
                try Task.checkCancellation()
                guard let filter = try batches.next() else { return nil }
                buffer = try await read(filter)
                index = 0
                try batches.read(buffer)
                if buffer.isEmpty { return nil }
            }
            defer { index += 1 }
            return buffer[index]
        }
    }

    /// An iterator that starts at the first batch (each iteration reads the values again).
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(read: read, batches: batches) }
}

extension ModelStore {
    /// The values a filter matches, in its order, read `batchSize` at a time while you iterate:
    /// memory holds one batch, however many values match.
    ///
    /// ```swift
    /// for try await order in db.values(with: Filter(#Predicate<Order> { $0.freight > 100 })) {
    ///     total += order.freight
    /// }
    /// ```
    ///
    /// A filter without sorts or a page is read in id order, each batch after the last id seen,
    /// so every batch costs the same; a sorted or paged filter is read by pages of its order. Each
    /// batch is its own read: a value changed while the stream runs may be seen before or after
    /// the change (run it in ``inTransaction(_:)`` for one snapshot). Leaving the loop, or
    /// cancelling its task, stops the reading. A batch size under 1 throws
    /// `ModelError.Code.invalidArgument`.
    public func values<T: Model & Sendable>(with filter: Filter<T>, batchSize: Int = 500) -> ModelValues<T> {
        ModelValues(read: { try await self.get(with: $0) }, batches: StreamBatches(filter: filter, batchSize: batchSize))
    }
}
